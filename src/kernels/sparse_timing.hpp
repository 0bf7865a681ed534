#pragma once
// The measurement behind every dense-or-sparse choice (engine/sparse_choice.cpp for the fp32
// plans, tflite/ops/fc_sparse_choice.cpp for the int8 and hybrid ops) and the quantizer's
// measured fp32 pass: both forms run on this machine in interleaved rounds of ~20 us, and the
// medians decide. One rule, one place, so the compilers cannot drift apart. Never on a run path.
#include <functional>
#include <string>

namespace tickinfer::kernels {

inline constexpr double kSparseMeasureFrom = 0.25;  // zero-block share below which dense is kept untimed
inline constexpr double kSparseMargin = 0.97;       // sparse must take at most this share of dense's time

struct SparseTiming {
  double dense_ns = 0, sparse_ns = 0;  // medians of 9 rounds, ns per call
  bool sparse_wins() const { return sparse_ns <= kSparseMargin * dense_ns; }
};

// Median ns per call of each: one warm-up call each, then 9 interleaved rounds of ~20 us.
SparseTiming time_dense_and_sparse(const std::function<void()>& dense, const std::function<void()>& sparse);

// The same measurement for any two alternatives (the quantizer's fp32-or-quantized check, a
// quantized file against its source model): median ns per call of a and of b over `rounds`
// interleaved rounds of ~20 us each (at least one call), so a slow patch of a shared core falls
// on both.
struct PairTiming {
  double a_ns = 0, b_ns = 0;
};
PairTiming time_interleaved(const std::function<void()>& a, const std::function<void()>& b, int rounds);

// "37%": a share for the notes `tickinfer inspect` shows.
std::string percent_text(double share);

}  // namespace tickinfer::kernels
