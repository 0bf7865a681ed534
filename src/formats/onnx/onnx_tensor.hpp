#pragma once
// Decoding of ONNX TensorProto values (initializers, Constant attributes) into plain arrays:
// float tensors (FLOAT, DOUBLE narrowed) and the integer tensors shape operands use (INT64,
// INT32, INT8/16, UINT8/16, BOOL), from raw_data, the typed fields or an external data file.
//
// External data: the `location` key is a path relative to the model file's directory; an
// absolute path or one with a ".." component is refused (a model must not read files outside
// its own directory). `offset` and `length` are decimal; the range is checked against the
// file's size before anything is read, and `length` must equal the tensor's byte size.
#include <cstdint>
#include <string>
#include <vector>

namespace onnx {
class TensorProto;
}

namespace tickinfer::formats::onnx_import {

struct Tensor {
  std::vector<int64_t> dims;
  bool is_float = false;        // float data in `f`, else integer data in `i`
  std::vector<float> f;
  std::vector<int64_t> i;
  int64_t size() const { return is_float ? static_cast<int64_t>(f.size()) : static_cast<int64_t>(i.size()); }
  double at(int64_t k) const { return is_float ? f[k] : static_cast<double>(i[k]); }
};

// Where external data files are looked up: the model file's directory ("" when the model came
// from memory, in which case external data is refused).
struct TensorSource {
  std::string label;      // the model file, first in every error message
  std::string model_dir;
};

// `what` names the tensor in errors (e.g. "initializer 'W0'"). Throws tickinfer::Error.
Tensor decode_tensor(const onnx::TensorProto& t, const TensorSource& src, const std::string& what);

const char* dtype_name(int data_type);

}  // namespace tickinfer::formats::onnx_import
