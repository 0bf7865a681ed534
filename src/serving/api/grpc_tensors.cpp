#include "serving/api/grpc_tensors.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tickinfer::serving {

namespace {

grpc::Status status(grpc::StatusCode code, const std::string& message) { return grpc::Status(code, message); }

std::string shape_text(const std::vector<int64_t>& s) {
  std::string t = "[-1";
  for (int64_t d : s) {
    t += ',';
    t += std::to_string(d);
  }
  return t + "]";
}

}  // namespace

grpc::Status to_floats(const tensorflow::TensorProto& t, const TensorSpec& spec, const PredictLimits& limits,
                       std::vector<float>& out, int64_t& batch) {
  const auto& dims = t.tensor_shape().dim();
  const std::string name = "input '" + spec.name + "'";
  bool shape_ok = !t.tensor_shape().unknown_rank() && static_cast<size_t>(dims.size()) == spec.shape.size() + 1;
  for (size_t i = 0; shape_ok && i < spec.shape.size(); ++i) shape_ok = dims[static_cast<int>(i + 1)].size() == spec.shape[i];
  if (!shape_ok || dims[0].size() < 1) {
    std::string got = "[";
    for (int i = 0; i < dims.size(); ++i) {
      if (i) got += ',';
      got += std::to_string(dims[i].size());
    }
    return status(grpc::StatusCode::INVALID_ARGUMENT,
                  name + " must have shape " + shape_text(spec.shape) + "; got " + got + "]");
  }
  batch = dims[0].size();
  if (static_cast<uint64_t>(batch) > limits.max_batch) {
    return status(grpc::StatusCode::INVALID_ARGUMENT, "batch of " + std::to_string(batch) +
                                                          " exceeds this server's limit of " +
                                                          std::to_string(limits.max_batch));
  }
  const size_t n = static_cast<size_t>(batch) * spec.size;
  out.resize(n);
  const int dtype = t.dtype();
  auto wrong_count = [&](size_t have) {
    return status(grpc::StatusCode::INVALID_ARGUMENT, name + " holds " + std::to_string(have) +
                                                          " values; its shape needs " + std::to_string(n));
  };
  if (!t.tensor_content().empty()) {
    size_t width = 0;
    switch (dtype) {
      case tensorflow::DT_FLOAT: case tensorflow::DT_INT32: width = 4; break;
      case tensorflow::DT_DOUBLE: case tensorflow::DT_INT64: width = 8; break;
      case tensorflow::DT_INT16: case tensorflow::DT_UINT16: width = 2; break;
      case tensorflow::DT_INT8: case tensorflow::DT_UINT8: case tensorflow::DT_BOOL: width = 1; break;
      default:
        return status(grpc::StatusCode::INVALID_ARGUMENT,
                      name + ": dtype " + tensorflow::DataType_Name(static_cast<tensorflow::DataType>(dtype)) +
                          " cannot be converted to DT_FLOAT");
    }
    const std::string& c = t.tensor_content();
    if (c.size() != n * width) return wrong_count(c.size() / width);
    const char* p = c.data();
    for (size_t i = 0; i < n; ++i, p += width) {
      switch (dtype) {
        case tensorflow::DT_FLOAT: std::memcpy(&out[i], p, 4); break;
        case tensorflow::DT_INT32: { int32_t v; std::memcpy(&v, p, 4); out[i] = static_cast<float>(v); break; }
        case tensorflow::DT_DOUBLE: { double v; std::memcpy(&v, p, 8); out[i] = static_cast<float>(v); break; }
        case tensorflow::DT_INT64: { int64_t v; std::memcpy(&v, p, 8); out[i] = static_cast<float>(v); break; }
        case tensorflow::DT_INT16: { int16_t v; std::memcpy(&v, p, 2); out[i] = v; break; }
        case tensorflow::DT_UINT16: { uint16_t v; std::memcpy(&v, p, 2); out[i] = v; break; }
        case tensorflow::DT_INT8: out[i] = static_cast<int8_t>(*p); break;
        case tensorflow::DT_UINT8: out[i] = static_cast<uint8_t>(*p); break;
        default: out[i] = *p ? 1.0f : 0.0f;
      }
    }
  } else {
    auto fill = [&](const auto& vals) -> grpc::Status {
      const size_t have = static_cast<size_t>(vals.size());
      if (have == 1) {
        std::fill(out.begin(), out.end(), static_cast<float>(vals.Get(0)));
      } else if (have == n) {
        for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(vals.Get(static_cast<int>(i)));
      } else {
        return wrong_count(have);
      }
      return grpc::Status::OK;
    };
    grpc::Status s;
    switch (dtype) {
      case tensorflow::DT_FLOAT: s = fill(t.float_val()); break;
      case tensorflow::DT_DOUBLE: s = fill(t.double_val()); break;
      case tensorflow::DT_INT32: case tensorflow::DT_INT16: case tensorflow::DT_INT8:
      case tensorflow::DT_UINT8: case tensorflow::DT_UINT16: s = fill(t.int_val()); break;
      case tensorflow::DT_INT64: s = fill(t.int64_val()); break;
      case tensorflow::DT_BOOL: s = fill(t.bool_val()); break;
      default:
        return status(grpc::StatusCode::INVALID_ARGUMENT,
                      name + ": dtype " + tensorflow::DataType_Name(static_cast<tensorflow::DataType>(dtype)) +
                          " cannot be converted to DT_FLOAT");
    }
    if (!s.ok()) return s;
  }
  if (limits.nonfinite == NonFinitePolicy::Reject) {
    for (float v : out) {
      if (!std::isfinite(v)) {
        return status(grpc::StatusCode::INVALID_ARGUMENT,
                      name + " holds NaN or Infinity; this server refuses non-finite inputs (--nonfinite_inputs=reject)");
      }
    }
  }
  return grpc::Status::OK;
}

void fill_tensor_info(tensorflow::TensorInfo& info, const SignatureTensor& t) {
  info.set_name(t.tensor_name);
  info.set_dtype(static_cast<tensorflow::DataType>(t.dtype));
  auto* shape = info.mutable_tensor_shape();
  if (t.unknown_rank) {
    shape->set_unknown_rank(true);
    return;
  }
  for (int64_t d : t.shape) shape->add_dim()->set_size(d);
}

}  // namespace tickinfer::serving
