#pragma once
// TFLite's float LOGISTIC (reference_ops::Logistic): 1 above the upper bound, exp(x) below the
// lower one (so exp never overflows), else 1 / (1 + exp(-x)), exp being std::exp. Each value's
// result depends on that value alone, so any split of a tensor gives the same bits.
#include <cmath>
#include <cstdint>

#include "tflite/kernels/platform_expf.hpp"

namespace tickinfer::tfl::kernels {

inline constexpr float kLogisticUpper = 16.619047164916992188f;
inline constexpr float kLogisticLower = -9.0f;

// One value: the scalar form, and the vector forms' lanes that std::exp's replica leaves to it.
inline float logistic_one(float v) noexcept {
  const float e = std::exp(v < kLogisticLower ? v : -v);
  return v > kLogisticUpper ? 1.0f : (v < kLogisticLower ? e : 1.0f / (1.0f + e));
}

// The same over n values, one family: the scalar form is logistic_one per value; the AVX2 and
// AVX-512 forms run the whole formula in the vector (exp through platform_expf.hpp's replicas)
// and are picked where their std::exp reproduces this process's. x and y may alias.
// noexcept, no allocation.
using LogisticArrayFn = void (*)(const float* x, float* y, int n) noexcept;
void logistic_array_scalar(const float* x, float* y, int n) noexcept;
#if defined(TICKINFER_HAVE_X86)
void logistic_array_avx2(const float* x, float* y, int n) noexcept;
void logistic_array_avx512(const float* x, float* y, int n) noexcept;  // platform_expf_avx512.cpp
#endif
// Prepare time (the first call runs expf_array's check).
LogisticArrayFn logistic_array(::tickinfer::kernels::Isa isa) noexcept;

}  // namespace tickinfer::tfl::kernels
