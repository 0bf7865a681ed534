#pragma once
// Internal: 128-bit vector operations in GCC/Clang vector extensions, with no intrinsics and no
// ISA flags, so the same source compiles to SSE2 on baseline x86-64 and to NEON on AArch64 (and
// to whatever the target offers elsewhere). Include only from *_portable.cpp files. Same members
// as avx2::Simd / avx512::Simd (simd_avx2.hpp, simd_avx512.hpp); keep them in step.
//
// Why 16 bytes: it is the register width of both baseline targets, so every operation below
// maps to one instruction (or a short fixed sequence) there; wider generic vectors are split by
// the compiler and sometimes spilled.
//
// Differences from the x86 sets, all within the kernel tests' tolerances:
//  * fmadd/fnmadd are written as a multiply and an add. Baseline x86-64 has no FMA, so they round
//    twice there; AArch64 compilers may contract them into one fused instruction.
//  * round_nearest and ldexp use the 1.5 * 2^23 rounding trick instead of a convert instruction,
//    so they are exact only for |a| < 2^22 (vector_math.hpp clamps its arguments far below).

namespace tickinfer::kernels::portable {

struct Simd {
  typedef float V __attribute__((vector_size(16)));
  typedef int VI __attribute__((vector_size(16)));  // same lanes, as integers
  using M = VI;  // all-ones / all-zeros lanes, as vector comparisons produce
  static constexpr int kWidth = 4;

  static V set1(float v) { return V{v, v, v, v}; }
  static V zero() { return V{0.0f, 0.0f, 0.0f, 0.0f}; }
  // Unaligned load/store: memcpy of a whole vector compiles to one movups / ldr q.
  static V load(const float* p) {
    V v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(float* p, V v) { __builtin_memcpy(p, &v, sizeof v); }
  static V from_i32(const int32_t* p) {  // kWidth int32, converted
    VI v;
    __builtin_memcpy(&v, p, sizeof v);
    return __builtin_convertvector(v, V);
  }
  // Reads only p[0, n) (n in [0, 4]); other lanes get `fill`.
  static V load_partial(const float* p, int n, float fill = 0.0f) {
    V v = set1(fill);
    for (int i = 0; i < n; ++i) v[i] = p[i];
    return v;
  }
  // Writes only p[0, n) (n in [0, 4]).
  static void store_partial(float* p, V v, int n) {
    for (int i = 0; i < n; ++i) p[i] = v[i];
  }

  static V add(V a, V b) { return a + b; }
  static V sub(V a, V b) { return a - b; }
  static V mul(V a, V b) { return a * b; }
  static V div(V a, V b) { return a / b; }
  static V fmadd(V a, V b, V c) { return a * b + c; }   // a * b + c
  static V fnmadd(V a, V b, V c) { return c - a * b; }  // c - a * b

  // Ordered comparisons: false when either operand is NaN.
  static M lt(V a, V b) { return a < b; }
  static M gt(V a, V b) { return a > b; }
  static M ge(V a, V b) { return a >= b; }
  static V select(M m, V a, V b) {  // m ? a : b, as bit operations (a blend / bsl)
    return reinterpret_cast<V>((reinterpret_cast<VI>(a) & m) | (reinterpret_cast<VI>(b) & ~m));
  }

  // min/max return b when either operand is NaN (like minps/maxps): pass the data as b to
  // propagate NaN.
  static V min(V a, V b) { return select(a < b, a, b); }
  static V max(V a, V b) { return select(a > b, a, b); }
  static V abs(V a) { return reinterpret_cast<V>(reinterpret_cast<VI>(a) & kMagnitudeBits()); }
  static V sign_bits(V a) { return reinterpret_cast<V>(reinterpret_cast<VI>(a) & kSignBits()); }
  static V or_bits(V a, V b) {
    return reinterpret_cast<V>(reinterpret_cast<VI>(a) | reinterpret_cast<VI>(b));
  }
  static V neg(V a) { return reinterpret_cast<V>(reinterpret_cast<VI>(a) ^ kSignBits()); }

  // Nearest integer, ties to even, for |a| < 2^22: adding 1.5 * 2^23 leaves no fraction bits,
  // so the add rounds in the current (nearest-even) mode; subtracting it back is exact.
  // NaN stays NaN. Relies on IEEE evaluation (no -ffast-math, which would fold the pair away).
  static V round_nearest(V a) { return (a + set1(kRoundMagic)) - set1(kRoundMagic); }
  // p * 2^n for integral n in [-150, 128], in two exponent steps like avx2::Simd::ldexp, so
  // subnormal results round once and n = 128 overflows to inf. n is turned into an integer by
  // the same magic add (its low mantissa bits are n in two's complement): no float-to-int
  // conversion, whose out-of-range behaviour differs between targets.
  static V ldexp(V p, V n) {
    const VI ni =
        reinterpret_cast<VI>(n + set1(kRoundMagic)) - reinterpret_cast<VI>(set1(kRoundMagic));
    const VI half = ni >> 1;  // arithmetic shift: floor(n / 2)
    const VI rest = ni - half;
    const VI bias = VI{127, 127, 127, 127};
    const V s1 = reinterpret_cast<V>((half + bias) << 23);
    const V s2 = reinterpret_cast<V>((rest + bias) << 23);
    return (p * s1) * s2;
  }

  // p * 2^n for a normal result (avx2::Simd::ldexp_normal's contract): one integer add into
  // the exponent field, n converted by the magic add as in ldexp.
  static V ldexp_normal(V p, V n) {
    const VI ni =
        reinterpret_cast<VI>(n + set1(kRoundMagic)) - reinterpret_cast<VI>(set1(kRoundMagic));
    return reinterpret_cast<V>(reinterpret_cast<VI>(p) + (ni << 23));
  }

  // Pairwise, like the x86 sets: (a0 + a2) + (a1 + a3).
  static float reduce_add(V a) { return (a[0] + a[2]) + (a[1] + a[3]); }
  static float reduce_max(V a) {
    const float m02 = a[0] > a[2] ? a[0] : a[2];
    const float m13 = a[1] > a[3] ? a[1] : a[3];
    return m02 > m13 ? m02 : m13;
  }

 private:
  static constexpr float kRoundMagic = 12582912.0f;  // 1.5 * 2^23
  static VI kSignBits() { return VI{} + static_cast<int>(0x80000000u); }
  static VI kMagnitudeBits() { return VI{} + 0x7fffffff; }
};

}  // namespace tickinfer::kernels::portable
