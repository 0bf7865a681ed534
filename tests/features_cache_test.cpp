// The feature cache: LRU order, TTL expiry, overwrite, and a long random run against a plain
// model built from std::list and std::map.
#include <gtest/gtest.h>

#include <list>
#include <map>
#include <random>
#include <tuple>

#include "features/feature_cache.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::features {
namespace {

CacheKey key(std::uint32_t inst, std::int64_t ts, std::uint64_t set = 1) { return {inst, ts, set}; }

TEST(FeaturesCache, EvictsTheLeastRecentlyUsed) {
  FeatureCache c(2, 1, 1'000'000);
  const double a = 1, b = 2, d = 3;
  c.put(key(1, 10), &a, 0);
  c.put(key(2, 10), &b, 0);
  ASSERT_NE(c.get(key(1, 10), 1), nullptr);  // 1 is now the most recent
  c.put(key(3, 10), &d, 2);                   // evicts 2
  EXPECT_EQ(c.get(key(2, 10), 3), nullptr);
  ASSERT_NE(c.get(key(1, 10), 3), nullptr);
  EXPECT_EQ(*c.get(key(3, 10), 3), 3.0);
  EXPECT_EQ(c.stats().evicted, 1u);
  EXPECT_EQ(c.size(), 2u);
}

TEST(FeaturesCache, KeysDifferByInstrumentTimestampAndFeatureSet) {
  FeatureCache c(8, 2, 100);
  const double v1[2] = {1, 2}, v2[2] = {3, 4}, v3[2] = {5, 6};
  c.put(key(1, 10, 7), v1, 0);
  c.put(key(1, 11, 7), v2, 0);
  c.put(key(1, 10, 8), v3, 0);
  EXPECT_EQ(c.get(key(1, 10, 7), 0)[1], 2.0);
  EXPECT_EQ(c.get(key(1, 11, 7), 0)[0], 3.0);
  EXPECT_EQ(c.get(key(1, 10, 8), 0)[0], 5.0);
  EXPECT_EQ(c.get(key(2, 10, 7), 0), nullptr);
}

TEST(FeaturesCache, EntriesExpireAfterTheTtl) {
  FeatureCache c(4, 1, 100);
  const double v = 1, w = 2;
  c.put(key(1, 1), &v, 1000);
  EXPECT_NE(c.get(key(1, 1), 1100), nullptr);  // age 100: still fresh
  EXPECT_EQ(c.get(key(1, 1), 1101), nullptr);  // age 101: expired and removed
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(c.stats().expired, 1u);
  c.put(key(1, 1), &v, 2000);
  c.put(key(1, 1), &w, 2050);  // overwrite refreshes value and age
  ASSERT_NE(c.get(key(1, 1), 2140), nullptr);
  EXPECT_EQ(*c.get(key(1, 1), 2140), 2.0);
  EXPECT_EQ(c.size(), 1u);
}

TEST(FeaturesCache, RefusesNonsenseConfigurations) {
  EXPECT_THROW(FeatureCache(0, 1, 1), Error);
  EXPECT_THROW(FeatureCache(1, 0, 1), Error);
  EXPECT_THROW(FeatureCache(1, 1, 0), Error);
}

TEST(FeaturesCache, MatchesAPlainLruModelOverARandomRun) {
  constexpr std::size_t kCap = 37;
  constexpr std::int64_t kTtl = 500;
  FeatureCache c(kCap, 1, kTtl);
  using K = std::tuple<std::uint32_t, std::int64_t>;
  std::list<K> order;  // front = most recent
  std::map<K, std::pair<double, std::int64_t>> model;
  std::mt19937 rng(11);
  std::int64_t now = 0;
  for (int step = 0; step < 200000; ++step) {
    now += rng() % 7;
    const K k{static_cast<std::uint32_t>(rng() % 60), static_cast<std::int64_t>(rng() % 3)};
    const CacheKey ck = key(std::get<0>(k), std::get<1>(k));
    if (rng() % 2) {
      const double v = step;
      c.put(ck, &v, now);
      if (model.count(k)) order.remove(k);
      else if (model.size() == kCap) {
        model.erase(order.back());
        order.pop_back();
      }
      order.push_front(k);
      model[k] = {v, now};
    } else {
      const double* got = c.get(ck, now);
      auto it = model.find(k);
      if (it == model.end()) {
        ASSERT_EQ(got, nullptr) << "step " << step;
      } else if (now - it->second.second > kTtl) {
        ASSERT_EQ(got, nullptr) << "step " << step;
        order.remove(k);
        model.erase(it);
      } else {
        ASSERT_NE(got, nullptr) << "step " << step;
        ASSERT_EQ(*got, it->second.first);
        order.remove(k);
        order.push_front(k);
      }
    }
    ASSERT_EQ(c.size(), model.size());
  }
}

}  // namespace
}  // namespace tickinfer::features
