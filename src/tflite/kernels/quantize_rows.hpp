#pragma once
// Per-row float -> int8 quantization of hybrid (dynamic-range) op inputs, exactly as the x86
// TFLite builds compute it (interop facts, section 6, and docs/quantization.md "Hybrid input
// quantization"): those builds run TFLite's NEON tensor utils through an SSE translation, so
// the first (n & ~7) values and the rest of the row round differently, and the asymmetric
// range is taken in float. Used by hybrid FULLY_CONNECTED, CONV_2D and the hybrid LSTM.
// noexcept, no allocation; NaN inputs give defined (saturated) values, never UB.
#include <cstdint>

#include "kernels/isa_variants.hpp"

namespace tickinfer::tfl::kernels {

// The rounding loop of the first n & ~7 values (see quantize_row_body_portable below).
using QuantizeRowBodyFn = void (*)(const float* x, int n, float inv, int32_t zp, int32_t lo, int32_t hi,
                                   int8_t* q) noexcept;
// *lo = min(*lo, min x[0, n)), *hi = max(*hi, max x[0, n)) as the loop
//   for (i) { lo = std::min(lo, x[i]); hi = std::max(hi, x[i]); }
// computes them, in independent lanes (see quantize_rows.cpp, min_max_portable): min and max do
// not depend on order, a NaN never replaces a value, a NaN start stays NaN.
using MinMaxFn = void (*)(const float* x, int n, float* lo, float* hi) noexcept;
// One kernel set's forms of both loops.
struct QuantizeRowKernels {
  QuantizeRowBodyFn body;
  MinMaxFn min_max;
};
// The family's table: scalar (the portable loops), avx2 and avx512, equal bit for bit; portable
// falls back to scalar (kernels/isa_variants.hpp). isa: resolved by the caller. Prepare time
// only: the ops keep the result and pass it to the functions below.
const QuantizeRowKernels& quantize_row_kernels(::tickinfer::kernels::Isa isa) noexcept;

// range = max|x|; s = range / 127 and inv = 127 / range (both in float; an all-zero row gives
// s = 1, q = 0); p = x * inv in float; q = clamp(round_half_away(p), -127, 127) computed as
// trunc(p + (p < 0 ? -0.5f : 0.5f)), the sum rounded to float, for the first n & ~7 values, and as
// std::round(p) for the rest. Returns s.
float quantize_row_symmetric(const QuantizeRowKernels& k, const float* x, int n, int8_t* q) noexcept;

// rmin = min(0, min x), rmax = max(0, max x) (float); s = (double)(rmax - rmin) / 255 with the
// subtraction in float; zero point from the min or max side (smaller error, in double), nudged
// into [-128, 127] and rounded; inv = (float)(1.0 / (double)(float)s);
// q = clamp(zp + round_half_away(x * inv), -128, 127), rounded as in the symmetric case: the
// zero point is added after rounding, as an integer. An all-zero range gives s = 1, zp = 0, q = 0.
void quantize_row_asymmetric(const QuantizeRowKernels& k, const float* x, int n, int8_t* q, float* scale,
                             int32_t* zero_point) noexcept;

// The "first n & ~7 values" rounding above, as a loop over n values:
// q = clamp(trunc(sat(p + (p < 0 ? -0.5f : 0.5f))) + zp, lo, hi), p = x * inv, sat = the clamp to
// [-1024, 1024] with NaN to -1024.
void quantize_row_body_portable(const float* x, int n, float inv, int32_t zp, int32_t lo, int32_t hi, int8_t* q) noexcept;
void min_max_portable(const float* x, int n, float* lo, float* hi) noexcept;
#if defined(__x86_64__)
// The same for n a multiple of 8, 8 or 16 lanes at a time. Only call when the CPU has the ISA.
void quantize_row_body_avx2(const float* x, int n, float inv, int32_t zp, int32_t lo, int32_t hi, int8_t* q) noexcept;
void quantize_row_body_avx512(const float* x, int n, float inv, int32_t zp, int32_t lo, int32_t hi, int8_t* q) noexcept;
void min_max_avx2(const float* x, int n, float* lo, float* hi) noexcept;
void min_max_avx512(const float* x, int n, float* lo, float* hi) noexcept;
#endif

}  // namespace tickinfer::tfl::kernels
