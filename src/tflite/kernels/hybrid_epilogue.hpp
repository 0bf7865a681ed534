#pragma once
// The float end of a hybrid (dynamic-range) FULLY_CONNECTED row, in TFLite's operation order:
//   dot = acc[o]                                          (symmetric input quantization)
//   dot = (int32)((float)acc[o] - (float)row_sums[o] * zp)   (asymmetric: TFLite's float offset)
//   y[o] = clamp(y[o] + (float)dot * (row_scale * filter_scale[o]), lo, hi)
// with clamp(v) = std::min(std::max(v, lo), hi) (NaN stays NaN). y[o] holds the bias (or 0) on
// entry. The AVX2 variant does the same float operations lane by lane (no FMA), so it equals the
// portable one bit for bit. noexcept, no allocation, any units >= 0.
#include <cstdint>

#include "kernels/isa_variants.hpp"

namespace tickinfer::tfl::kernels {

struct HybridRow {
  const int32_t* acc;
  const int32_t* row_sums;  // nullptr: symmetric (no zero-point term)
  float zero_point;         // the row's input zero point, as a float
  float row_scale;
  const float* filter_scale;
  float lo, hi;
};

using HybridEpilogueFn = void (*)(const HybridRow& r, int units, float* y) noexcept;
void hybrid_epilogue_portable(const HybridRow& r, int units, float* y) noexcept;
#if defined(__x86_64__)
void hybrid_epilogue_avx2(const HybridRow& r, int units, float* y) noexcept;
#endif
// The family's table: scalar (the portable loop) and avx2; portable falls back to scalar and
// avx512 to avx2 (kernels/isa_variants.hpp). isa: resolved by the caller. Prepare time only.
HybridEpilogueFn hybrid_epilogue(::tickinfer::kernels::Isa isa) noexcept;

}  // namespace tickinfer::tfl::kernels
