#pragma once
// A TensorFlow tensor value as the SavedModel importer handles it: a constant from the graph, a
// variable from the checkpoint, or an intermediate of the constant folder. Numeric values are held
// as double whatever the dtype (float32 values convert exactly; integer shape arithmetic fits),
// shapes in full TF form (batch dimension included).
#include <cstdint>
#include <string>
#include <vector>

namespace tensorflow {
class TensorProto;
class TensorShapeProto;
}

namespace tickinfer::formats {

// DataType numbers of tensorflow/core/framework/types.proto.
enum TfDtype : int { kTfFloat = 1, kTfDouble = 2, kTfInt32 = 3, kTfUint8 = 4, kTfInt16 = 5, kTfInt8 = 6,
                     kTfString = 7, kTfInt64 = 9, kTfBool = 10, kTfHalf = 19, kTfResource = 20, kTfVariant = 21 };

const char* tf_dtype_name(int dtype);

// An integer operand (shape, axis, index) held as double: throws std::invalid_argument for a
// non-finite or non-representable value instead of an undefined conversion (the SavedModel
// importer reports it as a malformed file).
int64_t tf_to_int(double v);  // "float32", "int32", ... "dtype 42"

struct TfTensor {
  int dtype = kTfFloat;
  std::vector<int64_t> shape;   // {} is a scalar
  std::vector<double> values;   // row-major, size == element_count(shape); empty for strings
  std::vector<std::string> strings = {};  // kTfString only: row-major, size == element_count(shape)

  int64_t size() const;
  bool is_integer() const { return dtype == kTfInt32 || dtype == kTfInt64 || dtype == kTfInt16 || dtype == kTfInt8 || dtype == kTfUint8 || dtype == kTfBool; }
};

// The largest tensor the importer holds (64 Mi elements); bigger shapes count as unknown, so a
// hostile file cannot make it allocate without bound.
constexpr int64_t kTfMaxElements = int64_t{1} << 26;
int64_t tf_element_count(const std::vector<int64_t>& shape);  // -1 if unknown or above kTfMaxElements
std::string tf_shape_str(const std::vector<int64_t>& shape);   // "[-1,10]"
std::vector<int64_t> tf_shape_of(const tensorflow::TensorShapeProto& shape);  // unknown rank -> {}

// A Const node's value (tensor_content or the typed *_val list, whose last element repeats).
// Throws tickinfer::Error starting with `where` on an unsupported dtype or inconsistent size.
TfTensor tf_tensor_from_proto(const tensorflow::TensorProto& proto, const std::string& where);

// Little-endian raw bytes of `count` elements of `dtype` -> doubles.
std::vector<double> tf_decode_raw(int dtype, const char* data, size_t bytes, int64_t count, const std::string& where);

}  // namespace tickinfer::formats
