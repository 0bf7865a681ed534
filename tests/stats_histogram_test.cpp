// LatencyHistogram: bucket precision, percentiles on known distributions, coordinated-omission
// correction, merge/reset, and that recording never allocates.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <random>

#include "stats/latency_histogram.hpp"
#include "tickinfer/error.hpp"

// Counting replacement of the global allocator: the hot-path test asserts it stays at zero.
// g++ flags malloc/free inside replaced operator new/delete as a mismatch; here they are the pair.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
std::atomic<int64_t> g_allocations{0};
}  // namespace
void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace tickinfer::stats {
namespace {

// The histogram promises reported values within 1/128 of a recorded one.
constexpr double kRelativePrecision = 1.0 / 128.0;

void expect_within_precision(int64_t reported, int64_t exact) {
  const double tolerance = std::max(1.0, kRelativePrecision * static_cast<double>(exact));
  EXPECT_NEAR(static_cast<double>(reported), static_cast<double>(exact), tolerance)
      << "reported " << reported << " for exact " << exact;
}

TEST(LatencyHistogram, ValuesBelow256AreExact) {
  LatencyHistogram h;
  for (int64_t v = 0; v < 256; ++v) {
    EXPECT_EQ(h.bucket_index(v), static_cast<size_t>(v));
    EXPECT_EQ(h.lowest_equivalent(h.bucket_index(v)), v);
    EXPECT_EQ(h.highest_equivalent(h.bucket_index(v)), v);
  }
}

TEST(LatencyHistogram, EveryBucketIsNarrowerThanOnePercentOfItsValues) {
  LatencyHistogram h;
  for (size_t i = 0; i < h.bucket_count(); ++i) {
    const int64_t lo = h.lowest_equivalent(i), hi = h.highest_equivalent(i);
    ASSERT_LE(lo, hi);
    ASSERT_EQ(h.bucket_index(lo), i);
    ASSERT_EQ(h.bucket_index(hi), i);
    if (i + 1 < h.bucket_count()) {
      ASSERT_EQ(h.lowest_equivalent(i + 1), hi + 1) << "gap after bucket " << i;
    }
    if (lo > 0) {
      ASSERT_LE(static_cast<double>(hi - lo) / static_cast<double>(lo), 0.01);
    }
  }
  // One hour is covered, and the table stays small.
  EXPECT_GE(h.highest_equivalent(h.bucket_count() - 1), LatencyHistogram::kOneHourNs);
  EXPECT_LE(h.bucket_count(), 5000u);
}

TEST(LatencyHistogram, UniformOneToNPercentiles) {
  LatencyHistogram h;
  constexpr int64_t kN = 100000;
  for (int64_t v = 1; v <= kN; ++v) h.record(v);
  EXPECT_EQ(h.count(), kN);
  EXPECT_EQ(h.min(), 1);
  EXPECT_EQ(h.max(), kN);
  EXPECT_DOUBLE_EQ(h.mean(), (kN + 1) / 2.0);
  for (double p : {1.0, 10.0, 25.0, 50.0, 90.0, 99.0, 99.9, 99.99}) {
    expect_within_precision(h.value_at_percentile(p), static_cast<int64_t>(p / 100.0 * kN));
  }
  EXPECT_EQ(h.value_at_percentile(0.0), 1);
  EXPECT_EQ(h.value_at_percentile(100.0), kN);
}

TEST(LatencyHistogram, ConstantDistributionReportsTheConstantExactly) {
  LatencyHistogram h;
  for (int i = 0; i < 1000; ++i) h.record(12345);
  // The bucket top is clamped into [min, max], so a constant comes back exactly.
  for (double p : {0.0, 50.0, 99.0, 99.9, 100.0}) EXPECT_EQ(h.value_at_percentile(p), 12345);
  EXPECT_DOUBLE_EQ(h.mean(), 12345.0);
}

TEST(LatencyHistogram, TwoPointDistributionSwitchesAtItsWeight) {
  LatencyHistogram h;
  h.record_n(100, 900);       // 90% fast
  h.record_n(1000000, 100);   // 10% slow (1 ms)
  EXPECT_EQ(h.value_at_percentile(50.0), 100);
  EXPECT_EQ(h.value_at_percentile(90.0), 100);
  expect_within_precision(h.value_at_percentile(90.1), 1000000);
  expect_within_precision(h.value_at_percentile(99.0), 1000000);
  EXPECT_EQ(h.value_at_percentile(100.0), 1000000);
  EXPECT_DOUBLE_EQ(h.mean(), (900.0 * 100 + 100.0 * 1000000) / 1000.0);
}

TEST(LatencyHistogram, RandomLogNormalPercentilesMatchSortedSamples) {
  const uint32_t seed = 20240611;
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> dist(8.0, 1.5);  // median ~3 us, long tail
  std::vector<int64_t> samples(50000);
  LatencyHistogram h;
  for (auto& s : samples) {
    s = static_cast<int64_t>(dist(rng));
    h.record(s);
  }
  std::sort(samples.begin(), samples.end());
  for (double p : {50.0, 90.0, 99.0, 99.9}) {
    const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * samples.size()));
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " p" << p);
    expect_within_precision(h.value_at_percentile(p), samples[rank - 1]);
  }
  EXPECT_EQ(h.max(), samples.back());
  EXPECT_EQ(h.min(), samples.front());
}

TEST(LatencyHistogram, CoordinatedOmissionCorrectionAddsTheMissedSamples) {
  LatencyHistogram h;
  // Expected one sample every 100 ns; a 1000 ns stall hid the senders at 900, 800, ..., 100.
  h.record_corrected(1000, 100);
  EXPECT_EQ(h.count(), 10);
  for (int64_t v = 100; v <= 1000; v += 100) {
    expect_within_precision(h.value_at_percentile(static_cast<double>(v) / 10.0), v);
  }
  EXPECT_DOUBLE_EQ(h.mean(), 550.0);

  // A value at or below the interval adds nothing; a zero interval disables correction.
  h.reset();
  h.record_corrected(100, 100);
  h.record_corrected(5000, 0);
  EXPECT_EQ(h.count(), 2);

  // Non-multiple: 250 with interval 100 adds 150 only (50 is below the interval).
  h.reset();
  h.record_corrected(250, 100);
  EXPECT_EQ(h.count(), 2);
  EXPECT_EQ(h.min(), 150);
  EXPECT_EQ(h.max(), 250);
}

TEST(LatencyHistogram, OutOfRangeValuesAreClampedAndCounted) {
  LatencyHistogram h(10000);
  h.record(-5);
  h.record(1000000);
  EXPECT_EQ(h.count(), 2);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.max(), 1000000);  // max stays exact
  EXPECT_EQ(h.saturated_count(), 1);
  EXPECT_EQ(h.value_at_percentile(100.0), 1000000);
  EXPECT_THROW(LatencyHistogram(100), Error);
}

TEST(LatencyHistogram, MergeAddsCountsAndExtremes) {
  LatencyHistogram a, b, c(1000000);
  for (int64_t v = 1; v <= 500; ++v) a.record(v);
  for (int64_t v = 501; v <= 1000; ++v) b.record(v);
  for (int64_t v = 1001; v <= 2000; ++v) c.record(v);  // different layout
  a.merge(b);
  a.merge(c);
  EXPECT_EQ(a.count(), 2000);
  EXPECT_EQ(a.min(), 1);
  EXPECT_EQ(a.max(), 2000);
  EXPECT_DOUBLE_EQ(a.mean(), 1000.5);
  expect_within_precision(a.value_at_percentile(50.0), 1000);
  expect_within_precision(a.value_at_percentile(75.0), 1500);

  LatencyHistogram empty;
  empty.merge(a);
  EXPECT_EQ(empty.min(), 1);
  EXPECT_EQ(empty.count(), 2000);
}

TEST(LatencyHistogram, ResetForgetsEverything) {
  LatencyHistogram h;
  h.record(42);
  h.reset();
  EXPECT_EQ(h.count(), 0);
  EXPECT_EQ(h.max(), 0);
  EXPECT_EQ(h.value_at_percentile(50.0), 0);
  EXPECT_EQ(h.mean(), 0.0);
}

TEST(LatencyHistogram, RecordingDoesNotAllocate) {
  LatencyHistogram h;
  LatencyHistogram other;
  other.record(7);
  const int64_t before = g_allocations.load();
  for (int64_t v = 0; v < 100000; v += 3) h.record(v * 977);
  h.record_corrected(100000, 1000);
  h.record_n(5, 3);
  h.merge(other);
  (void)h.value_at_percentile(99.0);
  h.reset();
  EXPECT_EQ(g_allocations.load() - before, 0);
  // And the counter is live: constructing one does allocate.
  { LatencyHistogram fresh; }
  EXPECT_GT(g_allocations.load() - before, 0);
}

}  // namespace
}  // namespace tickinfer::stats
