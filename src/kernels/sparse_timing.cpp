// Interleaved timing of two alternatives (sparse_timing.hpp).
#include "kernels/sparse_timing.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace tickinfer::kernels {

namespace {

constexpr int kRounds = 9;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

PairTiming time_interleaved(const std::function<void()>& a, const std::function<void()>& b, int rounds) {
  using clock = std::chrono::steady_clock;
  auto per_call = [](const std::function<void()>& f, int reps) {
    const auto t0 = clock::now();
    for (int i = 0; i < reps; ++i) f();
    return std::chrono::duration<double, std::nano>(clock::now() - t0).count() / reps;
  };
  a();
  b();
  const double first = std::max(per_call(a, 4), 1.0);
  const int reps = std::clamp(static_cast<int>(20000.0 / first), 1, 4096);
  std::vector<double> ta, tb;
  for (int r = 0; r < std::max(rounds, 1); ++r) {
    ta.push_back(per_call(a, reps));
    tb.push_back(per_call(b, reps));
  }
  return {median(ta), median(tb)};
}

SparseTiming time_dense_and_sparse(const std::function<void()>& dense, const std::function<void()>& sparse) {
  const PairTiming t = time_interleaved(dense, sparse, kRounds);
  return {t.a_ns, t.b_ns};
}

std::string percent_text(double share) {
  char b[16];
  std::snprintf(b, sizeof b, "%.0f%%", 100.0 * share);
  return b;
}

}  // namespace tickinfer::kernels
