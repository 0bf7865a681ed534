// Packing and statistics of the block-sparse gemv format (sparse_panels.hpp), its scalar
// reference kernel and the per-ISA pick.
#include "kernels/sparse_panels.hpp"

#include <string>

#include "kernels/isa_variants.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::kernels {

namespace {

// True when W[k][p 16 .. p 16 + 16) (clipped at N) holds a nonzero; -0.0f counts as zero.
bool block_has_nonzero(const float* w, int K, int N, int k, int p) {
  (void)K;
  for (int j = p * kSparseBlock; j < N && j < (p + 1) * kSparseBlock; ++j) {
    if (w[static_cast<size_t>(k) * N + j] != 0.0f) return true;
  }
  return false;
}

}  // namespace

SparsityStats sparsity_stats(const float* w, int K, int N) noexcept {
  SparsityStats s;
  if (K <= 0 || N <= 0) return s;
  size_t zeros = 0, empty = 0;
  for (size_t i = 0; i < static_cast<size_t>(K) * N; ++i) zeros += w[i] == 0.0f;
  const int panels = (N + kSparseBlock - 1) / kSparseBlock;
  for (int p = 0; p < panels; ++p) {
    for (int k = 0; k < K; ++k) empty += !block_has_nonzero(w, K, N, k, p);
  }
  s.zero_weights = static_cast<double>(zeros) / (static_cast<double>(K) * N);
  s.zero_blocks = static_cast<double>(empty) / (static_cast<double>(K) * panels);
  return s;
}

SparsePanels pack_sparse_panels(const float* w, int K, int N) {
  if (K > 65536) throw Error("sparse weights: " + std::to_string(K) + " inputs exceed the format's 65536");
  SparsePanels s;
  s.K = K;
  s.N = N;
  s.panels = (N + kSparseBlock - 1) / kSparseBlock;
  s.start.push_back(0);
  for (int p = 0; p < s.panels; ++p) {
    for (int k = 0; k < K; ++k) {
      if (!block_has_nonzero(w, K, N, k, p)) continue;
      s.rows.push_back(static_cast<uint16_t>(k));
      for (int j = 0; j < kSparseBlock; ++j) {
        const int n = p * kSparseBlock + j;
        s.values.push_back(n < N ? w[static_cast<size_t>(k) * N + n] : 0.0f);
      }
    }
    s.start.push_back(static_cast<uint32_t>(s.rows.size()));
  }
  return s;
}

namespace scalar {

// The reference: one accumulator per output, blocks in ascending k, a multiply then an add.
void sparse_gemv(const float* x, const SparsePanelsView& w, const float* init, float* y, float lo,
                 float hi) noexcept {
  for (int p = 0; p < w.panels; ++p) {
    float acc[kSparseBlock] = {};
    for (uint32_t b = w.start[p]; b < w.start[p + 1]; ++b) {
      const float xk = x[w.rows[b]];
      const float* v = w.values + static_cast<size_t>(b) * kSparseBlock;
      for (int j = 0; j < kSparseBlock; ++j) acc[j] += xk * v[j];
    }
    for (int j = 0; j < kSparseBlock && p * kSparseBlock + j < w.N; ++j) {
      const int n = p * kSparseBlock + j;
      float v = (init ? init[n] : 0.0f) + acc[j];
      v = v < lo ? lo : v;  // false for NaN: NaN propagates
      y[n] = v > hi ? hi : v;
    }
  }
}

}  // namespace scalar

SparseGemvFn sparse_gemv_for(Isa isa) {
  IsaVariants<SparseGemvFn> v;
  v.scalar = &scalar::sparse_gemv;
#if defined(TICKINFER_HAVE_X86)
  v.avx2 = &avx2::sparse_gemv;
  v.avx512 = &avx512::sparse_gemv;
#endif
  return v.pick(isa);
}

}  // namespace tickinfer::kernels
