#pragma once
// std::exp(float) bit for bit, many values at once: what TFLite's reference float SOFTMAX (and
// the float kernels that call std::exp) compute on this platform, at vector speed.
//
// std::exp(float) is glibc's expf. On x86-64 glibc (2.28 on) picks, once per process, a variant
// compiled with FMA where the CPU has FMA and AVX2, which all our AVX2 and AVX-512 machines have.
// That variant (read from Debian 12's libm, glibc 2.36, instruction by instruction) works in
// double: kd = fma(32/ln2, x, 0x1.8p52) - 0x1.8p52 (round to an integer k), r = fma(32/ln2, x,
// -kd) (exact product), s = 2^(k/32) from a 32-entry table with k/32's integer part added to the
// exponent, y = fma(fma(C0, r, C1), r*r, fma(C2, r, 1)) * s, rounded to float. For |x| >= 88
// (the exponent field of x at or above 0x42b), NaN and infinities it takes other paths: below
// -0x1.9fe368p6 (and at -inf) the result is +0, anywhere else there std::exp itself is called.
//
// The AVX2 form does exactly that four doubles at a time; whether it reproduces this process's
// std::exp is checked once, on first use, on 2^16 values spread over every exponent (a libm with
// another algorithm fails it), and the scalar loop is used otherwise. tflite_kernels_expf_test
// compares it with std::exp on every float x <= 0 and up to 88 (exhaustively with
// TICKINFER_EXHAUSTIVE=1, every 61st float otherwise). noexcept, no allocation; x and y may alias.
#include "kernels/isa_variants.hpp"

namespace tickinfer::tfl::kernels {

using ExpfArrayFn = void (*)(const float* x, float* y, int n) noexcept;

// Whether `f` gives `libm`'s bits on 2^16 values: for every exponent field a sweep of mantissas,
// both signs (NaN results compare equal). The one-time check of every vector replica of a libm
// function (this one, platform_tanhf.hpp).
bool reproduces_libm(ExpfArrayFn f, float (*libm)(float)) noexcept;

// y[i] = std::exp(x[i]).
void expf_array_scalar(const float* x, float* y, int n) noexcept;
#if defined(TICKINFER_HAVE_X86)
void expf_array_avx2(const float* x, float* y, int n) noexcept;
void expf_array_avx512(const float* x, float* y, int n) noexcept;  // platform_expf_avx512.cpp
#endif

// The vector form itself, unchecked: nullptr where none is built (not x86) or the CPU lacks AVX2.
// For the tests that compare it with the library function over every float.
ExpfArrayFn expf_array_vector_unchecked() noexcept;
// The AVX-512 form, unchecked: nullptr where the CPU lacks AVX-512 (or not x86).
ExpfArrayFn expf_array_avx512_unchecked() noexcept;

// The fastest form that reproduces std::exp here, at or below `isa` (prepare time: the first call
// runs the check).
ExpfArrayFn expf_array(::tickinfer::kernels::Isa isa) noexcept;

// The double-precision constants of the algorithm above, shared by the forms and the test.
namespace platform_expf {
inline constexpr double kInvLn2N = 0x1.71547652b82fep+5;  // 32 / ln 2
inline constexpr double kShift = 0x1.8p+52;               // adding it rounds to an integer
inline constexpr double kC0 = 0x1.c6af84b912394p-5 / 32 / 32 / 32;
inline constexpr double kC1 = 0x1.ebfce50fac4f3p-3 / 32 / 32;
inline constexpr double kC2 = 0x1.62e42ff0c52d6p-1 / 32;
inline constexpr float kUnderflow = -0x1.9fe368p6f;  // below: +0
inline constexpr uint32_t kSpecialTop = 0x42b;       // exponent field of 88.0f: from here, other paths
// 2^(i/32) as the bits of a double, less i << 47 (the index's share of the exponent that the
// algorithm adds back), for i in [0, 32): computed once from exp2l.
const uint64_t* table() noexcept;
}  // namespace platform_expf

}  // namespace tickinfer::tfl::kernels
