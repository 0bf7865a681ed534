#pragma once
// Standardization of one instrument's feature rows: z = (x - mean) / scale with published
// parameters. Modes (FeatureSpec::standardize):
//  * Fixed: the training parameters from the spec, published at construction.
//  * Rolling: the hot path hands every accepted row (observed or interpolated) to an SPSC ring
//    (submit_row: O(width) copy, never blocks; a full ring drops the row and counts it). The
//    refit side (refit_step, called by an agent thread or synchronously in batch mode) keeps
//    the last `window` rows, maintains their mean and variance incrementally (Welford add and
//    remove) for drift checks, and publishes a fresh fit every `refit_every` rows, or sooner
//    when any feature's running mean moved more than drift_threshold * published scale. A
//    publication recomputes mean and population variance of the window exactly (two passes, as
//    sklearn's StandardScaler fitted on those rows), scale = sqrt(var), 1 where that is below
//    10 * DBL_EPSILON. The hot path never fits; it only reads what was published.
//  * None: apply() copies the row.
// Before the first publication apply() writes NaN (the row is not model-ready).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "features/feature_spec.hpp"
#include "features/published_params.hpp"

namespace tickinfer::features {

class Standardizer {
 public:
  Standardizer(const StandardizeSpec& spec, std::size_t width, std::size_t queue_rows = 1024);

  StandardizeMode mode() const noexcept { return mode_; }
  // Hot path: z = (x - mean) / scale with the parameters last seen; picks up a new
  // publication with one atomic load per call. Returns false (and writes NaN) while none.
  bool apply(const double* x, double* z) noexcept;
  // Hot path (Rolling only; a no-op otherwise): queue a row for fitting.
  void submit_row(const double* x) noexcept;

  // Refit side (one thread): consumes queued rows; publishes on schedule or drift. Returns the
  // rows consumed (an agent's work count).
  int refit_step() noexcept;

  const PublishedParams& published() const noexcept { return params_; }
  std::uint64_t rows_dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }
  std::uint64_t publications() const noexcept { return params_.generation(); }
  std::uint64_t drift_publications() const noexcept { return drift_pubs_; }  // refit side only

 private:
  void publish_fit() noexcept;

  StandardizeMode mode_;
  std::size_t width_;
  // Hot-side cache of the published parameters.
  std::uint64_t seen_gen_ = 0;
  std::vector<double> mean_, inv_scale_, scratch_mean_, scratch_scale_;
  PublishedParams params_;
  // SPSC ring of rows, hot -> refit. Positions grow monotonically; slot = pos % capacity.
  std::size_t queue_rows_;
  std::vector<double> queue_;
  alignas(64) std::atomic<std::uint64_t> head_{0};  // next row the refit side reads
  alignas(64) std::atomic<std::uint64_t> tail_{0};  // next row the hot side writes
  std::uint64_t cached_head_ = 0;                   // hot side's last view of head_
  alignas(64) std::atomic<std::uint64_t> dropped_{0};
  // Refit side only.
  std::size_t window_, refit_every_;
  double drift_threshold_;
  std::vector<double> win_;          // window_ rows, ring
  std::size_t win_count_ = 0, win_pos_ = 0;
  std::vector<double> run_mean_, run_m2_;  // Welford over the window
  std::vector<double> pub_mean_, pub_scale_;
  std::uint64_t since_publish_ = 0;
  std::uint64_t drift_pubs_ = 0;
};

}  // namespace tickinfer::features
