#include "formats/savedmodel/tf_tensor.hpp"

#include <cstring>
#include <stdexcept>

#include "tensorflow/core/framework/tensor.pb.h"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

const char* tf_dtype_name(int dtype) {
  switch (dtype) {
    case kTfFloat: return "float32";
    case kTfDouble: return "float64";
    case kTfInt32: return "int32";
    case kTfUint8: return "uint8";
    case kTfInt16: return "int16";
    case kTfInt8: return "int8";
    case kTfString: return "string";
    case kTfInt64: return "int64";
    case kTfBool: return "bool";
    case kTfHalf: return "float16";
    case 14: return "bfloat16";
    case kTfResource: return "resource";
    case kTfVariant: return "variant";
    default: {
      static thread_local std::string s;
      s = "dtype " + std::to_string(dtype);
      return s.c_str();
    }
  }
}

int64_t tf_to_int(double v) {
  if (!(v >= -9.0e15 && v <= 9.0e15)) throw std::invalid_argument("integer operand out of range");
  return static_cast<int64_t>(v);
}

int64_t TfTensor::size() const { return tf_element_count(shape); }

int64_t tf_element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d != 0 && n > kTfMaxElements / d) return -1;  // absurd sizes count as unknown
    n *= d;
  }
  return n;
}

std::string tf_shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::vector<int64_t> tf_shape_of(const tensorflow::TensorShapeProto& shape) {
  std::vector<int64_t> out;
  for (const auto& d : shape.dim()) out.push_back(d.size());
  return out;
}

namespace {

template <typename T>
void decode_as(const char* data, int64_t count, std::vector<double>& out) {
  for (int64_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, data + i * sizeof(T), sizeof(T));
    out.push_back(static_cast<double>(v));
  }
}

size_t dtype_bytes(int dtype) {
  switch (dtype) {
    case kTfFloat: case kTfInt32: return 4;
    case kTfDouble: case kTfInt64: return 8;
    case kTfInt16: return 2;
    case kTfInt8: case kTfUint8: case kTfBool: return 1;
    default: return 0;
  }
}

}  // namespace

std::vector<double> tf_decode_raw(int dtype, const char* data, size_t bytes, int64_t count, const std::string& where) {
  const size_t width = dtype_bytes(dtype);
  if (width == 0) throw Error(where + ": tensors of dtype " + tf_dtype_name(dtype) + " are not supported");
  if (count < 0 || bytes != width * static_cast<size_t>(count)) {
    throw Error(where + ": " + std::to_string(bytes) + " data bytes for " + std::to_string(count) + " " +
                tf_dtype_name(dtype) + " elements");
  }
  std::vector<double> out;
  out.reserve(static_cast<size_t>(count));
  switch (dtype) {
    case kTfFloat: decode_as<float>(data, count, out); break;
    case kTfDouble: decode_as<double>(data, count, out); break;
    case kTfInt32: decode_as<int32_t>(data, count, out); break;
    case kTfInt64: decode_as<int64_t>(data, count, out); break;
    case kTfInt16: decode_as<int16_t>(data, count, out); break;
    case kTfInt8: decode_as<int8_t>(data, count, out); break;
    default: decode_as<uint8_t>(data, count, out); break;  // uint8, bool
  }
  return out;
}

namespace {

template <typename List>
std::vector<double> expand_vals(const List& list, int64_t count, const std::string& where) {
  std::vector<double> out;
  if (list.empty()) {
    out.assign(static_cast<size_t>(count), 0.0);
    return out;
  }
  if (static_cast<int64_t>(list.size()) > count) throw Error(where + ": more values than the shape holds");
  out.reserve(static_cast<size_t>(count));
  for (const auto& v : list) out.push_back(static_cast<double>(v));
  while (static_cast<int64_t>(out.size()) < count) out.push_back(out.back());  // the last repeats
  return out;
}

}  // namespace

TfTensor tf_tensor_from_proto(const tensorflow::TensorProto& proto, const std::string& where) {
  TfTensor t;
  t.dtype = proto.dtype();
  if (proto.tensor_shape().unknown_rank()) throw Error(where + ": constant of unknown rank");
  t.shape = tf_shape_of(proto.tensor_shape());
  const int64_t count = tf_element_count(t.shape);
  if (count < 0) throw Error(where + ": constant shape " + tf_shape_str(t.shape) + " is not fully known");
  if (t.dtype == kTfString) {  // example keys and class labels (tf_lower_example.cpp)
    const auto& list = proto.string_val();
    if (static_cast<int64_t>(list.size()) > count) throw Error(where + ": more values than the shape holds");
    t.strings.assign(list.begin(), list.end());
    while (static_cast<int64_t>(t.strings.size()) < count) t.strings.push_back(list.empty() ? std::string() : t.strings.back());
    return t;
  }
  if (!proto.tensor_content().empty()) {
    t.values = tf_decode_raw(t.dtype, proto.tensor_content().data(), proto.tensor_content().size(), count, where);
    return t;
  }
  switch (t.dtype) {
    case kTfFloat: t.values = expand_vals(proto.float_val(), count, where); break;
    case kTfDouble: t.values = expand_vals(proto.double_val(), count, where); break;
    case kTfInt32: case kTfInt16: case kTfInt8: case kTfUint8: t.values = expand_vals(proto.int_val(), count, where); break;
    case kTfInt64: t.values = expand_vals(proto.int64_val(), count, where); break;
    case kTfBool: t.values = expand_vals(proto.bool_val(), count, where); break;
    default: throw Error(where + ": constants of dtype " + std::string(tf_dtype_name(t.dtype)) + " are not supported");
  }
  return t;
}

}  // namespace tickinfer::formats
