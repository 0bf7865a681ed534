// Pair-block packing, input widening and the plain reference loop (quant/kernels/gemv_s16_pairs.hpp).
#include <cstring>

#include "quant/kernels/gemv_s16_pairs.hpp"

namespace tickinfer::quant::kernels {

void pack_s16_pair_blocks(const int8_t* w, int rows, int cols, int16_t* packed) noexcept {
  const int blocks = pair_blocks(rows), pairs = column_pairs(cols);
  std::memset(packed, 0, pair_block_elems(rows, cols) * sizeof(int16_t));
  for (int b = 0; b < blocks; ++b) {
    for (int k = 0; k < pairs; ++k) {
      int16_t* dst = packed + (static_cast<size_t>(b) * pairs + k) * 2 * kPairBlockRows;
      for (int i = 0; i < kPairBlockRows; ++i) {
        const int r = b * kPairBlockRows + i;
        if (r >= rows) break;
        for (int j = 0; j < 2; ++j) {
          const int c = 2 * k + j;
          if (c < cols) dst[2 * i + j] = w[static_cast<size_t>(r) * cols + c];
        }
      }
    }
  }
}

void widen_s8_to_s16_pairs(const int8_t* x, int cols, int16_t* xw) noexcept {
  for (int c = 0; c < cols; ++c) xw[c] = x[c];
  if (cols & 1) xw[cols] = 0;
}

void gemv_s16_pairs_scalar(const int16_t* packed, int blocks, int pairs, const int16_t* xw, int32_t* acc) noexcept {
  for (int b = 0; b < blocks; ++b) {
    for (int i = 0; i < kPairBlockRows; ++i) {
      uint32_t s = 0;  // wraps like int32, without undefined behaviour
      for (int k = 0; k < pairs; ++k) {
        const int16_t* p = packed + (static_cast<size_t>(b) * pairs + k) * 2 * kPairBlockRows + 2 * i;
        s += static_cast<uint32_t>(p[0] * xw[2 * k] + p[1] * xw[2 * k + 1]);
      }
      acc[b * kPairBlockRows + i] = static_cast<int32_t>(s);
    }
  }
}

}  // namespace tickinfer::quant::kernels
