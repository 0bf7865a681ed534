// Interleaved dense/sparse timing (sparse_timing.hpp).
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

SparseTiming time_dense_and_sparse(const std::function<void()>& dense, const std::function<void()>& sparse) {
  using clock = std::chrono::steady_clock;
  auto per_call = [](const std::function<void()>& f, int reps) {
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
  return {median(d), median(s)};
}

std::string percent_text(double share) {
  char b[16];
  std::snprintf(b, sizeof b, "%.0f%%", 100.0 * share);
  return b;
}

}  // namespace tickinfer::kernels
