// Hybrid input quantization, operation for operation as the x86 PyPI TFLite does it: every
// float rounding there can flip one int8 value, which moves an output by a quantization step.
//
// Those builds compile TFLite's NEON tensor utils through an SSE translation layer, so
// (Neon)SymmetricQuantizeFloats / AsymmetricQuantizeFloats run with two rounding paths:
//  - the vector body (the first n & ~7 values): p = x * inv; trunc(p + (p < 0 ? -0.5f : 0.5f)),
//    the addition rounded to float first (so p = 0.49999997 gives 1, not 0);
//  - the scalar tail: std::round(p), half away from zero, exact.
// The asymmetric form adds the zero point to the rounded integer (round(zp + p) differs at
// halves and when zp + p rounds in float), and takes rmax - rmin in float before the double
// division by 255 (about a quarter of the rows with a negative minimum get a scale one ulp
// off otherwise). Measured against every hybrid op's temporaries (quantized input, scale, zero
// point) of the tflite fixtures over 10,000 rows: no difference left.
#include "tflite/kernels/quantize_rows.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tickinfer::tfl::kernels {

namespace {

// Values this far out saturate whatever the zero point; clamping before the integer conversion
// keeps huge values and NaN defined (NaN goes to the low end, as the SSE conversion does);
// the conversion truncates toward zero.
constexpr float kSaturate = 1024.0f;

inline int32_t to_int(float v) noexcept {
  // Plain comparisons (not fmin) so the loops vectorize; NaN fails the first test.
  const float c = v > -kSaturate ? (v < kSaturate ? v : kSaturate) : -kSaturate;
  return static_cast<int32_t>(c);
}

// The vector-body rounding: add +-0.5 in float, then truncate toward zero (the conversion).
inline int32_t round_body(float p) noexcept {
  const float half = p < 0.0f ? -0.5f : 0.5f;
  return to_int(p + half);
}

// The tail rounding: exact half-away-from-zero, to_int(std::round(p)) without the libm call the
// baseline build makes of std::round: inside the saturation bounds the conversion truncates and
// p - trunc(p) is exact (|p| < 2^23), so one step away from zero where it is at least a half is
// round's result; outside them (NaN to the low end) the bound, as to_int gives it.
inline int32_t round_tail(float p) noexcept {
  if (!(p > -kSaturate)) return static_cast<int32_t>(-kSaturate);
  if (!(p < kSaturate)) return static_cast<int32_t>(kSaturate);
  const int32_t t = static_cast<int32_t>(p);
  const float f = p - static_cast<float>(t);
  return t + (f >= 0.5f ? 1 : 0) - (f <= -0.5f ? 1 : 0);
}

// std::round of a finite v with |v| < 2^31, likewise without the call (v - trunc(v) is exact in
// double below 2^52).
inline int32_t round_half_away(double v) noexcept {
  const int32_t t = static_cast<int32_t>(v);
  const double f = v - static_cast<double>(t);
  return t + (f >= 0.5 ? 1 : 0) - (f <= -0.5 ? 1 : 0);
}

}  // namespace

// lo = min and hi = max of x[0, n) folded onto the given starting values, as the loop
//   for (i) { lo = std::min(lo, x[i]); hi = std::max(hi, x[i]); }
// computes it, but in 8 independent lanes: one serial chain costs 3 cycles per value, 8 lanes
// (minps/maxps where SSE2 is there) an eighth of that. The result is the same: min and
// max of numbers do not depend on order; a NaN never replaces a lane's value (x < lo is false),
// just as in the loop; a NaN start value stays NaN in every lane, as it does in the loop; and
// the sign of a zero can differ only between +0 and -0 found in different lanes, which the
// callers do not see (a start of +0 is never replaced by -0; the symmetric range takes fabs).
void min_max_portable(const float* x, int n, float* lo, float* hi) noexcept {
  alignas(16) float l[8], h[8];
  int i = 0;
#if defined(__SSE2__)
  // minps(x, l) is x < l ? x : l and maxps(x, h) is x > h ? x : h: the loop's std::min/max.
  __m128 l0 = _mm_set1_ps(*lo), l1 = l0, h0 = _mm_set1_ps(*hi), h1 = h0;
  for (; i + 8 <= n; i += 8) {
    const __m128 a = _mm_loadu_ps(x + i), b = _mm_loadu_ps(x + i + 4);
    l0 = _mm_min_ps(a, l0);
    l1 = _mm_min_ps(b, l1);
    h0 = _mm_max_ps(a, h0);
    h1 = _mm_max_ps(b, h1);
  }
  _mm_store_ps(l, l0);
  _mm_store_ps(l + 4, l1);
  _mm_store_ps(h, h0);
  _mm_store_ps(h + 4, h1);
#else
  for (int j = 0; j < 8; ++j) {
    l[j] = *lo;
    h[j] = *hi;
  }
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) {
      l[j] = std::min(l[j], x[i + j]);
      h[j] = std::max(h[j], x[i + j]);
    }
  }
#endif
  for (; i < n; ++i) {
    l[0] = std::min(l[0], x[i]);
    h[0] = std::max(h[0], x[i]);
  }
  for (int j = 0; j < 8; ++j) {
    *lo = std::min(*lo, l[j]);
    *hi = std::max(*hi, h[j]);
  }
}

void quantize_row_body_portable(const float* x, int n, float inv, int32_t zp, int32_t lo, int32_t hi,
                                int8_t* q) noexcept {
  for (int i = 0; i < n; ++i) q[i] = static_cast<int8_t>(std::clamp(round_body(x[i] * inv) + zp, lo, hi));
}

const QuantizeRowKernels& quantize_row_kernels(::tickinfer::kernels::Isa isa) noexcept {
  static constexpr QuantizeRowKernels kScalar{quantize_row_body_portable, min_max_portable};
  ::tickinfer::kernels::IsaVariants<const QuantizeRowKernels*> table;
  table.scalar = &kScalar;
#if defined(TICKINFER_HAVE_X86)
  static constexpr QuantizeRowKernels kAvx2{quantize_row_body_avx2, min_max_avx2};
  static constexpr QuantizeRowKernels kAvx512{quantize_row_body_avx512, min_max_avx512};
  table.avx2 = &kAvx2;
  table.avx512 = &kAvx512;
#endif
  return *table.pick(isa);
}

namespace {

// Rounds x[i] * inv, adds zp, clamps to [lo, hi] and stores the int8 results.
inline void quantize_values(const QuantizeRowKernels& k, const float* x, int n, float inv, int32_t zp, int32_t lo,
                            int32_t hi, int8_t* q) noexcept {
  const int body = n & ~7;
  k.body(x, body, inv, zp, lo, hi, q);
  for (int i = body; i < n; ++i) {
    q[i] = static_cast<int8_t>(std::clamp(round_tail(x[i] * inv) + zp, lo, hi));
  }
}

}  // namespace

float quantize_row_symmetric(const QuantizeRowKernels& k, const float* x, int n, int8_t* q) noexcept {
  float lo = x[0], hi = x[0];
  k.min_max(x + 1, n - 1, &lo, &hi);
  constexpr int32_t kScale = 127;
  const float range = std::max(std::fabs(lo), std::fabs(hi));
  if (range == 0.0f) {
    std::memset(q, 0, static_cast<size_t>(n));
    return 1.0f;
  }
  const float inv = static_cast<float>(kScale) / range;  // multiply by the inverse, as TFLite does
  quantize_values(k, x, n, inv, 0, -kScale, kScale, q);
  return range / static_cast<float>(kScale);
}

void quantize_row_asymmetric(const QuantizeRowKernels& k, const float* x, int n, int8_t* q, float* scale,
                             int32_t* zero_point) noexcept {
  constexpr int32_t kMin = -128, kMax = 127;
  const double qmin = kMin, qmax = kMax;
  float lo = 0.0f, hi = 0.0f;  // the range always holds 0
  k.min_max(x, n, &lo, &hi);
  if (lo == hi) {
    std::memset(q, 0, static_cast<size_t>(n));
    *scale = 1.0f;
    *zero_point = 0;
    return;
  }
  const double rmin = lo, rmax = hi;
  const double s = static_cast<double>(hi - lo) / (qmax - qmin);  // hi - lo rounds in float
  const double zp_from_min = qmin - rmin / s;
  const double zp_from_max = qmax - rmax / s;
  const double err_min = std::fabs(qmin) + std::fabs(rmin / s);
  const double err_max = std::fabs(qmax) + std::fabs(rmax / s);
  const double zp_double = err_min < err_max ? zp_from_min : zp_from_max;
  int32_t zp = 0;
  if (zp_double <= qmin) {
    zp = kMin;
  } else if (zp_double >= qmax) {
    zp = kMax;
  } else if (zp_double == zp_double) {  // NaN (from NaN inputs) keeps 0
    zp = round_half_away(zp_double);
  }
  *scale = static_cast<float>(s);
  *zero_point = zp;
  const float inv = static_cast<float>(1.0 / static_cast<double>(*scale));
  quantize_values(k, x, n, inv, zp, kMin, kMax, q);
}

}  // namespace tickinfer::tfl::kernels
