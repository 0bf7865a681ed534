#pragma once
// 256-entry int8 -> int8 lookup tables. Any elementwise int8 op whose output depends only on the
// input value is evaluated at prepare time for all 256 inputs with TFLite's exact formula, so eval
// is one table load per element and equals the reference bit for bit.
#include <cstdint>
#include <functional>

#include "kernels/isa_variants.hpp"

namespace tickinfer::tfl::kernels {

struct LutS8 {
  int8_t table[256];  // indexed by uint8_t(q)
};

// table[q] = f(q) for q in [-128, 127].
void build_lut_s8(const std::function<int8_t(int32_t)>& f, LutS8* lut);

// TFLite's LUTPopulate for a float transform: dequantize (in float), transform, multiply by
// 1/out_scale, round half away, add the zero point (in float), clamp to int8; NaN/inf -> -128.
void build_lut_s8_float(float in_scale, int32_t in_zp, float out_scale, int32_t out_zp,
                        float (*transform)(float), LutS8* lut);

inline void apply_lut_s8(const LutS8& lut, const int8_t* x, int8_t* y, int64_t n) noexcept {
  for (int64_t i = 0; i < n; ++i) y[i] = lut.table[static_cast<uint8_t>(x[i])];
}

// The same 64 bytes at a time with AVX-512 VBMI byte permutes (lut_avx512.cpp): the same bytes.
// x and y may alias. Only call where lut_s8_vbmi_supported().
// And 32 bytes at a time on AVX2 (lut_avx2.cpp): 16 byte shuffles, one per row of 16 entries.
#if defined(__x86_64__)
void apply_lut_s8_vbmi(const LutS8& lut, const int8_t* x, int8_t* y, int64_t n) noexcept;
void apply_lut_s8_avx2(const LutS8& lut, const int8_t* x, int8_t* y, int64_t n) noexcept;
#endif
bool lut_s8_vbmi_supported() noexcept;  // compiled in, and the CPU has AVX-512 F/BW and VBMI

// The family for an op: the VBMI form where `isa` resolves to avx512 and the CPU has VBMI, the
// AVX2 form where it resolves to avx2 (or to avx512 without VBMI), else the loop above. Prepare
// time only.
using ApplyLutS8Fn = void (*)(const LutS8& lut, const int8_t* x, int8_t* y, int64_t n) noexcept;
ApplyLutS8Fn apply_lut_s8_fn(::tickinfer::kernels::Isa isa) noexcept;

}  // namespace tickinfer::tfl::kernels
