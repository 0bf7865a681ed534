#pragma once
// std::tanh(float) bit for bit, many values at once: what TFLite's reference float TANH computes
// on this platform (the body of a converter's LSTM loop calls it on every gate), at vector speed.
//
// std::tanh(float) is glibc's tanhf, the fdlibm algorithm in single precision (read from Debian
// 12's libm, glibc 2.36, instruction by instruction; no FMA anywhere): |x| >= 22 gives +-1, 0
// gives x, |x| < 2^-55 gives x * (1 + x), else with t = expm1f(2|x|) (|x| >= 1) z = 1 - 2 / (t +
// 2), or with t = expm1f(-2|x|) z = -t / (t + 2), and the sign of x on z. expm1f reduces its
// argument by k ln 2 (k = +-1 from hi / lo constants up to 1.5 ln 2, else k = trunc(x / ln 2 +-
// 0.5) with ln 2 in two parts, keeping the reduction's rounding error c), evaluates a degree-5
// rational form in x^2 / 2, and rebuilds the result by k (k = 0, -1, 1 with two cases, k <= -2
// or k > 56, k <= 22, else), adding k to an exponent field. The AVX2 form computes every case
// tanh's arguments reach for eight lanes and keeps each lane's own; infinities and NaN call
// std::tanh.
//
// Whether it reproduces this process's std::tanh is checked once, on first use, on 2^16 values
// of every exponent; the scalar loop runs otherwise. quant_platform_expf_test compares it with
// std::tanh on every 61st float (all 4.3e9 with TICKINFER_EXHAUSTIVE=1). noexcept, no allocation;
// x and y may alias.
#include "kernels/isa_variants.hpp"

namespace tickinfer::tfl::kernels {

using TanhfArrayFn = void (*)(const float* x, float* y, int n) noexcept;

// y[i] = std::tanh(x[i]).
void tanhf_array_scalar(const float* x, float* y, int n) noexcept;
#if defined(TICKINFER_HAVE_X86)
void tanhf_array_avx2(const float* x, float* y, int n) noexcept;
void tanhf_array_avx512(const float* x, float* y, int n) noexcept;
#endif

// The vector form itself, unchecked: nullptr where none is built (not x86) or the CPU lacks AVX2.
// For the tests that compare it with the library function over every float.
TanhfArrayFn tanhf_array_vector_unchecked() noexcept;
// The AVX-512 form, unchecked: nullptr where the CPU lacks AVX-512 (or not x86).
TanhfArrayFn tanhf_array_avx512_unchecked() noexcept;

// The fastest form that reproduces std::tanh here, at or below `isa` (prepare time: the first
// call runs the check).
TanhfArrayFn tanhf_array(::tickinfer::kernels::Isa isa) noexcept;

}  // namespace tickinfer::tfl::kernels
