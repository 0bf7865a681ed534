// plan_arena (model/arena_plan.hpp) on seeded random lifetimes: buffers alive at the same time
// never share a byte, every offset is aligned, the arena is no larger than giving each buffer its
// own bytes and no smaller than the most bytes alive at one time.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "model/arena_plan.hpp"

namespace tickinfer {
namespace {

std::vector<ArenaLifetime> random_lifetimes(unsigned seed, int count, int ops) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> at(-1, ops), len(0, 4), size(1, 5000);
  std::vector<ArenaLifetime> lives;
  for (int i = 0; i < count; ++i) {
    const int first = at(rng);
    lives.push_back({i, first, std::min(first + len(rng), ops), static_cast<size_t>(size(rng)), 0});
  }
  return lives;
}

TEST(ArenaPlan, LiveBuffersNeverShareBytes) {
  for (unsigned seed = 1; seed <= 200; ++seed) {
    const int ops = 12;
    std::vector<ArenaLifetime> lives = random_lifetimes(seed, 3 + seed % 30, ops);
    const size_t total = plan_arena(lives, true);
    size_t own = 0;
    for (const ArenaLifetime& l : lives) own += arena_align_up(l.bytes);
    EXPECT_LE(total, own) << seed;
    size_t peak = 0;
    for (int t = -1; t <= ops; ++t) {
      size_t live = 0;
      for (const ArenaLifetime& l : lives) live += l.first <= t && t <= l.last ? arena_align_up(l.bytes) : 0;
      peak = std::max(peak, live);
    }
    EXPECT_GE(total, peak) << seed;
    for (size_t i = 0; i < lives.size(); ++i) {
      const ArenaLifetime& a = lives[i];
      EXPECT_EQ(a.offset % kArenaAlign, 0u);
      EXPECT_LE(a.offset + a.bytes, total);
      for (size_t j = i + 1; j < lives.size(); ++j) {
        const ArenaLifetime& b = lives[j];
        const bool same_time = a.first <= b.last && b.first <= a.last;
        const bool same_bytes = a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
        EXPECT_FALSE(same_time && same_bytes) << "seed " << seed << ": buffers " << a.id << " and " << b.id;
      }
    }
  }
}

TEST(ArenaPlan, WithoutReuseEveryBufferHasItsOwnBytes) {
  std::vector<ArenaLifetime> lives = random_lifetimes(5, 20, 6);
  const size_t total = plan_arena(lives, false);
  size_t own = 0;
  for (const ArenaLifetime& l : lives) own += arena_align_up(l.bytes);
  EXPECT_EQ(total, own);
}

TEST(ArenaPlan, AChainNeedsTwoBuffersRoom) {
  std::vector<ArenaLifetime> lives;
  for (int i = 0; i < 10; ++i) lives.push_back({i, i, i + 1, 256, 0});
  EXPECT_EQ(plan_arena(lives, true), 512u);
}

}  // namespace
}  // namespace tickinfer
