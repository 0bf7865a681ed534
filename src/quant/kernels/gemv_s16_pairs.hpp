#pragma once
// int8 matrix-vector product for FULLY_CONNECTED with the weights widened to int16 once, at
// prepare time, in "pair blocks": rows go in blocks of 8; within a block, for each pair of
// columns k, the 8 rows' (w[r][2k], w[r][2k+1]) sit side by side as 16 int16 (32 bytes). One
// vpmaddwd of that with the broadcast pair (x[2k], x[2k+1]) adds the pair's products to 8 row
// sums at once: no sign extension of weights per call and no horizontal sums. Products of int8 values summed in pairs fit int32 exactly, and the
// row sums wrap like TFLite's int32 accumulator, so results equal the s8 reference bit for bit.
#include <cstddef>
#include <cstdint>

namespace tickinfer::quant::kernels {

inline constexpr int kPairBlockRows = 8;

inline int pair_blocks(int rows) { return (rows + kPairBlockRows - 1) / kPairBlockRows; }
inline int column_pairs(int cols) { return (cols + 1) / 2; }
// int16 elements of the packed weights.
inline size_t pair_block_elems(int rows, int cols) {
  return static_cast<size_t>(pair_blocks(rows)) * column_pairs(cols) * 2 * kPairBlockRows;
}

// Row-major int8 w [rows x cols] -> pair blocks (zero padded to whole blocks and pairs).
void pack_s16_pair_blocks(const int8_t* w, int rows, int cols, int16_t* packed) noexcept;

// x [cols] int8 -> int16, zero padded to 2 * column_pairs(cols).
void widen_s8_to_s16_pairs(const int8_t* x, int cols, int16_t* xw) noexcept;

// acc[r] = sum_c w[r][c] * x[c] for r < 8 * blocks (padding rows give 0), from the packed
// weights and the widened input xw (2 * pairs int16). Overwrites acc.
using GemvS16PairsFn = void (*)(const int16_t* packed, int blocks, int pairs, const int16_t* xw, int32_t* acc) noexcept;
void gemv_s16_pairs_scalar(const int16_t* packed, int blocks, int pairs, const int16_t* xw, int32_t* acc) noexcept;
#if defined(__x86_64__)
// Eight accumulators in flight (four blocks, even and odd pairs apart): a single call's latency,
// not only its throughput, is what the bench measures.
void gemv_s16_pairs_avx2(const int16_t* packed, int blocks, int pairs, const int16_t* xw, int32_t* acc) noexcept;
#endif

}  // namespace tickinfer::quant::kernels
