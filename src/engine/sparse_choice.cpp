#include "engine/sparse_choice.hpp"

#include <cstdio>
#include <random>
#include <vector>

#include "kernels/sparse_timing.hpp"

namespace tickinfer::engine {

namespace {

// Median ns per call of dense and sparse on one fixed input (kernels/sparse_timing.hpp).
kernels::SparseTiming time_both(const kernels::KernelSet& ks, const SparseWeights& sw, const float* packed, int K,
                                int N) {
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(K)), y(static_cast<size_t>(N)), b(static_cast<size_t>(N), 0.25f);
  for (float& v : x) v = u(rng);
  return kernels::time_dense_and_sparse(
      [&] { ks.gemv(x.data(), K, packed, N, b.data(), y.data(), -1e30f, 1e30f); },
      [&] { sw.gemv(x.data(), sw.view, b.data(), y.data(), -1e30f, 1e30f); });
}

}  // namespace

const SparseWeights* choose_sparse_form(PackedWeights& pw, const kernels::KernelSet& ks, SparseMode mode,
                                        const float* w, const float* packed, int K, int N, const std::string& what,
                                        std::string& note) {
  if (mode == SparseMode::Dense || kernels::is_dot_form(N) || K > 65536) return nullptr;
  const kernels::SparsityStats st = kernels::sparsity_stats(w, K, N);
  if (st.zero_weights == 0.0) return nullptr;  // an unpruned layer: nothing to say
  if (!note.empty()) note += "; ";
  note += what + ": " + kernels::percent_text(st.zero_weights) + " zero weights, " +
          kernels::percent_text(st.zero_blocks) + " zero 1x16 blocks";
  if (st.zero_blocks == 0.0 || (mode == SparseMode::Auto && st.zero_blocks < kernels::kSparseMeasureFrom)) {
    note += " -> dense (too few zero blocks for the sparse kernel to pay)";
    return nullptr;
  }
  auto sw = std::make_unique<SparseWeights>();
  sw->panels = kernels::pack_sparse_panels(w, K, N);
  sw->view = sw->panels.view();
  sw->gemv = kernels::sparse_gemv_for(ks.isa);
  if (mode == SparseMode::Auto) {
    const kernels::SparseTiming t = time_both(ks, *sw, packed, K, N);
    char b[96];
    std::snprintf(b, sizeof b, "; measured sparse %.0f ns vs dense %.0f ns", t.sparse_ns, t.dense_ns);
    note += b;
    if (!t.sparse_wins()) {
      note += " -> dense";
      return nullptr;
    }
  }
  note += " -> sparse 1x16";
  pw.sparse.push_back(std::move(sw));
  return pw.sparse.back().get();
}

}  // namespace tickinfer::engine
