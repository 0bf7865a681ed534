// Each book rule of docs/book.md on hand-built messages.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "book/book_set.hpp"
#include "book_model.hpp"

namespace tickinfer::book {
namespace {

using namespace testing;  // the message builders
using Queue = std::vector<std::pair<std::uint64_t, std::uint32_t>>;

Capacity small() { return Capacity{1024, 256, 64}; }

Queue queue(const BookSet& b, std::uint16_t loc, Side s, std::size_t level) {
  Queue q;
  b.for_each_order(loc, s, level, [&](std::uint64_t ref, std::uint32_t sh) { q.emplace_back(ref, sh); });
  return q;
}

TEST(BookRules, AddsQueueAtTheTailOfTheirLevelAndSortBestFirst) {
  BookSet b(small());
  b.apply(add(1, 1, 'B', 100, 100'000));
  b.apply(add(1, 2, 'B', 200, 100'100, true));  // F adds too
  b.apply(add(1, 3, 'B', 300, 100'000));
  b.apply(add(1, 4, 'S', 50, 100'300));
  b.apply(add(1, 5, 'S', 60, 100'200));
  ASSERT_EQ(b.depth(1, Side::Bid), 2u);
  EXPECT_EQ(b.level(1, Side::Bid, 0), (Level{100'100, 200, 1}));
  EXPECT_EQ(b.level(1, Side::Bid, 1), (Level{100'000, 400, 2}));
  EXPECT_EQ(b.level(1, Side::Bid, 2), Level{});
  EXPECT_EQ(b.level(1, Side::Ask, 0), (Level{100'200, 60, 1}));
  EXPECT_EQ(b.level(1, Side::Ask, 1), (Level{100'300, 50, 1}));
  EXPECT_EQ(queue(b, 1, Side::Bid, 1), (Queue{{1, 100}, {3, 300}}));
  Level top[4];
  EXPECT_EQ(b.top(1, Side::Ask, top, 4), 2u);
  EXPECT_EQ(top[0].price, 100'200u);
  EXPECT_EQ(b.live_orders(), 5u);
  EXPECT_EQ(b.depth(2, Side::Bid), 0u);
}

TEST(BookRules, WorkedReplaceExample) {
  BookSet b(small());
  b.apply(add(7, 100, 'B', 300, 100'000));
  const Applied u = b.apply(replace(7, 100, 205, 200, 100'100));
  EXPECT_TRUE(u.book_message && u.changed);
  ASSERT_EQ(b.depth(7, Side::Bid), 1u);
  EXPECT_EQ(b.level(7, Side::Bid, 0), (Level{100'100, 200, 1}));
  EXPECT_EQ(queue(b, 7, Side::Bid, 0), (Queue{{205, 200}}));
  b.apply(exec(7, 205, 200));  // executed in full: gone, no D follows
  EXPECT_EQ(b.depth(7, Side::Bid), 0u);
  EXPECT_EQ(b.live_orders(), 0u);
  b.apply(del(7, 100));  // the original ref died with the replace
  EXPECT_EQ(b.integrity(7).unknown_ref, 1u);
  EXPECT_EQ(b.totals().overfill, 0u);
}

TEST(BookRules, ReplaceAtTheSamePriceLosesPriority) {
  BookSet b(small());
  b.apply(add(2, 10, 'S', 100, 5'000));
  b.apply(add(2, 11, 'S', 100, 5'000));
  b.apply(add(2, 12, 'S', 100, 5'000));
  b.apply(replace(2, 10, 13, 150, 5'000));
  EXPECT_EQ(queue(b, 2, Side::Ask, 0), (Queue{{11, 100}, {12, 100}, {13, 150}}));
  EXPECT_EQ(b.level(2, Side::Ask, 0), (Level{5'000, 350, 3}));
  // The new order keeps the original's side and locate, whatever the header says.
  b.apply(replace(3, 13, 14, 10, 4'000));
  EXPECT_EQ(b.level(2, Side::Ask, 0), (Level{4'000, 10, 1}));
  EXPECT_EQ(b.integrity(2).locate_mismatch, 1u);
  EXPECT_EQ(b.depth(3, Side::Ask), 0u);
}

TEST(BookRules, ReplaceEdgeCases) {
  BookSet b(small());
  b.apply(add(1, 1, 'B', 100, 1'000));
  b.apply(add(1, 2, 'B', 100, 1'100));
  b.apply(replace(1, 99, 3, 100, 1'000));  // unknown original: nothing
  EXPECT_EQ(b.integrity(1).unknown_ref, 1u);
  EXPECT_EQ(b.live_orders(), 2u);
  b.apply(replace(1, 1, 2, 100, 1'200));  // new ref live: original gone, nothing added
  EXPECT_EQ(b.integrity(1).duplicate_ref, 1u);
  EXPECT_EQ(b.live_orders(), 1u);
  EXPECT_EQ(b.level(1, Side::Bid, 0), (Level{1'100, 100, 1}));
  b.apply(replace(1, 2, 4, 0, 1'100));  // new shares 0: original gone, nothing added
  EXPECT_EQ(b.integrity(1).zero_shares, 1u);
  EXPECT_EQ(b.live_orders(), 0u);
  b.apply(add(1, 5, 'S', 10, 2'000));
  b.apply(replace(1, 5, 5, 20, 2'100));  // the same ref again: the original left first, so it is free
  EXPECT_EQ(b.level(1, Side::Ask, 0), (Level{2'100, 20, 1}));
  EXPECT_EQ(b.integrity(1).duplicate_ref, 1u);
}

TEST(BookRules, ExecutionWithPriceReducesAtTheDisplayPrice) {
  BookSet b(small());
  b.apply(add(1, 1, 'S', 500, 20'000));
  const Applied c = b.apply(exec_price(1, 1, 200, 19'900, 'N'));
  EXPECT_TRUE(c.changed);
  ASSERT_EQ(b.depth(1, Side::Ask), 1u);
  EXPECT_EQ(b.level(1, Side::Ask, 0), (Level{20'000, 300, 1}));
  b.apply(exec_price(1, 1, 100, 20'500, 'Y'));
  EXPECT_EQ(b.level(1, Side::Ask, 0), (Level{20'000, 200, 1}));
}

TEST(BookRules, ReductionsToZeroRemoveAndOverfillsAreCounted) {
  BookSet b(small());
  b.apply(add(1, 1, 'B', 100, 1'000));
  b.apply(add(1, 2, 'B', 100, 1'000));
  b.apply(add(1, 3, 'B', 100, 1'000));
  b.apply(cancel(1, 1, 40));
  EXPECT_EQ(queue(b, 1, Side::Bid, 0), (Queue{{1, 60}, {2, 100}, {3, 100}}));
  b.apply(cancel(1, 1, 60));  // X to zero: off the book, no D
  b.apply(exec(1, 2, 150));   // more than it had
  EXPECT_EQ(b.integrity(1).overfill, 1u);
  EXPECT_EQ(queue(b, 1, Side::Bid, 0), (Queue{{3, 100}}));
  const Applied nothing = b.apply(exec(1, 3, 0));
  EXPECT_FALSE(nothing.changed);
  EXPECT_EQ(b.level(1, Side::Bid, 0), (Level{1'000, 100, 1}));
  b.apply(del(1, 3));
  EXPECT_EQ(b.depth(1, Side::Bid), 0u);
  EXPECT_EQ(b.live_orders(), 0u);
}

TEST(BookRules, UnknownAndDuplicateRefsChangeNothing) {
  BookSet b(small());
  b.apply(add(1, 1, 'B', 100, 1'000));
  EXPECT_FALSE(b.apply(add(1, 1, 'S', 50, 2'000)).changed);  // duplicate: the old order stays
  for (const auto& m : {exec(1, 9, 1), exec_price(1, 9, 1, 1), cancel(1, 9, 1), del(1, 9)}) {
    const Applied a = b.apply(m);
    EXPECT_TRUE(a.book_message);
    EXPECT_FALSE(a.changed);
  }
  EXPECT_EQ(b.integrity(1).duplicate_ref, 1u);
  EXPECT_EQ(b.integrity(1).unknown_ref, 4u);
  EXPECT_EQ(b.depth(1, Side::Ask), 0u);
  EXPECT_EQ(b.level(1, Side::Bid, 0), (Level{1'000, 100, 1}));
}

TEST(BookRules, BadSidesAndZeroSharesAreDropped) {
  BookSet b(small());
  b.apply(add(1, 1, 'X', 100, 1'000));
  b.apply(add(1, 2, 'B', 0, 1'000));
  EXPECT_EQ(b.integrity(1).bad_side, 1u);
  EXPECT_EQ(b.integrity(1).zero_shares, 1u);
  EXPECT_EQ(b.live_orders(), 0u);
  b.apply(add(1, 1, 'B', 5, 1'000));  // neither ref was taken
  b.apply(add(1, 2, 'B', 5, 1'000));
  EXPECT_EQ(b.live_orders(), 2u);
}

TEST(BookRules, LocateMismatchAppliesToTheOrdersOwnBook) {
  BookSet b(small());
  b.apply(add(4, 1, 'B', 100, 1'000));
  const Applied a = b.apply(exec(5, 1, 30));
  EXPECT_EQ(a.locate, 4);
  EXPECT_EQ(b.level(4, Side::Bid, 0), (Level{1'000, 70, 1}));
  EXPECT_EQ(b.integrity(4).locate_mismatch, 1u);
  EXPECT_EQ(b.integrity(5), Integrity{});
  OrderInfo o;
  ASSERT_TRUE(b.find_order(1, o));
  EXPECT_EQ(o.locate, 4);
  EXPECT_EQ(o.side, Side::Bid);
  EXPECT_EQ(o.price, 1'000u);
  EXPECT_EQ(o.shares, 70u);
  EXPECT_FALSE(b.find_order(2, o));
}

TEST(BookRules, CrossedAndLockedCountMessagesAfterWhichTheBookWasSo) {
  BookSet b(small());
  b.apply(add(1, 1, 'B', 100, 1'000));
  b.apply(add(1, 2, 'S', 100, 1'000));  // locked
  b.apply(add(1, 3, 'B', 100, 1'100));  // crossed
  b.apply(exec(1, 9, 1));               // unknown ref: the book is still crossed
  b.apply(del(1, 3));                   // locked again
  b.apply(del(1, 2));                   // one side empty
  EXPECT_EQ(b.integrity(1).locked, 2u);
  EXPECT_EQ(b.integrity(1).crossed, 2u);
}

TEST(BookRules, TradesCrossesBrokenTradesAndStatusLeaveTheBook) {
  BookSet b(small());
  b.apply(add(1, 1, 'B', 100, 1'000));
  itch::Message p = msg(itch::Type::Trade, 1);
  p.trade.order_ref = 1;
  p.trade.side = 'B';
  p.trade.shares = 100;
  p.trade.price = 1'000;
  itch::Message q = msg(itch::Type::CrossTrade, 1);
  q.cross.shares = 100;
  itch::Message br = msg(itch::Type::BrokenTrade, 1);
  for (const auto& m : {p, q, br, msg(itch::Type::SystemEvent, 0), msg(itch::Type::StockTradingAction, 1)}) {
    const Applied a = b.apply(m);
    EXPECT_FALSE(a.book_message);
    EXPECT_FALSE(a.changed);
  }
  EXPECT_EQ(b.level(1, Side::Bid, 0), (Level{1'000, 100, 1}));
  EXPECT_EQ(b.totals(), Integrity{});
}

TEST(BookRules, DirectoryMapsLocatesToSymbols) {
  BookSet b(small());
  EXPECT_EQ(b.symbol(3), "");
  EXPECT_EQ(b.locate_of("AAPL"), -1);
  b.apply(directory(3, "AAPL"));
  b.apply(directory(4, "BRK A"));
  EXPECT_EQ(b.symbol(3), "AAPL");
  EXPECT_EQ(b.symbol(4), "BRK A");
  EXPECT_EQ(b.locate_of("AAPL"), 3);
  EXPECT_EQ(b.locate_of("BRK A"), 4);
  EXPECT_EQ(b.locate_of(""), -1);
  b.apply(directory(100, "FAR"));  // beyond the 64 instruments: counted, not stored
  EXPECT_EQ(b.locate_of("FAR"), -1);
  EXPECT_EQ(b.integrity(100).capacity_rejects, 1u);
}

TEST(BookRules, UnsyncedBooksCountMessagesAndClearEmptiesForARebuild) {
  BookSet b(small());
  b.apply(add(1, 1, 'B', 100, 1'000));
  b.apply(add(1, 2, 'S', 100, 1'100));
  b.apply(add(2, 3, 'S', 100, 1'100));
  EXPECT_TRUE(b.is_synced(1));
  b.mark_unsynced(1);
  EXPECT_FALSE(b.is_synced(1));
  b.apply(add(1, 4, 'B', 50, 1'000));  // still applied
  b.apply(del(1, 77));
  EXPECT_EQ(b.integrity(1).while_unsynced, 2u);
  EXPECT_EQ(b.level(1, Side::Bid, 0), (Level{1'000, 150, 2}));
  b.clear(1);
  EXPECT_EQ(b.depth(1, Side::Bid), 0u);
  EXPECT_EQ(b.depth(1, Side::Ask), 0u);
  EXPECT_EQ(b.live_orders(), 1u);  // locate 2's order stays
  EXPECT_FALSE(b.is_synced(1));
  b.apply(add(1, 1, 'B', 10, 900));  // its refs are free again
  EXPECT_EQ(b.integrity(1).duplicate_ref, 0u);
  b.mark_synced(1);
  EXPECT_TRUE(b.is_synced(1));
  EXPECT_EQ(b.level(2, Side::Ask, 0), (Level{1'100, 100, 1}));
}

TEST(BookRules, CapacityExhaustionIsCountedAndUnsyncs) {
  BookSet b(Capacity{4, 2, 8});
  for (std::uint64_t r = 1; r <= 4; ++r) b.apply(add(1, r, 'B', 10, 1'000 + (r % 2)));
  EXPECT_EQ(b.live_orders(), 4u);
  b.apply(add(1, 5, 'B', 10, 1'000));  // out of orders
  EXPECT_EQ(b.integrity(1).capacity_rejects, 1u);
  EXPECT_FALSE(b.is_synced(1));
  b.apply(del(1, 1));
  b.apply(add(2, 6, 'S', 10, 2'000));  // out of levels
  EXPECT_EQ(b.integrity(2).capacity_rejects, 1u);
  EXPECT_FALSE(b.is_synced(2));
  b.apply(add(9, 7, 'S', 10, 2'000));  // locate beyond the instruments
  EXPECT_EQ(b.integrity(9).capacity_rejects, 1u);
  EXPECT_EQ(b.totals().capacity_rejects, 3u);
  EXPECT_EQ(b.live_orders(), 3u);
}

// Sides that grew keep their blocks; when the arena's untouched end runs out it compacts instead
// of refusing, so only the level capacity itself limits adds.
TEST(BookRules, SideArenaCompactsInsteadOfRefusing) {
  BookSet b(Capacity{64, 16, 4});
  std::uint64_t ref = 1;
  for (int round = 0; round < 6; ++round) {
    for (std::uint16_t loc = 0; loc < 4; ++loc) {
      for (char side : {'B', 'S'}) {
        const std::uint64_t first = ref;
        for (std::uint32_t p = 0; p < 16; ++p) b.apply(add(loc, ref++, side, 1, 1'000 + (round % 2) * 7 * p + p));
        ASSERT_EQ(b.depth(loc, side == 'B' ? Side::Bid : Side::Ask), 16u);
        for (std::uint64_t r = first; r < ref; ++r) b.apply(del(loc, r));
      }
    }
  }
  EXPECT_EQ(b.totals().capacity_rejects, 0u);
  EXPECT_GT(b.arena_compactions(), 0u);
  b.apply(add(0, ref++, 'B', 1, 5));
  EXPECT_EQ(b.level(0, Side::Bid, 0), (Level{5, 1, 1}));
}

TEST(BookRules, MemoryIsWhatTheCapacityAsksFor) {
  BookSet b(small());
  EXPECT_GT(b.memory_bytes(), 1024u * 32);
  EXPECT_LT(b.memory_bytes(), 1u << 20);
}

}  // namespace
}  // namespace tickinfer::book
