// The plain reference int8 kernels: straight loops from the formulas (interop facts, section 6).
// Every SIMD variant is tested against these bit for bit.
#include <algorithm>
#include <cstring>

#include "tflite/fixed_point.hpp"
#include "tflite/kernels/gemv_s8.hpp"

namespace tickinfer::tfl::kernels {

void pack_s8_rows(const int8_t* w, int rows, int cols, int8_t* packed) noexcept {
  const size_t stride = static_cast<size_t>(s8_row_stride(cols));
  std::memset(packed, 0, stride * static_cast<size_t>(rows));
  for (int r = 0; r < rows; ++r) {
    std::memcpy(packed + static_cast<size_t>(r) * stride, w + static_cast<size_t>(r) * cols,
                static_cast<size_t>(cols));
  }
}

void pack_s8_quad_blocks(const int8_t* w, int rows, int cols, int8_t* packed) noexcept {
  const int stride = s8_quad_stride(cols);
  std::memset(packed, 0, static_cast<size_t>(s8_padded_rows(rows)) * static_cast<size_t>(stride));
  for (int r = 0; r < rows; ++r) {
    int8_t* block = packed + static_cast<size_t>(r / kS8BlockRows) * kS8BlockRows * stride;
    for (int c = 0; c < cols; ++c) {
      const int q = c / 4;
      block[static_cast<size_t>(q) * 32 + (r % kS8BlockRows) * 4 + c % 4] = w[static_cast<size_t>(r) * cols + c];
    }
  }
}

bool s8_reaches_minus_128(const int8_t* w, size_t n) noexcept {
  for (size_t i = 0; i < n; ++i) {
    if (w[i] == -128) return true;
  }
  return false;
}

void row_sums_s8(const int8_t* w, int rows, int cols, int32_t* sums) noexcept {
  for (int r = 0; r < rows; ++r) {
    int32_t s = 0;
    for (int c = 0; c < cols; ++c) s += w[static_cast<size_t>(r) * cols + c];
    sums[r] = s;
  }
}

void gemv_s8s8_s32_scalar(const int8_t* w, int rows, int stride, const int8_t* x,
                          int32_t* acc) noexcept {
  for (int r = 0; r < rows; ++r) {
    const int8_t* row = w + static_cast<size_t>(r) * stride;
    // uint32 accumulation: int32 wrap-around without undefined behaviour.
    uint32_t s = 0;
    for (int c = 0; c < stride; ++c) {
      s += static_cast<uint32_t>(static_cast<int32_t>(row[c]) * static_cast<int32_t>(x[c]));
    }
    acc[r] = static_cast<int32_t>(s);
  }
}

void gemm_s8s8_s32_scalar(const int8_t* w, int rows, int stride, const int8_t* x, int n, int32_t* acc) noexcept {
  const size_t acc_step = static_cast<size_t>(s8_padded_rows(rows));
  for (int p = 0; p < n; ++p) {
    gemv_s8s8_s32_scalar(w, rows, stride, x + static_cast<size_t>(p) * stride, acc + static_cast<size_t>(p) * acc_step);
  }
}

template <Rounding R>
void requantize_s32_to_s8_scalar(const int32_t* acc, int rows, const RequantParams& p,
                                 int8_t* y) noexcept {
  for (int r = 0; r < rows; ++r) {
    int32_t a = acc[r];
    if (p.bias) a = static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(p.bias[r]));
    int32_t v = multiply_by_quantized_multiplier<R>(a, p.multiplier[r], p.shift[r]);
    v += p.output_zero_point;
    v = std::clamp(v, p.act_min, p.act_max);
    y[r] = static_cast<int8_t>(v);
  }
}

template void requantize_s32_to_s8_scalar<Rounding::Double>(const int32_t*, int, const RequantParams&,
                                                            int8_t*) noexcept;
template void requantize_s32_to_s8_scalar<Rounding::Single>(const int32_t*, int, const RequantParams&,
                                                            int8_t*) noexcept;

}  // namespace tickinfer::tfl::kernels
