// Dense over a batch as tiles (the graph form's batched rows): the input rows of every batch row
// side by side, M = batch rows x the step's rows, one block per tile of kTileRows rows x
// kTileCols columns, K staged through shared memory in chunks of kTileK. A weight read from
// device memory then serves kTileRows rows instead of one, which is what a batch is for.
//
// Each output is the Dense body's own chain (device_steps_linear.cuh): the bias, then fmaf over k
// in ascending order, the clamp, the epilogue. Only where the operands come from changes, so every
// row of a tiled batch is bit for bit the per-row kernel's, and run()'s. The accumulators live in
// shared memory between chunks, so the body keeps the executor contract (items, sync) and the
// host executor runs it as the GPU does, tile after tile.
#pragma once

#include "cuda/device_step_common.cuh"

namespace tickinfer::cuda::steps {

constexpr int kTileRows = 32, kTileCols = 64, kTileK = 32;
constexpr int kTileRowsPerItem = 4;  // the accumulators an item of the product phase keeps
constexpr int kTileThreads = 256;

// One block's shared memory.
struct DenseTileShared {
  float w[kTileK][kTileCols];      // the chunk's weights, this tile's columns
  float x[kTileRows][kTileK + 1];  // the chunk's inputs, this tile's rows (+1: no bank conflicts on the fill)
  float acc[kTileRows][kTileCols];
};

// Tiles of a batch of `batch_rows` rows (row b's arena `stride` floats after row 0's at `base`).
TI_HD inline int64_t dense_row_tiles(const DeviceStep& s, int batch_rows) {
  return (int64_t(batch_rows) * s.rows + kTileRows - 1) / kTileRows;
}
TI_HD inline int dense_column_tiles(const DeviceStep& s) { return (s.out_width + kTileCols - 1) / kTileCols; }

template <bool M, class X>
TI_HD void dense_tile(const X& x, const DeviceStep& s, float* base, int64_t stride, int batch_rows, const float* W,
                      int64_t row_tile, int column_tile, DenseTileShared& sh) {
  const int K = s.in_width, N = s.out_width;
  const int64_t total = int64_t(batch_rows) * s.rows, m0 = row_tile * kTileRows;
  const int n0 = column_tile * kTileCols;
  const MatrixView w = matrix(W, s.kernel, s);
  x.items(kTileRows * kTileCols, [&](int64_t i) {
    const int c = int(i % kTileCols);
    sh.acc[i / kTileCols][c] = n0 + c < N ? weight_or_zero(W, s.bias, n0 + c) : 0.0f;
  });
  for (int k0 = 0; k0 < K; k0 += kTileK) {
    const int kn = K - k0 < kTileK ? K - k0 : kTileK;
    x.sync();  // the previous chunk's products have read w and x
    x.items(kTileK * kTileCols, [&](int64_t i) {
      const int kk = int(i / kTileCols), c = int(i % kTileCols);
      sh.w[kk][c] = kk < kn && n0 + c < N ? w[int64_t(k0 + kk) * N + n0 + c] : 0.0f;
    });
    x.items(kTileRows * kTileK, [&](int64_t i) {
      const int r = int(i / kTileK), kk = int(i % kTileK);
      const int64_t m = m0 + r;
      float v = 0.0f;
      if (kk < kn && m < total) v = in_of<M>(base + (m / s.rows) * stride, s)[(m % s.rows) * K + k0 + kk];
      sh.x[r][kk] = v;
    });
    x.sync();
    x.items(kTileCols * (kTileRows / kTileRowsPerItem), [&](int64_t i) {
      const int c = int(i % kTileCols), r0 = int(i / kTileCols) * kTileRowsPerItem;
      float a[kTileRowsPerItem];
      for (int j = 0; j < kTileRowsPerItem; ++j) a[j] = sh.acc[r0 + j][c];
      for (int kk = 0; kk < kn; ++kk) {
        const float wv = sh.w[kk][c];
        for (int j = 0; j < kTileRowsPerItem; ++j) a[j] = fmaf(sh.x[r0 + j][kk], wv, a[j]);
      }
      for (int j = 0; j < kTileRowsPerItem; ++j) sh.acc[r0 + j][c] = a[j];
    });
  }
  x.sync();
  x.items(kTileRows * kTileCols, [&](int64_t i) {
    const int r = int(i / kTileCols), c = int(i % kTileCols);
    const int64_t m = m0 + r;
    if (m >= total || n0 + c >= N) return;
    const TensorOut<M> out = out_of<M>(base + (m / s.rows) * stride, s);
    out.set((m % s.rows) * N + n0 + c, activate(s.epilogue, clamp(sh.acc[r][c], s.clamp_lo, s.clamp_hi)));
  });
}

}  // namespace tickinfer::cuda::steps
