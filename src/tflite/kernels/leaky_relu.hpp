#pragma once
// TFLite's float LEAKY_RELU: y = x > 0 ? x : x * alpha, as a select of the two values made for
// every element (a branch per element of random sign mispredicts half the time). NaN is not > 0,
// so it takes x * alpha, a NaN, as the reference does. The AVX2 variant is the same select on 8
// lanes: the same bits. noexcept, no allocation, x and y may alias.
#include <cstdint>

#include "kernels/isa_variants.hpp"

namespace tickinfer::tfl::kernels {

using LeakyReluFn = void (*)(const float* x, float* y, int64_t n, float alpha) noexcept;
void leaky_relu_scalar(const float* x, float* y, int64_t n, float alpha) noexcept;
#if defined(__x86_64__)
void leaky_relu_avx2(const float* x, float* y, int64_t n, float alpha) noexcept;
#endif
// The family's table: scalar and avx2; portable falls back to scalar and avx512 to avx2
// (kernels/isa_variants.hpp). isa: resolved by the caller. Prepare time only.
LeakyReluFn leaky_relu(::tickinfer::kernels::Isa isa) noexcept;

}  // namespace tickinfer::tfl::kernels
