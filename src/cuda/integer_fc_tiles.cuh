// FULLY_CONNECTED over a batch as tiles (the integer program's batched rows): the input rows of
// every batch row side by side (batch rows x the step's own rows), one block per tile of
// kFcTileRows rows x kFcTileUnits units, the depth staged through shared memory in chunks of
// kFcTileDepth bytes, so a weight row read from device memory serves kFcTileRows rows.
//
// Integer sums are exact (wrapping, as the per-row body's int32 dot), so the order the chunks add
// in changes nothing: the accumulator, the input offset's row-sum term, the bias and the
// requantization are fully_connected's (integer_steps.cuh), and every row's bytes are the per-row
// kernel's and run()'s. The accumulators live in shared memory between chunks, so the body keeps
// the executor contract and the host executor runs it tile after tile as the GPU does.
#pragma once

#include "cuda/integer_steps.cuh"

namespace tickinfer::cuda::intsteps {

constexpr int kFcTileRows = 32, kFcTileUnits = 64, kFcTileDepth = 64;
constexpr int kFcTileThreads = 256;
constexpr int kFcRowsPerItem = 4;

// One block's shared memory. Rows of kFcTileDepth + 4 bytes: 4-byte aligned for dp4a, and an odd
// number of words apart, so the lanes of a warp reading one unit each hit distinct banks.
struct FcTileShared {
  int8_t w[kFcTileUnits][kFcTileDepth + 4];
  int8_t x[kFcTileRows][kFcTileDepth + 4];
  int32_t acc[kFcTileRows][kFcTileUnits];
};

TI_HD inline int64_t fc_row_tiles(const IntegerStep& s, int batch_rows) {
  return (int64_t(batch_rows) * (s.count / s.units) + kFcTileRows - 1) / kFcTileRows;
}
TI_HD inline int fc_unit_tiles(const IntegerStep& s) { return (s.units + kFcTileUnits - 1) / kFcTileUnits; }

// Tile (row_tile, unit_tile) of `batch_rows` row arenas, row b's `stride` bytes after `base`.
template <class X>
TI_HD void fully_connected_tile(const X& x, const IntegerStep& s, int8_t* base, int64_t stride, int batch_rows,
                                const uint8_t* P, int64_t row_tile, int unit_tile, FcTileShared& sh) {
  const int K = s.depth, N = s.units;
  const int64_t per = s.count / s.units, total = int64_t(batch_rows) * per, m0 = row_tile * kFcTileRows;
  const int n0 = unit_tile * kFcTileUnits;
  const int8_t* w = param<int8_t>(P, s.weights);
  x.items(kFcTileRows * kFcTileUnits, [&](int64_t i) { sh.acc[i / kFcTileUnits][i % kFcTileUnits] = 0; });
  for (int k0 = 0; k0 < K; k0 += kFcTileDepth) {
    const int kn = K - k0 < kFcTileDepth ? K - k0 : kFcTileDepth;
    x.sync();  // the previous chunk's products have read w and x
    x.items(kFcTileUnits * kFcTileDepth, [&](int64_t i) {
      const int c = int(i / kFcTileDepth), kk = int(i % kFcTileDepth);
      sh.w[c][kk] = kk < kn && n0 + c < N ? w[int64_t(n0 + c) * K + k0 + kk] : int8_t(0);
    });
    x.items(kFcTileRows * kFcTileDepth, [&](int64_t i) {
      const int r = int(i / kFcTileDepth), kk = int(i % kFcTileDepth);
      const int64_t m = m0 + r;
      sh.x[r][kk] = kk < kn && m < total ? (base + (m / per) * stride)[s.in + (m % per) * K + k0 + kk] : int8_t(0);
    });
    x.sync();
    x.items(kFcTileUnits * (kFcTileRows / kFcRowsPerItem), [&](int64_t i) {
      const int c = int(i % kFcTileUnits), r0 = int(i / kFcTileUnits) * kFcRowsPerItem;
      for (int j = 0; j < kFcRowsPerItem; ++j)
        sh.acc[r0 + j][c] = intmath::wrapping_add(sh.acc[r0 + j][c], dot_s8(sh.w[c], sh.x[r0 + j], kn));
    });
  }
  x.sync();
  const int32_t* row_sum = param<int32_t>(P, s.row_sums);
  x.items(kFcTileRows * kFcTileUnits, [&](int64_t i) {
    const int r = int(i / kFcTileUnits), c = int(i % kFcTileUnits);
    const int64_t m = m0 + r;
    const int o = n0 + c;
    if (m >= total || o >= N) return;
    int32_t acc = intmath::wrapping_add(sh.acc[r][c], int32_t(uint32_t(s.in_offset) * uint32_t(row_sum[o])));
    if (s.bias >= 0) acc = intmath::wrapping_add(acc, param<int32_t>(P, s.bias)[o]);
    (base + (m / per) * stride)[s.out + (m % per) * N + o] = requantize(s, P, acc, o);
  });
}

}  // namespace tickinfer::cuda::intsteps
