// The measured dense/sparse choice of an int8 FULLY_CONNECTED filter (fc_sparse_choice.hpp).
#include "tflite/ops/fc_sparse_choice.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

namespace tickinfer::tfl::ops::fc {
namespace {

constexpr double kMeasureFrom = 0.25;  // zero-block share below which dense is kept untimed
constexpr double kMargin = 0.97;       // sparse must take at most this share of dense's time
constexpr int kRounds = 9;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median ns per call of each, in interleaved rounds of ~20 us.
void time_both(const std::function<void()>& dense, const std::function<void()>& sparse, double& dense_ns,
               double& sparse_ns) {
  using clock = std::chrono::steady_clock;
  auto per_call = [&](const std::function<void()>& f, int reps) {
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

std::unique_ptr<SparseFc> choose_sparse_fc(SparseChoice mode, ::tickinfer::kernels::Isa isa, bool reaches_minus_128,
                                           const int8_t* w, int units, int depth,
                                           const std::function<void(const int8_t*)>& dense,
                                           const std::function<void(const SparseFc&, const int8_t*)>& sparse,
                                           std::string& note) {
  if (mode == SparseChoice::Dense || depth > 65536) return nullptr;
  const kernels::S8SparsityStats st = kernels::s8_sparsity_stats(w, units, depth);
  if (st.zero_weights == 0.0) return nullptr;  // an unpruned filter: nothing to say
  note = "sparsity " + percent(st.zero_weights) + " zero weights, " + percent(st.zero_blocks) + " zero 1x16 blocks";
  if (st.zero_blocks == 0.0 || (mode == SparseChoice::Auto && st.zero_blocks < kMeasureFrom)) {
    note += " -> dense (too few zero blocks for the sparse kernel to pay)";
    return nullptr;
  }
  auto s = std::make_unique<SparseFc>();
  s->matrix = kernels::pack_s8_sparse(w, units, depth);
  s->view = s->matrix.view();
  s->gemv = kernels::gemv_s8_sparse_for(isa, reaches_minus_128);
  s->fused = kernels::gemv_s8_sparse_requant_single_for(isa, reaches_minus_128);
  char b[128];
  if (mode == SparseChoice::Auto) {
    std::mt19937 rng(12345);
    std::uniform_int_distribution<int> u(-127, 127);
    std::vector<int8_t> x(static_cast<size_t>(depth));
    for (int8_t& v : x) v = static_cast<int8_t>(u(rng));
    double dense_ns = 0, sparse_ns = 0;
    time_both([&] { dense(x.data()); }, [&] { sparse(*s, x.data()); }, dense_ns, sparse_ns);
    std::snprintf(b, sizeof b, "; measured sparse %.0f ns vs dense %.0f ns", sparse_ns, dense_ns);
    note += b;
    if (!(sparse_ns <= kMargin * dense_ns)) {
      note += " -> dense";
      return nullptr;
    }
  }
  std::snprintf(b, sizeof b, " -> sparse 1x16 (%zu gathered quads, %zu B, %s)", s->matrix.quads(), s->matrix.bytes(),
                s->gemv == kernels::gemv_s8_sparse_scalar ? "scalar" : "avx2");
  note += b;
  return s;
}

}  // namespace tickinfer::tfl::ops::fc
