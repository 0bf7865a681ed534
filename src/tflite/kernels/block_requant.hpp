#pragma once
// Single-rounding requantization constants laid out per block of 8 output rows, for gemv kernels
// that requantize a block's 8 accumulators while they are still in registers (TFLite's
// TFLITE_SINGLE_ROUNDING MultiplyByQuantizedMultiplier, which the PyPI interpreters use for
// FULLY_CONNECTED):
//   y[r] = clamp(((acc[r] + bias[r]) * m[r] + 2^(t[r]-1)) >> t[r]  + zp, lo, hi),  t = 31 - shift.
// Everything per row that does not depend on the input (bias, multiplier, the 64-bit shift
// counts and rounding constants) is laid out at prepare in the order the vector code loads it, so
// a block's requantization is about 16 instructions. Results equal requantize_s32_to_s8_scalar
// <Rounding::Single> of the plain gemv bit for bit.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tickinfer::tfl::kernels {

inline constexpr int kRequantBlockRows = 8;
// Per block of 8 rows, kBlockRequantWords int64 words (see pack_block_requant_single).
inline constexpr int kBlockRequantWords = 4 * 8;

struct BlockRequantSingle {
  std::vector<int64_t> per_block;  // ceil(rows / 8) * kBlockRequantWords
  int32_t output_zero_point = 0, act_min = -128, act_max = 127;
  // Every row's t >= 32 (multiplier below 0.5, the usual case) and int8 zero point and range: the
  // quotient is then the high
  // word of the rounded product shifted right by t - 32 in 32 bits, fewer instructions than the
  // general 64-bit shift (see block_requant.cpp for both layouts).
  bool high_word = false;
};

// bias may be nullptr; multiplier/shift per row (shift in [-31, 30]: t = 31 - shift in [1, 62]).
BlockRequantSingle pack_block_requant_single(int rows, const int32_t* bias, const int32_t* multiplier,
                                             const int32_t* shift, int32_t zp, int32_t act_min, int32_t act_max);

}  // namespace tickinfer::tfl::kernels
