// Randomized property test: BookSet against the simple model of book_model.hpp under seeded
// random message sequences, valid and invalid (unknown and duplicate refs, bad sides, zero
// shares, overfills, locate mismatches, replaces of every kind, unsynced books and clears, and
// capacities small enough to be exhausted). After every message: every level (price, shares,
// orders), every L3 queue and every integrity counter of the touched book.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "book/book_set.hpp"
#include "book_model.hpp"

namespace tickinfer::book {
namespace {

using namespace testing;

struct Generator {
  std::mt19937_64 rng;
  std::uint16_t instruments;
  std::uint64_t next_ref = 1;
  std::vector<std::uint64_t> refs;  // refs handed out so far (live or not)
  std::uint32_t mid = 10'000;
  std::uint64_t ref_base = 0, ref_stride = 1;  // fresh refs: base + n * stride (the index's two parts)

  std::uint32_t pick(std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); }
  std::uint64_t some_ref() {
    if (refs.empty() || pick(20) == 0) return 1'000'000 + pick(1000);  // never added
    return refs[refs.size() - 1 - pick(static_cast<std::uint32_t>(std::min<std::size_t>(refs.size(), 200)))];
  }
  std::uint16_t locate() { return static_cast<std::uint16_t>(pick(instruments + 1)); }  // one past: overflow
  std::uint32_t price() {
    if (pick(50) == 0) mid = std::max<std::uint32_t>(100, mid + pick(21) - 10);
    return mid + pick(41) - 20;
  }
  std::uint32_t shares() { return pick(30) == 0 ? 0 : 1 + pick(500); }
  char side() {
    const std::uint32_t r = pick(60);
    return r == 0 ? 'Z' : (r % 2 ? 'B' : 'S');
  }
  std::uint64_t fresh() {
    const std::uint64_t r =
        pick(40) == 0 && !refs.empty() ? some_ref() : ref_base + ref_stride * next_ref++;  // some duplicates
    refs.push_back(r);
    return r;
  }

  // Every draw in its own statement: the order of evaluation of function arguments differs
  // between compilers, and the sequence must be the same for any of them.
  itch::Message next() {
    const std::uint32_t kind = pick(100);
    const std::uint16_t loc = locate();
    if (kind < 40) {
      const std::uint64_t ref = fresh();
      const char s = side();
      const std::uint32_t n = shares();
      return add(loc, ref, s, n, price(), kind % 2);
    }
    if (kind >= 97) return msg(pick(2) ? itch::Type::Trade : itch::Type::CrossTrade, loc);
    const std::uint64_t ref = some_ref();
    if (kind < 52) return exec(loc, ref, pick(300));
    if (kind < 58) {
      const std::uint32_t n = pick(300);
      const std::uint32_t p = price();
      return exec_price(loc, ref, n, p, pick(2) ? 'Y' : 'N');
    }
    if (kind < 68) return cancel(loc, ref, pick(300));
    if (kind < 85) return del(loc, ref);
    const std::uint64_t fresh_ref = fresh();
    const std::uint32_t n = shares();
    return replace(loc, ref, fresh_ref, n, price());
  }
};

struct RunStats {
  Integrity totals;
  std::size_t deepest = 0;
};

RunStats run(std::uint64_t seed, const Capacity& cap, int steps, std::uint64_t ref_base = 0,
             std::uint64_t ref_stride = 1) {
  RunStats stats;
  BookSet set(cap);
  Model model(cap);
  Generator gen{std::mt19937_64(seed), static_cast<std::uint16_t>(cap.instruments), 1, {}, 10'000, ref_base, ref_stride};
  for (int i = 0; i < steps; ++i) {
    const std::uint32_t r = gen.pick(1000);
    if (r == 0) {
      const std::uint16_t loc = gen.locate();
      set.mark_unsynced(loc);
      model.mark_unsynced(loc);
    } else if (r == 1) {
      const std::uint16_t loc = gen.locate();
      set.clear(loc);
      model.clear(loc);
    }
    const itch::Message m = gen.next();
    const Applied a = set.apply(m);
    model.apply(m);
    std::string diff = compare(set, model, m.header.locate);
    if (diff.empty() && a.locate != m.header.locate) diff = compare(set, model, a.locate);
    EXPECT_EQ(diff, "") << "seed " << seed << " step " << i << " type " << char(m.header.type);
    if (!diff.empty()) return stats;
    EXPECT_EQ(set.live_orders(), model.live_orders()) << "seed " << seed << " step " << i;
    if (set.live_orders() != model.live_orders()) return stats;
    for (Side s : {Side::Bid, Side::Ask}) stats.deepest = std::max(stats.deepest, set.depth(a.locate, s));
  }
  for (std::uint16_t loc : model.locates()) EXPECT_EQ(compare(set, model, loc), "");
  Integrity want = model.integrity(static_cast<std::uint16_t>(cap.instruments));  // the overflow record
  for (std::uint16_t loc : model.locates()) want += model.integrity(loc);
  const Integrity got = set.totals();
  EXPECT_EQ(got, want);
  stats.totals = got;
  return stats;
}

// The runs of one test together met every kind of trouble the counters count.
void expect_every_counter(const Integrity& t) {
  EXPECT_GT(t.unknown_ref, 0u);
  EXPECT_GT(t.duplicate_ref, 0u);
  EXPECT_GT(t.overfill, 0u);
  EXPECT_GT(t.bad_side, 0u);
  EXPECT_GT(t.zero_shares, 0u);
  EXPECT_GT(t.locate_mismatch, 0u);
  EXPECT_GT(t.crossed, 0u);
  EXPECT_GT(t.locked, 0u);
  EXPECT_GT(t.while_unsynced, 0u);
}

TEST(BookModel, RoomyCapacityMatchesTheModelAfterEveryMessage) {
  Integrity all;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const RunStats r = run(seed, Capacity{1 << 14, 1 << 12, 8}, 40'000);
    EXPECT_GE(r.deepest, 20u);
    all += r.totals;
  }
  expect_every_counter(all);
}

// The order index keeps references below 2^30 in direct pages and the rest (and any whose page
// cannot be had) in a hash: runs that cross 2^30, and that spread orders one per page so the
// pages run out, must match the model just the same.
TEST(BookModel, ReferencesAcrossTheIndexsDirectPagesAndItsHashMatchTheModel) {
  for (std::uint64_t seed = 11; seed <= 12; ++seed) {
    run(seed, Capacity{1 << 14, 1 << 12, 8}, 30'000, (std::uint64_t{1} << 30) - 5'000, 1);
    run(seed, Capacity{1 << 14, 1 << 12, 8}, 30'000, 0, 9'000);  // 8 pages for thousands of orders
  }
}

TEST(BookModel, TinyCapacityRejectsLikeTheModel) {
  Integrity all;
  for (std::uint64_t seed = 11; seed <= 16; ++seed) {
    const RunStats r = run(seed, Capacity{64, 12, 4}, 20'000);
    EXPECT_GT(r.totals.capacity_rejects, 100u);
    all += r.totals;
  }
  expect_every_counter(all);
}

TEST(BookModel, ManyInstrumentsAndDeepSides) {
  const RunStats r = run(99, Capacity{1 << 12, 1 << 11, 40}, 60'000);
  EXPECT_GE(r.deepest, 30u);
  expect_every_counter(r.totals);
}

}  // namespace
}  // namespace tickinfer::book
