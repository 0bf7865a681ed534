#pragma once
// The integer LSTM's prepare-time operand reads (ops/lstm/sequence_lstm_int8.cpp): per-tensor
// scales and zero points, type checks naming the operand, constant data, and the cell state's
// power-of-two scale. Nothing here runs in eval.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tflite/prepared_op.hpp"

namespace tickinfer::tfl::ops::lstm {

inline const Tensor& tensor_of(const PrepareContext& ctx, int index) {
  return ctx.program.tensors[static_cast<size_t>(index)];
}

// A per-tensor scale (and zero point) of an operand; fails for missing or per-axis parameters.
inline float scale_of(const PrepareContext& ctx, int index, const char* what, int32_t* zero_point = nullptr) {
  const Tensor& t = tensor_of(ctx, index);
  if (t.quant.scale.size() != 1 || !(t.quant.scale[0] > 0.0f) || !std::isfinite(t.quant.scale[0])) {
    ctx.fail(std::string(what) + " ('" + t.name + "') needs one positive per-tensor scale for the integer LSTM" +
             (t.quant.scale.size() > 1 ? " (per-axis quantization is not supported here)" : ""));
  }
  if (zero_point) {
    const int64_t z = t.quant.zero_point.empty() ? 0 : t.quant.zero_point[0];
    if (z < -128 || z > 127) {
      ctx.fail(std::string(what) + " ('" + t.name + "') has zero point " + std::to_string(z) + " outside the int8 range");
    }
    *zero_point = static_cast<int32_t>(z);
  }
  return t.quant.scale[0];
}

inline void require(const PrepareContext& ctx, int index, DType type, const char* what) {
  const Tensor& t = tensor_of(ctx, index);
  if (t.type != type) {
    ctx.fail(std::string("integer LSTM: ") + what + " ('" + t.name + "') is " + dtype_name(t.type) + ", expected " +
             dtype_name(type));
  }
}

template <class T>
std::vector<T> constant_values(const Tensor& t) {
  std::vector<T> v(t.data.size() / sizeof(T));
  std::memcpy(v.data(), t.data.data(), v.size() * sizeof(T));
  return v;
}

// TFLite's CheckedLog2: the power of two a cell-state scale must be.
inline bool checked_log2(float x, int* result) {
  const float l = std::log(x) * (1.0f / std::log(2.0f));
  const float r = std::round(l);
  *result = static_cast<int>(r);
  return std::fabs(l - r) < 1e-3f;
}

}  // namespace tickinfer::tfl::ops::lstm
