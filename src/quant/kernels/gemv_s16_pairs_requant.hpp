#pragma once
// FULLY_CONNECTED int8 in one pass: the pair-block gemv (quant/kernels/gemv_s16_pairs.hpp) with
// the requantization applied to each block's 8 accumulators while they are still in registers,
// single rounding (TFLite's TFLITE_SINGLE_ROUNDING MultiplyByQuantizedMultiplier, which the PyPI
// interpreters use for FULLY_CONNECTED):
//   y[r] = clamp(((acc[r] + bias[r]) * m[r] + 2^(t[r]-1)) >> t[r]  + zp, lo, hi),  t = 31 - shift.
// Everything per row that does not depend on the input (bias, multiplier, the 64-bit shift
// counts and rounding constants) is laid out at prepare in the order the vector code loads it, so
// a block's requantization is about 16 instructions. Results equal requantize_s32_to_s8_scalar
// <Rounding::Single> of the plain gemv bit for bit.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "quant/kernels/gemv_s16_pairs.hpp"

namespace tickinfer::quant::kernels {

// Per block of 8 rows, kPairRequantWords int64 words (see pack_pair_requant_single).
inline constexpr int kPairRequantWords = 4 * 8;

struct PairRequantSingle {
  std::vector<int64_t> per_block;  // blocks * kPairRequantWords
  int32_t output_zero_point = 0, act_min = -128, act_max = 127;
};

// bias may be nullptr; multiplier/shift per row (shift in [-31, 30]: t = 31 - shift in [1, 62]).
PairRequantSingle pack_pair_requant_single(int rows, const int32_t* bias, const int32_t* multiplier,
                                           const int32_t* shift, int32_t zp, int32_t act_min, int32_t act_max);

// y[0, rows) from the packed weights and widened input as gemv_s16_pairs_*.
using GemvS16PairsRequantFn = void (*)(const int16_t* packed, int blocks, int pairs, const int16_t* xw,
                                       const PairRequantSingle& q, int rows, int8_t* y) noexcept;
#if defined(__x86_64__)
void gemv_s16_pairs_requant_single_avx2(const int16_t* packed, int blocks, int pairs, const int16_t* xw,
                                        const PairRequantSingle& q, int rows, int8_t* y) noexcept;
// x [cols] int8 -> int16 (AVX2), zero padded to 2 * column_pairs(cols); same as widen_s8_to_s16_pairs.
void widen_s8_to_s16_pairs_avx2(const int8_t* x, int cols, int16_t* xw) noexcept;
#endif

}  // namespace tickinfer::quant::kernels
