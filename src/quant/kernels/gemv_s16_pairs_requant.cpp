// Prepare-time layout of the fused FC requantization constants (gemv_s16_pairs_requant.hpp).
#include "quant/kernels/gemv_s16_pairs_requant.hpp"

namespace tickinfer::quant::kernels {

// Block layout, 8 groups of 4 int64 (one ymm each):
//   0: bias as 8 int32            1: multiplier as 8 int32
//   2: t of rows 0,2,4,6          3: t of rows 1,3,5,7           (64-bit shift counts)
//   4: 2^(t-1) + 2^62, even rows  5: the same, odd rows           (rounding + non-negative bias)
//   6: 2^(62-t), even rows        7: the same, odd rows           (the bias's share of the quotient)
PairRequantSingle pack_pair_requant_single(int rows, const int32_t* bias, const int32_t* multiplier,
                                           const int32_t* shift, int32_t zp, int32_t act_min, int32_t act_max) {
  PairRequantSingle q;
  q.output_zero_point = zp;
  q.act_min = act_min;
  q.act_max = act_max;
  const int blocks = pair_blocks(rows);
  q.per_block.assign(static_cast<size_t>(blocks) * kPairRequantWords, 0);
  for (int b = 0; b < blocks; ++b) {
    int64_t* w = q.per_block.data() + static_cast<size_t>(b) * kPairRequantWords;
    auto* w32 = reinterpret_cast<int32_t*>(w);
    for (int i = 0; i < kPairBlockRows; ++i) {
      const int r = b * kPairBlockRows + i;
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

}  // namespace tickinfer::quant::kernels
