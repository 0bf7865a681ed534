// ItchReplay's look-ahead (files) against the one-message-at-a-time replay (the live feed): the
// same wire records, with undecodable ones and a lost hole among them, must reach the observer in
// the same order with the same outcome and the same books at that moment, and end in the same
// books and counters. The hole flushes what came before it; on_end flushes the rest.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "book/itch_replay.hpp"
#include "book/order_index.hpp"
#include "book_model.hpp"

namespace tickinfer::book {
namespace {

using namespace testing;

// What the observer saw of one message: the books' live orders just before it was applied (what
// before() sees), its place, its outcome and the top of its book then.
struct Seen {
  std::uint64_t live_before;
  std::uint64_t seq;
  std::uint8_t type;
  std::uint16_t locate;
  bool changed, book_message, resting;
  std::uint32_t resting_shares;
  Level bid, ask;
  bool synced;
  bool operator==(const Seen&) const = default;
};

class Recorder final : public ReplayObserver {
 public:
  explicit Recorder(const BookSet& books) : books_(books) {}
  void before(const itch::Message&) noexcept override {
    ++before_;
    live_before_ = books_.live_orders();
  }
  void on_message(std::uint64_t seq, const itch::Message& m, const Applied& a) noexcept override {
    Seen s{live_before_, seq, static_cast<std::uint8_t>(m.header.type), a.locate, a.changed, a.book_message, a.resting,
           a.resting_shares, {}, {}, false};
    if (a.locate < books_.capacity().instruments) {
      s.bid = books_.level(a.locate, Side::Bid, 0);
      s.ask = books_.level(a.locate, Side::Ask, 0);
      s.synced = books_.is_synced(a.locate);
    }
    seen.push_back(s);
  }
  std::vector<Seen> seen;
  std::uint64_t before_ = 0;

 private:
  std::uint64_t live_before_ = 0;
  const BookSet& books_;
};

// A wire day (book_model.hpp) with every 997th record cut short (undecodable).
std::vector<std::vector<std::uint8_t>> cut_wire_day(std::size_t n, std::uint16_t symbols, std::uint64_t seed) {
  auto wire = wire_day(make_stream(n, symbols, seed), symbols);
  for (std::size_t i = 996; i < wire.size(); i += 997) wire[i].pop_back();
  return wire;
}

struct ReplayRun {
  explicit ReplayRun(Lookahead lookahead) : books(Capacity{1 << 16, 1 << 14, 256}), seen(books), replay(books, &seen, lookahead) {}
  BookSet books;
  Recorder seen;
  ItchReplay replay;
};

TEST(BookLookahead, SameMessagesSameOrderSameBooksAsOneAtATime) {
  const auto wire = cut_wire_day(200'000, 120, 11);
  const std::uint64_t hole_at = 120'000;  // records [hole_at, hole_at + 50) never come
  ReplayRun ahead(Lookahead::On), single(Lookahead::Off);
  std::uint64_t decoded_before_hole = 0;
  for (std::uint64_t i = 0; i < wire.size(); ++i) {
    const std::uint64_t seq = i + 1;
    if (i >= hole_at && i < hole_at + 50) {
      if (i == hole_at) {
        for (ReplayRun* r : {&ahead, &single}) r->replay.on_lost(seq, 50);
        // Everything before the hole was applied before the books were marked.
        EXPECT_EQ(ahead.replay.held(), 0u);
        EXPECT_EQ(ahead.seen.seen.size(), decoded_before_hole);
        EXPECT_EQ(single.seen.seen.size(), decoded_before_hole);
      }
      continue;
    }
    for (ReplayRun* r : {&ahead, &single}) {
      r->replay.on_record(seq, wire[i].data(), static_cast<std::uint16_t>(wire[i].size()));
    }
    if (i < hole_at) decoded_before_hole = single.seen.seen.size();
    if (i == 50'000) {  // mid-stream the look-ahead holds all but one slot of its ring
      EXPECT_EQ(ahead.replay.held(), ItchReplay::kLookahead - 1);
      EXPECT_EQ(single.replay.held(), 0u);
    }
  }
  EXPECT_LT(ahead.seen.seen.size(), single.seen.seen.size());  // still held
  ahead.replay.on_end();
  EXPECT_EQ(ahead.replay.held(), 0u);

  ASSERT_EQ(ahead.seen.seen.size(), single.seen.seen.size());
  EXPECT_EQ(ahead.seen.before_, single.seen.before_);
  for (std::size_t i = 0; i < single.seen.seen.size(); ++i) {
    ASSERT_EQ(ahead.seen.seen[i], single.seen.seen[i]) << "message " << i << ", seq " << single.seen.seen[i].seq;
  }
  EXPECT_EQ(ahead.replay.lost(), 50u);
  EXPECT_EQ(ahead.replay.last_seq(), single.replay.last_seq());
  EXPECT_EQ(ahead.replay.decode_counters().total_decoded, single.replay.decode_counters().total_decoded);
  EXPECT_EQ(ahead.replay.decode_counters().total_wrong_length, single.replay.decode_counters().total_wrong_length);
  EXPECT_GT(single.replay.decode_counters().total_wrong_length, 100u);  // the cut records
  EXPECT_TRUE(ahead.books.totals() == single.books.totals());
  EXPECT_EQ(ahead.books.live_orders(), single.books.live_orders());
  EXPECT_EQ(ahead.books.live_levels(), single.books.live_levels());
  for (std::uint16_t l = 1; l <= 120; ++l) {
    for (Side s : {Side::Bid, Side::Ask}) {
      ASSERT_EQ(ahead.books.depth(l, s), single.books.depth(l, s));
      for (std::size_t k = 0; k < single.books.depth(l, s); ++k) {
        ASSERT_TRUE(ahead.books.level(l, s, k) == single.books.level(l, s, k));
        std::vector<std::uint64_t> qa, qs;
        ahead.books.for_each_order(l, s, k, [&](std::uint64_t ref, std::uint32_t) { qa.push_back(ref); });
        single.books.for_each_order(l, s, k, [&](std::uint64_t ref, std::uint32_t) { qs.push_back(ref); });
        ASSERT_EQ(qa, qs);
      }
    }
  }
}

// A flush in the middle (a reader stopping at a batch's end) applies what is held, and the replay
// goes on with look-ahead after it.
TEST(BookLookahead, FlushAppliesWhatIsHeldAndReadingGoesOn) {
  const auto wire = cut_wire_day(5'000, 20, 3);
  ReplayRun ahead(Lookahead::On), single(Lookahead::Off);
  for (std::uint64_t i = 0; i < wire.size(); ++i) {
    for (ReplayRun* r : {&ahead, &single}) r->replay.on_record(i + 1, wire[i].data(), static_cast<std::uint16_t>(wire[i].size()));
    if (i % 1000 == 999) {
      ahead.replay.flush();
      EXPECT_EQ(ahead.replay.held(), 0u);
      ASSERT_EQ(ahead.seen.seen, single.seen.seen) << "after record " << i + 1;
    }
  }
  ahead.replay.on_end();
  EXPECT_EQ(ahead.seen.seen, single.seen.seen);
  EXPECT_GT(single.seen.seen.size(), 4'000u);
}

// The stages are hints, run here as the replay runs them (Index well ahead, Order closer, applies
// in between, so what a stage reads has often changed since): over a stream of adds, executions,
// cancels, deletes and replaces, with orders living in the index's hash (references at 2^30 and
// above), messages naming orders long gone or never there, locates beyond the capacity and types
// that touch no book. The books end exactly as books given no hints; the fuzzer and sanitizer
// builds run the same stages on random states for reads out of bounds.
TEST(BookLookahead, PrefetchOnAnyStateLeavesTheBooksAsWithout) {
  const Capacity capacity{1 << 12, 1 << 10, 8};
  std::vector<itch::Message> stream;
  for (std::uint64_t k = 0; k < 200; ++k) {  // hashed: references past the direct pages
    stream.push_back(add(1 + k % 6, (std::uint64_t{1} << 30) + k * 7, k % 2 ? 'B' : 'S', 100, 5000 + k % 9));
  }
  for (const auto& m : make_stream(30'000, 6, 5)) stream.push_back(m);
  for (std::uint64_t k = 0; k < 200; k += 2) stream.push_back(del(1 + k % 6, (std::uint64_t{1} << 30) + k * 7));
  const std::vector<itch::Message> odd = {add(9, 1, 'B', 100, 1000), del(1, 1ull << 62), del(3, 5), exec(60000, 7, 1),
                                          replace(1, 0, 1, 1, 1), msg(itch::Type::Trade, 1),
                                          msg(static_cast<itch::Type>('Z'), 3), add(2, 1ull << 40, 'S', 1, 1)};
  for (std::size_t i = 0; i < odd.size(); ++i) stream.insert(stream.begin() + 25'000 + 997 * i, odd[i]);
  BookSet hinted(capacity), plain(capacity);
  for (std::size_t i = 0; i < stream.size(); ++i) {
    if (i + 31 < stream.size()) hinted.prefetch(stream[i + 31], BookSet::LoadStage::Index);
    if (i + 16 < stream.size()) hinted.prefetch(stream[i + 16], BookSet::LoadStage::Order);
    hinted.prefetch(stream[i > 40 ? i - 40 : 0], BookSet::LoadStage::Order);  // long gone
    hinted.apply(stream[i]);
    plain.apply(stream[i]);
  }
  EXPECT_GT(plain.totals().unknown_ref, 0u);  // the odd ones were there
  EXPECT_TRUE(hinted.totals() == plain.totals());
  EXPECT_EQ(hinted.live_orders(), plain.live_orders());
  EXPECT_GT(plain.live_orders(), 100u);
  for (std::uint16_t l = 0; l < 8; ++l) {
    for (Side s : {Side::Bid, Side::Ask}) {
      ASSERT_EQ(hinted.depth(l, s), plain.depth(l, s));
      for (std::size_t k = 0; k < plain.depth(l, s); ++k) ASSERT_TRUE(hinted.level(l, s, k) == plain.level(l, s, k));
    }
  }
}

// The Order stage's read of the index: the order of a reference in a direct page, kNone for one
// never added, erased, or living in the hash (which find() still finds: peek never probes it).
TEST(BookLookahead, PeekReadsTheDirectPagesOnly) {
  OrderIndex index(64);
  auto add = [&index](std::uint64_t ref, std::uint32_t order) {
    bool found;
    const std::size_t slot = index.probe(ref, found);
    ASSERT_FALSE(found);
    index.fill(slot, ref, order);
  };
  const std::uint64_t hashed = OrderIndex::kDirectRefs + 5;
  add(7, 1);
  add(9000, 2);  // another page
  add(hashed, 3);
  EXPECT_EQ(index.peek(7), 1u);
  EXPECT_EQ(index.peek(9000), 2u);
  EXPECT_EQ(index.peek(8), kNone);     // same page, never added
  EXPECT_EQ(index.peek(20000), kNone);  // no page
  EXPECT_EQ(index.find(hashed), 3u);
  EXPECT_EQ(index.peek(hashed), kNone);
  bool found;
  index.erase(index.probe(7, found));
  EXPECT_EQ(index.peek(7), kNone);
  EXPECT_EQ(index.peek(9000), 2u);
}

}  // namespace
}  // namespace tickinfer::book
