#include "engine/sparse_choice.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

namespace tickinfer::engine {

namespace {

constexpr double kMeasureFrom = 0.25;  // zero-block share below which dense is kept untimed
constexpr double kMargin = 0.97;       // sparse must take at most this share of dense's time
constexpr int kRounds = 9;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median ns per call of dense and sparse, timed in interleaved rounds of ~20 us each.
void time_both(const kernels::KernelSet& ks, const SparseWeights& sw, const float* packed, int K, int N,
               double& dense_ns, double& sparse_ns) {
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(K)), y(static_cast<size_t>(N)), b(static_cast<size_t>(N), 0.25f);
  for (float& v : x) v = u(rng);
  using clock = std::chrono::steady_clock;
  auto dense = [&] { ks.gemv(x.data(), K, packed, N, b.data(), y.data(), -1e30f, 1e30f); };
  auto sparse = [&] { sw.gemv(x.data(), sw.view, b.data(), y.data(), -1e30f, 1e30f); };
  auto per_call = [&](auto&& f, int reps) {
    const auto t0 = clock::now();
    for (int i = 0; i < reps; ++i) f();
    return std::chrono::duration<double, std::nano>(clock::now() - t0).count() / reps;
  };
  dense();
  sparse();
  const double first = std::max(per_call(dense, 4), 1.0);
  const int reps = std::clamp(static_cast<int>(20000.0 / first), 1, 4096);
  std::vector<double> d, s;
  for (int r = 0; r < kRounds; ++r) {
    d.push_back(per_call(dense, reps));
    s.push_back(per_call(sparse, reps));
  }
  dense_ns = median(d);
  sparse_ns = median(s);
}

std::string percent(double f) {
  char b[16];
  std::snprintf(b, sizeof b, "%.0f%%", 100.0 * f);
  return b;
}

}  // namespace

const SparseWeights* choose_sparse_form(PackedWeights& pw, const kernels::KernelSet& ks, SparseMode mode,
                                        const float* w, const float* packed, int K, int N, const std::string& what,
                                        std::string& note) {
  if (mode == SparseMode::Dense || kernels::is_dot_form(N) || K > 65536) return nullptr;
  const kernels::SparsityStats st = kernels::sparsity_stats(w, K, N);
  if (st.zero_weights == 0.0) return nullptr;  // an unpruned layer: nothing to say
  if (!note.empty()) note += "; ";
  note += what + ": " + percent(st.zero_weights) + " zero weights, " + percent(st.zero_blocks) + " zero 1x16 blocks";
  if (st.zero_blocks == 0.0 || (mode == SparseMode::Auto && st.zero_blocks < kMeasureFrom)) {
    note += " -> dense (too few zero blocks for the sparse kernel to pay)";
    return nullptr;
  }
  auto sw = std::make_unique<SparseWeights>();
  sw->panels = kernels::pack_sparse_panels(w, K, N);
  sw->view = sw->panels.view();
  sw->gemv = kernels::sparse_gemv_for(ks.isa);
  if (mode == SparseMode::Auto) {
    double dense_ns = 0, sparse_ns = 0;
    time_both(ks, *sw, packed, K, N, dense_ns, sparse_ns);
    char b[96];
    std::snprintf(b, sizeof b, "; measured sparse %.0f ns vs dense %.0f ns", sparse_ns, dense_ns);
    note += b;
    if (!(sparse_ns <= kMargin * dense_ns)) {
      note += " -> dense";
      return nullptr;
    }
  }
  note += " -> sparse 1x16";
  pw.sparse.push_back(std::move(sw));
  return pw.sparse.back().get();
}

}  // namespace tickinfer::engine
