// Prepare-time layout of the per-block requantization constants (block_requant.hpp).
#include "tflite/kernels/block_requant.hpp"

namespace tickinfer::tfl::kernels {

// General block layout, 8 groups of 4 int64 (one ymm each):
//   0: bias as 8 int32            1: multiplier as 8 int32
//   2: t of rows 0,2,4,6          3: t of rows 1,3,5,7           (64-bit shift counts)
//   4: 2^(t-1) + 2^62, even rows  5: the same, odd rows           (rounding + non-negative bias)
//   6: 2^(62-t), even rows        7: the same, odd rows           (the bias's share of the quotient)
// High-word layout (every t >= 32):
//   0: bias as 8 int32            1: multiplier as 8 int32 (even rows in the low words)
//   2: odd rows' multipliers in the low words of the 4 int64
//   3: 2^(t-1), even rows         4: the same, odd rows
//   5: t - 32 as 8 int32          6, 7: unused
// There |x * m| < 2^31 * 2^31 and 2^(t-1) <= 2^61, so the rounded product fits int64; its high
// word is floor((x m + 2^(t-1)) / 2^32), and an arithmetic shift by t - 32 floors again:
// floor(floor(v / 2^32) / 2^(t-32)) = floor(v / 2^t), TFLite's single-rounding result, which fits
// int32 because the multiplier is below 0.5.
BlockRequantSingle pack_block_requant_single(int rows, const int32_t* bias, const int32_t* multiplier,
                                             const int32_t* shift, int32_t zp, int32_t act_min, int32_t act_max) {
  BlockRequantSingle q;
  q.output_zero_point = zp;
  q.act_min = act_min;
  q.act_max = act_max;
  const int blocks = (rows + kRequantBlockRows - 1) / kRequantBlockRows;
  q.per_block.assign(static_cast<size_t>(blocks) * kBlockRequantWords, 0);
  // (The high-word kernels also clamp in int16 after a saturating pack: int8 ranges only.)
  q.high_word = zp >= -128 && zp <= 127 && act_min >= -128 && act_max <= 127 && act_min <= act_max;
  for (int r = 0; r < rows; ++r) q.high_word = q.high_word && 31 - shift[r] >= 32;
  if (q.high_word) {
    for (int b = 0; b < blocks; ++b) {
      int64_t* w = q.per_block.data() + static_cast<size_t>(b) * kBlockRequantWords;
      auto* w32 = reinterpret_cast<int32_t*>(w);
      for (int i = 0; i < kRequantBlockRows; ++i) {
        const int r = b * kRequantBlockRows + i;
        const int32_t m = r < rows ? multiplier[r] : 0;  // padding rows: 0, never stored
        const int t = r < rows ? 31 - shift[r] : 32;
        const int lane = i / 2, odd = i % 2;
        w32[i] = r < rows && bias ? bias[r] : 0;
        w32[8 + i] = m;
        if (odd) w32[16 + 2 * lane] = m;
        w[12 + 4 * odd + lane] = int64_t{1} << (t - 1);
        w32[40 + i] = t - 32;
      }
    }
    return q;
  }
  for (int b = 0; b < blocks; ++b) {
    int64_t* w = q.per_block.data() + static_cast<size_t>(b) * kBlockRequantWords;
    auto* w32 = reinterpret_cast<int32_t*>(w);
    for (int i = 0; i < kRequantBlockRows; ++i) {
      const int r = b * kRequantBlockRows + i;
      // Padding rows: multiplier 0 and t = 31 give a harmless 0 (never stored).
      const int32_t m = r < rows ? multiplier[r] : 0;
      const int t = r < rows ? 31 - shift[r] : 31;
      w32[i] = r < rows && bias ? bias[r] : 0;
      w32[8 + i] = m;
      const int lane = i / 2, odd = i % 2;
      w[8 + 4 * odd + lane] = t;
      w[16 + 4 * odd + lane] = (int64_t{1} << (t - 1)) + (int64_t{1} << 62);
      w[24 + 4 * odd + lane] = int64_t{1} << (62 - t);
    }
  }
  return q;
}

}  // namespace tickinfer::tfl::kernels
