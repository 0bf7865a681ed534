#include "stats/latency_histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "tickinfer/error.hpp"

namespace tickinfer::stats {

namespace {
constexpr int kLinearBits = LatencyHistogram::kSubBucketBits + 1;  // 2^8 = 256 exact counters
}  // namespace

LatencyHistogram::LatencyHistogram(int64_t highest_trackable_ns)
    : highest_trackable_(highest_trackable_ns) {
  if (highest_trackable_ns < kLinearLimit) {
    throw Error("LatencyHistogram: highest trackable value " + std::to_string(highest_trackable_ns) +
                " ns is below the minimum of " + std::to_string(kLinearLimit) + " ns");
  }
  counts_.assign(bucket_index(highest_trackable_ns) + 1, 0);
}

size_t LatencyHistogram::bucket_index(int64_t value_ns) const noexcept {
  const auto v = static_cast<uint64_t>(std::max<int64_t>(value_ns, 0));
  if (v < static_cast<uint64_t>(kLinearLimit)) return static_cast<size_t>(v);
  const int octave = std::bit_width(v) - 1;  // >= kLinearBits
  const int shift = octave - kSubBucketBits;
  const uint64_t sub = v >> shift;  // in [128, 256)
  return static_cast<size_t>(kLinearLimit) +
         static_cast<size_t>(octave - kLinearBits) * static_cast<size_t>(kSubBucketHalf) +
         static_cast<size_t>(sub - static_cast<uint64_t>(kSubBucketHalf));
}

int64_t LatencyHistogram::lowest_equivalent(size_t index) const noexcept {
  if (index < static_cast<size_t>(kLinearLimit)) return static_cast<int64_t>(index);
  const size_t k = index - static_cast<size_t>(kLinearLimit);
  const int octave = kLinearBits + static_cast<int>(k / static_cast<size_t>(kSubBucketHalf));
  const int64_t sub = kSubBucketHalf + static_cast<int64_t>(k % static_cast<size_t>(kSubBucketHalf));
  return sub << (octave - kSubBucketBits);
}

int64_t LatencyHistogram::highest_equivalent(size_t index) const noexcept {
  if (index < static_cast<size_t>(kLinearLimit)) return static_cast<int64_t>(index);
  const size_t k = index - static_cast<size_t>(kLinearLimit);
  const int octave = kLinearBits + static_cast<int>(k / static_cast<size_t>(kSubBucketHalf));
  return lowest_equivalent(index) + (int64_t{1} << (octave - kSubBucketBits)) - 1;
}

void LatencyHistogram::record_n(int64_t value_ns, int64_t count) noexcept {
  if (count <= 0) return;
  const int64_t v = std::max<int64_t>(value_ns, 0);
  size_t index;
  if (v > highest_trackable_) {
    index = counts_.size() - 1;
    saturated_count_ += count;
  } else {
    index = bucket_index(v);
  }
  counts_[index] += count;
  if (total_count_ == 0) {
    min_ = max_ = v;
  } else {
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
  }
  total_count_ += count;
  sum_ += static_cast<double>(v) * static_cast<double>(count);
}

void LatencyHistogram::record_corrected(int64_t value_ns, int64_t expected_interval_ns) noexcept {
  record(value_ns);
  if (expected_interval_ns <= 0) return;
  for (int64_t missing = value_ns - expected_interval_ns; missing >= expected_interval_ns;
       missing -= expected_interval_ns) {
    record(missing);
  }
}

void LatencyHistogram::merge(const LatencyHistogram& other) noexcept {
  if (other.total_count_ == 0) return;
  if (other.counts_.size() == counts_.size()) {
    for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  } else {
    // Different ranges: re-bucket each of other's buckets by its lowest value (exact when the
    // layouts agree on that bucket, which they do below both highest_trackable values).
    for (size_t i = 0; i < other.counts_.size(); ++i) {
      const int64_t c = other.counts_[i];
      if (c == 0) continue;
      const int64_t v = other.lowest_equivalent(i);
      if (v > highest_trackable_) {
        counts_.back() += c;
        saturated_count_ += c;
      } else {
        counts_[bucket_index(v)] += c;
      }
    }
  }
  if (total_count_ == 0) {
    min_ = other.min_;
    max_ = other.max_;
  } else {
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }
  total_count_ += other.total_count_;
  saturated_count_ += other.saturated_count_;
  sum_ += other.sum_;
}

void LatencyHistogram::reset() noexcept {
  std::fill(counts_.begin(), counts_.end(), 0);
  total_count_ = saturated_count_ = 0;
  min_ = max_ = 0;
  sum_ = 0.0;
}

double LatencyHistogram::mean() const noexcept {
  return total_count_ ? sum_ / static_cast<double>(total_count_) : 0.0;
}

int64_t LatencyHistogram::value_at_percentile(double percentile) const noexcept {
  if (total_count_ == 0) return 0;
  if (!(percentile > 0.0)) return min_;  // also catches NaN
  if (percentile >= 100.0) return max_;
  // Rank of the wanted sample (1-based). The small epsilon keeps e.g. 99.9% of 1000 at 999
  // rather than 1000 when the product comes out as 999.0000000001.
  const double exact_rank = percentile / 100.0 * static_cast<double>(total_count_);
  int64_t rank = static_cast<int64_t>(std::ceil(exact_rank - 1e-9));
  rank = std::clamp<int64_t>(rank, 1, total_count_);
  int64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::clamp(highest_equivalent(i), min_, max_);
  }
  return max_;
}

}  // namespace tickinfer::stats
