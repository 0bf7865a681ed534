// The scalar sequential block-sparse fp32 FC and the per-ISA choice (gemv_sparse_sequential.hpp).
// This module is compiled with -ffp-contract=off: each product and each sum below round alone.
#include "tflite/kernels/gemv_sparse_sequential.hpp"

#include <cmath>

namespace tickinfer::tfl::kernels {

namespace scalar {

bool gemv_sparse_sequential(const float* x, const ::tickinfer::kernels::SparsePanelsView& w, const float* init,
                           float* y, float lo, float hi) noexcept {
  for (int k = 0; k < w.K; ++k) {
    if (!std::isfinite(x[k])) return false;
  }
  constexpr int kBlock = ::tickinfer::kernels::kSparseBlock;
  for (int p = 0; p < w.panels; ++p) {
    const int n0 = p * kBlock;
    const int width = w.N - n0 < kBlock ? w.N - n0 : kBlock;
    for (int j = 0; j < width; ++j) {
      float total = 0.0f;
      for (uint32_t b = w.start[p]; b < w.start[p + 1]; ++b) {
        total += x[w.rows[b]] * w.values[static_cast<size_t>(b) * kBlock + j];
      }
      float v = (init ? init[n0 + j] : 0.0f) + total;
      v = v < lo ? lo : v;  // false for NaN: NaN propagates
      y[n0 + j] = v > hi ? hi : v;
    }
  }
  return true;
}

}  // namespace scalar

GemvSparseSequentialFn gemv_sparse_sequential_for(::tickinfer::kernels::Isa isa) {
  ::tickinfer::kernels::IsaVariants<GemvSparseSequentialFn> v;
  v.scalar = &scalar::gemv_sparse_sequential;
#if defined(__x86_64__)
  v.avx2 = &avx2::gemv_sparse_sequential;
#endif
  return v.pick(isa);
}

}  // namespace tickinfer::tfl::kernels
