// Standardization: fixed parameters, rolling fits published only by the refit side, drift
// triggers, and the lock-free publication that never hands a reader a half-written set.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "features/feature_pipeline.hpp"
#include "features/published_params.hpp"
#include "features/standardizer.hpp"

namespace tickinfer::features {
namespace {

TEST(FeaturesStandardizer, FixedParametersFromTraining) {
  StandardizeSpec s;
  s.mode = StandardizeMode::Fixed;
  s.mean = {1.0, -2.0};
  s.scale = {2.0, 0.5};
  Standardizer st(s, 2);
  const double x[2] = {5.0, -1.0};
  double z[2];
  ASSERT_TRUE(st.apply(x, z));
  EXPECT_DOUBLE_EQ(z[0], 2.0);
  EXPECT_DOUBLE_EQ(z[1], 2.0);
}

TEST(FeaturesStandardizer, HotPathNeverFitsItOnlyReadsPublications) {
  StandardizeSpec s;
  s.mode = StandardizeMode::Rolling;
  s.window = 4;
  s.refit_every = 3;
  Standardizer st(s, 1);
  double z;
  const double rows[] = {1, 2, 3, 10, 20};
  for (int i = 0; i < 3; ++i) st.submit_row(&rows[i]);
  EXPECT_FALSE(st.apply(&rows[0], &z));  // three rows queued but nobody refit: nothing published
  EXPECT_TRUE(std::isnan(z));
  EXPECT_EQ(st.refit_step(), 3);
  ASSERT_EQ(st.publications(), 1u);
  const double x = 4.0;
  ASSERT_TRUE(st.apply(&x, &z));
  // mean 2, population variance 2/3 over {1, 2, 3}.
  EXPECT_NEAR(z, (4.0 - 2.0) / std::sqrt(2.0 / 3.0), 1e-12);
  st.submit_row(&rows[3]);
  st.submit_row(&rows[4]);
  st.refit_step();
  EXPECT_EQ(st.publications(), 1u);  // 2 rows since the fit: not yet due
  st.submit_row(&rows[0]);
  st.refit_step();
  ASSERT_EQ(st.publications(), 2u);
  // Window of 4: {3, 10, 20, 1}: mean 8.5, population variance 55.25.
  ASSERT_TRUE(st.apply(&x, &z));
  EXPECT_NEAR(z, (4.0 - 8.5) / std::sqrt(55.25), 1e-12);
}

TEST(FeaturesStandardizer, DriftPublishesBeforeTheSchedule) {
  StandardizeSpec s;
  s.mode = StandardizeMode::Rolling;
  s.window = 50;
  s.refit_every = 1000;
  s.drift_threshold = 1.0;
  Standardizer st(s, 1);
  std::mt19937 rng(3);
  std::normal_distribution<double> n01;
  for (int i = 0; i < 1000; ++i) {
    const double x = n01(rng);
    st.submit_row(&x);
    st.refit_step();
  }
  ASSERT_EQ(st.publications(), 1u);
  ASSERT_EQ(st.drift_publications(), 0u);
  // The level moves by 5 standard deviations: the running mean crosses 1 scale within the window.
  for (int i = 0; i < 40; ++i) {
    const double x = 5.0 + n01(rng);
    st.submit_row(&x);
    st.refit_step();
  }
  EXPECT_GE(st.drift_publications(), 1u);
  EXPECT_GE(st.publications(), 2u);
}

TEST(FeaturesStandardizer, FullQueueDropsAndCountsInsteadOfBlocking) {
  StandardizeSpec s;
  s.mode = StandardizeMode::Rolling;
  Standardizer st(s, 1, /*queue_rows=*/8);
  const double x = 1.0;
  for (int i = 0; i < 20; ++i) st.submit_row(&x);
  EXPECT_EQ(st.rows_dropped(), 12u);
  EXPECT_EQ(st.refit_step(), 8);
}

// A writer thread publishes parameter sets whose every value encodes the set's number; a reader
// thread checks each set it reads is one whole set (all means equal k, all scales equal -k).
TEST(FeaturesStandardizer, ReaderNeverSeesAHalfPublishedSet) {
  constexpr std::size_t kWidth = 24;
  constexpr int kSets = 300000;
  PublishedParams params(kWidth);
  std::atomic<bool> done{false};
  std::atomic<long> reads{0}, torn{0};
  std::thread reader([&] {
    double mean[kWidth], scale[kWidth];
    std::uint64_t last = 0;
    while (!done.load(std::memory_order_acquire)) {
      const std::uint64_t g = params.read(mean, scale);
      if (g == 0) continue;
      bool ok = g >= last;
      for (std::size_t i = 0; i < kWidth; ++i) ok = ok && mean[i] == mean[0] && scale[i] == -mean[0];
      if (!ok) torn.fetch_add(1);
      last = g;
      reads.fetch_add(1, std::memory_order_relaxed);
    }
  });
  std::vector<double> m(kWidth), sc(kWidth);
  for (int k = 1; k <= kSets; ++k) {
    std::fill(m.begin(), m.end(), static_cast<double>(k));
    std::fill(sc.begin(), sc.end(), -static_cast<double>(k));
    params.publish(m.data(), sc.data());
  }
  // Let the reader see the final set at least once.
  while (reads.load() < 1000) std::this_thread::yield();
  done.store(true, std::memory_order_release);
  reader.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_GT(reads.load(), 0);
  double mean[kWidth], scale[kWidth];
  EXPECT_EQ(params.read(mean, scale), static_cast<std::uint64_t>(kSets));
  EXPECT_EQ(mean[kWidth - 1], kSets);
}

// The live arrangement: the pipeline thread handles events while a refit agent thread fits and
// publishes. Run under ThreadSanitizer (TICKINFER_SANITIZE=thread) this proves the hand-over
// (SPSC row ring, parameter publication) is race-free.
TEST(FeaturesStandardizer, LiveRefitRunsOnItsOwnThread) {
  const FeatureSpec spec = parse_feature_spec(
      "[feature_set]\ninstruments = [1]\nbar_ns = 1000\n[standardize]\nmode = \"rolling\"\nwindow = 50\nrefit_every = 10\n"
      "drift_threshold = 3.0\n[[feature]]\nkind = \"mid\"\n[[feature]]\nkind = \"realized_vol\"\nticks = 8\n");
  FeaturePipeline p(spec);
  std::atomic<bool> stop{false};
  std::thread agent([&] {
    while (!stop.load(std::memory_order_acquire)) {
      if (p.refit_step() == 0) std::this_thread::yield();  // idle strategy: yield
    }
  });
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> step(-3, 3);
  std::int64_t px = 100'000'000'000;
  int ready = 0;
  for (int i = 0; i < 100000; ++i) {
    px += step(rng) * 1'000'000;
    md::Quote q;
    q.instrument = 1;
    q.exchange_ts_ns = i * 250;
    q.bid_price = px - 1'000'000;
    q.ask_price = px + 1'000'000;
    q.bid_size = q.ask_size = 5;
    const FeatureUpdate& u = p.on_event(md::Event::of(q), i);
    if (u.params_ready) {
      ++ready;
      ASSERT_TRUE(std::isfinite(u.model_input[0]));
    }
  }
  stop.store(true, std::memory_order_release);
  agent.join();
  EXPECT_GT(ready, 0);
  EXPECT_GT(p.standardizer(0).publications(), 100u);
}

}  // namespace
}  // namespace tickinfer::features
