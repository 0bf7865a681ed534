#pragma once
// TFLite's float LOGISTIC (reference_ops::Logistic) over n values: 1 above the upper bound,
// exp(x) below the lower one (so exp never overflows), else 1 / (1 + exp(-x)), the exponentials
// through the vector std::exp (platform_expf.hpp, bit for bit), 64 values at a time. Each value's
// result depends on that value alone, so any split of a tensor gives the same bits. x and y may
// alias (each element is read before its result is written). noexcept, no allocation.
#include <algorithm>
#include <cstdint>

#include "tflite/kernels/platform_expf.hpp"

namespace tickinfer::tfl::kernels {

inline constexpr float kLogisticUpper = 16.619047164916992188f;
inline constexpr float kLogisticLower = -9.0f;

inline void logistic_f32(ExpfArrayFn expf, const float* x, float* y, int64_t n) noexcept {
  float e[64];
  for (int64_t i0 = 0; i0 < n; i0 += 64) {
    const int m = static_cast<int>(std::min<int64_t>(64, n - i0));
    for (int i = 0; i < m; ++i) e[i] = x[i0 + i] < kLogisticLower ? x[i0 + i] : -x[i0 + i];
    expf(e, e, m);
    for (int i = 0; i < m; ++i) {
      const float v = x[i0 + i];
      y[i0 + i] = v > kLogisticUpper ? 1.0f : (v < kLogisticLower ? e[i] : 1.0f / (1.0f + e[i]));
    }
  }
}

// The same over n values (int, as the other array forms), one family: the scalar form is
// logistic_f32 with the scalar std::exp; the AVX2 and AVX-512 forms run the whole formula in the
// vector and are picked where their std::exp reproduces this process's.
using LogisticArrayFn = void (*)(const float* x, float* y, int n) noexcept;
void logistic_array_scalar(const float* x, float* y, int n) noexcept;
#if defined(TICKINFER_HAVE_X86)
void logistic_array_avx2(const float* x, float* y, int n) noexcept;
void logistic_array_avx512(const float* x, float* y, int n) noexcept;  // platform_expf_avx512.cpp
#endif
// Prepare time (the first call runs expf_array's check).
LogisticArrayFn logistic_array(::tickinfer::kernels::Isa isa) noexcept;

}  // namespace tickinfer::tfl::kernels
