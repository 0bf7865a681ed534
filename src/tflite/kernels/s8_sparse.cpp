// Packing, statistics and the scalar reference of the block-sparse int8 gemv (s8_sparse.hpp).
#include "tflite/kernels/s8_sparse.hpp"

#include <algorithm>

namespace tickinfer::tfl::kernels {
namespace {

// Whether column c of group g holds a nonzero weight.
bool block_kept(const int8_t* w, int rows, int cols, int g, int c) {
  const int r1 = std::min(rows, (g + 1) * kS8SparseRows);
  for (int r = g * kS8SparseRows; r < r1; ++r) {
    if (w[static_cast<size_t>(r) * cols + c] != 0) return true;
  }
  return false;
}

int groups_of(int rows) { return (rows + kS8SparseRows - 1) / kS8SparseRows; }

}  // namespace

S8SparsityStats s8_sparsity_stats(const int8_t* w, int rows, int cols) noexcept {
  S8SparsityStats s;
  const size_t n = static_cast<size_t>(rows) * static_cast<size_t>(cols);
  size_t zeros = 0, zero_blocks = 0;
  for (size_t i = 0; i < n; ++i) zeros += w[i] == 0;
  const int groups = groups_of(rows);
  for (int g = 0; g < groups; ++g) {
    for (int c = 0; c < cols; ++c) zero_blocks += !block_kept(w, rows, cols, g, c);
  }
  s.zero_weights = n ? static_cast<double>(zeros) / static_cast<double>(n) : 0.0;
  s.zero_blocks = groups && cols ? static_cast<double>(zero_blocks) / (static_cast<double>(groups) * cols) : 0.0;
  return s;
}

S8Sparse pack_s8_sparse(const int8_t* w, int rows, int cols) {
  S8Sparse s;
  s.rows = rows;
  s.cols = cols;
  s.groups = groups_of(rows);
  s.start.push_back(0);
  std::vector<int> kept;
  for (int g = 0; g < s.groups; ++g) {
    kept.clear();
    for (int c = 0; c < cols; ++c) {
      if (block_kept(w, rows, cols, g, c)) kept.push_back(c);
    }
    const size_t quads = (kept.size() + 3) / 4;
    const size_t q0 = s.start.back();
    s.index.resize((q0 + quads) * 4, 0);
    s.weights.resize((q0 + quads) * kS8SparseQuadBytes, 0);
    for (size_t i = 0; i < kept.size(); ++i) {
      const size_t q = q0 + i / 4, j = i % 4;
      s.index[q * 4 + j] = static_cast<uint16_t>(kept[i]);
      int8_t* p = s.weights.data() + q * kS8SparseQuadBytes;
      for (int r = 0; r < kS8SparseRows && g * kS8SparseRows + r < rows; ++r) {
        p[(r / 8) * 32 + (r % 8) * 4 + j] = w[static_cast<size_t>(g * kS8SparseRows + r) * cols + kept[i]];
      }
    }
    s.start.push_back(static_cast<uint32_t>(q0 + quads));
  }
  return s;
}

void gemv_s8_sparse_scalar(const S8SparseView& w, const int8_t* x, int32_t* acc) noexcept {
  for (int g = 0; g < w.groups; ++g) {
    uint32_t a[kS8SparseRows] = {};  // uint32: int32 wrap-around without undefined behaviour
    for (uint32_t q = w.start[g]; q < w.start[g + 1]; ++q) {
      const int8_t* p = w.weights + static_cast<size_t>(q) * kS8SparseQuadBytes;
      for (int j = 0; j < 4; ++j) {
        const int32_t xv = x[w.index[q * 4 + j]];
        for (int r = 0; r < kS8SparseRows; ++r) {
          a[r] += static_cast<uint32_t>(static_cast<int32_t>(p[(r / 8) * 32 + (r % 8) * 4 + j]) * xv);
        }
      }
    }
    for (int r = 0; r < kS8SparseRows; ++r) acc[g * kS8SparseRows + r] = static_cast<int32_t>(a[r]);
  }
}

GemvS8SparseFn gemv_s8_sparse_for(::tickinfer::kernels::Isa isa, bool weights_reach_minus_128) {
  ::tickinfer::kernels::IsaVariants<GemvS8SparseFn> v;
  v.scalar = gemv_s8_sparse_scalar;
#if defined(__x86_64__)
  if (!weights_reach_minus_128) v.avx2 = gemv_s8_sparse_avx2;
#else
  (void)weights_reach_minus_128;
#endif
  return v.pick(isa);
}

GemvS8SparseRequantFn gemv_s8_sparse_requant_single_for(::tickinfer::kernels::Isa isa, bool weights_reach_minus_128) {
  ::tickinfer::kernels::IsaVariants<GemvS8SparseRequantFn> v;
  v.scalar = nullptr;
#if defined(__x86_64__)
  if (!weights_reach_minus_128) v.avx2 = gemv_s8_sparse_requant_single_avx2;
#else
  (void)weights_reach_minus_128;
#endif
  // pick() ends at the scalar entry, nullptr here: no fused reference, the caller requantizes.
  return v.pick(isa);
}

}  // namespace tickinfer::tfl::kernels
