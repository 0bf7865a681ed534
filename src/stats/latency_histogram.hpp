#pragma once
// A log-linear latency histogram in the style of HdrHistogram, for int64 nanosecond samples.
//
// Layout (fixed precision, kSubBucketBits = 7):
//   * values in [0, 256) each get their own counter (exact);
//   * every power-of-two range [2^e, 2^(e+1)) with e >= 8 is split into 128 equal sub-buckets,
//     so a bucket is at most 2^e / 128 wide and any reported value is within 1/128 (< 0.8%) of
//     a recorded one.
// With the default highest trackable value (1 hour) this is 4608 counters (36 KiB), allocated
// once in the constructor. record() is O(1), noexcept, allocation-free, lock-free and
// syscall-free, so it may sit on a hot path. The histogram is not thread-safe: one writer, and
// readers only when the writer is quiescent (give each thread its own and merge()).
//
// Out-of-range samples are never dropped: negative values count as 0 and values above
// highest_trackable() count in the top bucket (saturated_count() says how many). min(), max(),
// mean() are exact (kept beside the buckets); percentiles carry the bucket precision above.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tickinfer::stats {

class LatencyHistogram {
 public:
  static constexpr int kSubBucketBits = 7;                       // 128 sub-buckets per octave
  static constexpr int64_t kSubBucketHalf = int64_t{1} << kSubBucketBits;  // 128
  static constexpr int64_t kLinearLimit = kSubBucketHalf * 2;     // [0, 256) is exact
  static constexpr int64_t kOneHourNs = int64_t{3600} * 1000 * 1000 * 1000;

  // highest_trackable_ns: the largest value kept with full precision; must be >= 256.
  // Throws tickinfer::Error otherwise. Allocates all counters here.
  explicit LatencyHistogram(int64_t highest_trackable_ns = kOneHourNs);

  // Counts one sample of value_ns. O(1); never allocates or throws.
  void record(int64_t value_ns) noexcept { record_n(value_ns, 1); }
  // Counts `count` samples of value_ns (count <= 0 is a no-op).
  void record_n(int64_t value_ns, int64_t count) noexcept;
  // Coordinated-omission correction as HdrHistogram's recordValueWithExpectedInterval does it:
  // records value_ns, and if it exceeds expected_interval_ns (> 0), also records the samples
  // a steady sender would have seen while this one was stalled: value - interval,
  // value - 2*interval, ... down to (but not below) expected_interval_ns.
  // Cost is O(value / interval); still allocation-free.
  void record_corrected(int64_t value_ns, int64_t expected_interval_ns) noexcept;

  // Adds every sample of `other` (any highest_trackable) into this one. Allocation-free.
  void merge(const LatencyHistogram& other) noexcept;
  // Forgets all samples; keeps the allocation.
  void reset() noexcept;

  int64_t count() const noexcept { return total_count_; }
  int64_t saturated_count() const noexcept { return saturated_count_; }
  int64_t min() const noexcept { return total_count_ ? min_ : 0; }  // exact; 0 when empty
  int64_t max() const noexcept { return total_count_ ? max_ : 0; }  // exact; 0 when empty
  double mean() const noexcept;                                       // exact; 0 when empty

  // The smallest recorded value v (up to bucket precision) such that at least `percentile`%
  // of samples are <= v. percentile is clamped to [0, 100]; 0 gives min(), 100 gives max().
  // Returns the top of v's bucket, clamped into [min(), max()]. 0 when empty.
  int64_t value_at_percentile(double percentile) const noexcept;

  int64_t highest_trackable() const noexcept { return highest_trackable_; }
  // Bucket arithmetic, exposed for tests: the index of v's counter and the range of values
  // [lowest, highest] that share it.
  size_t bucket_index(int64_t value_ns) const noexcept;
  int64_t lowest_equivalent(size_t index) const noexcept;
  int64_t highest_equivalent(size_t index) const noexcept;
  size_t bucket_count() const noexcept { return counts_.size(); }

 private:
  int64_t highest_trackable_;
  std::vector<int64_t> counts_;  // sized once in the constructor; never resized
  int64_t total_count_ = 0;
  int64_t saturated_count_ = 0;
  int64_t min_ = 0;
  int64_t max_ = 0;
  double sum_ = 0.0;  // exact for any realistic run (< 2^53 ns in total)
};

}  // namespace tickinfer::stats
