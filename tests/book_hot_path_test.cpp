// The book's hot path never allocates or locks: after construction, a million messages (adds,
// executions, cancels, deletes, replaces over hundreds of symbols, levels created and destroyed,
// sides hundreds of levels deep, the side arena compacting) run with malloc/operator new and
// pthread_mutex_lock counted; ITCH as the feed's protocol (decoder, books, emitted events) from
// wire bytes likewise; the file path's look-ahead replay likewise; and running out of capacity is
// counted, not fatal.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <unordered_map>
#include <vector>

#include "book/book_set.hpp"
#include "book/itch_event_decoder.hpp"
#include "book/itch_replay.hpp"
#include "book_model.hpp"
#include "feed/byte_order.hpp"

// A sanitizer runtime owns malloc, so the counting replacements cannot be linked in; the tests
// then skip (the sanitizer and fuzz builds check the same code for memory errors instead).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BOOK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define BOOK_SANITIZED 1
#endif
#endif
#ifndef BOOK_SANITIZED
#include "support/counting_allocator.hpp"
#endif

namespace tickinfer::book {
namespace {

using namespace testing;

#ifndef BOOK_SANITIZED

TEST(BookHotPath, AMillionMessagesNeverAllocateOrLock) {
  const std::vector<itch::Message> stream = make_stream(1'000'000, 600, 7);
  BookSet books(Capacity{1 << 17, 1 << 15, 1024});
  std::vector<itch::Message> directory_msgs;
  for (std::uint16_t l = 1; l <= 600; ++l) {
    char name[9];
    std::snprintf(name, sizeof name, "S%u", unsigned{l});
    directory_msgs.push_back(directory(l, name));
  }
  g_allocs = 0;
  g_locks = 0;
  g_counting = true;
  for (const auto& m : directory_msgs) books.apply(m);
  std::uint64_t changed = 0;
  std::size_t deepest = 0;
  for (const auto& m : stream) {
    const Applied a = books.apply(m);
    changed += a.changed;
    if (a.locate <= 4) deepest = std::max(deepest, books.depth(a.locate, Side::Bid));
  }
  Level top[10];
  books.top(1, Side::Ask, top, 10);
  std::uint64_t queued = 0;
  books.for_each_order(1, Side::Ask, 0, [&](std::uint64_t, std::uint32_t) { ++queued; });
  g_counting = false;
  EXPECT_EQ(g_allocs.load(), 0);
  EXPECT_EQ(g_locks.load(), 0);
  EXPECT_GT(changed, 990'000u);
  EXPECT_GE(deepest, 200u);  // sides hundreds of levels deep
  EXPECT_GT(queued, 0u);
  const Integrity t = books.totals();
  EXPECT_EQ(t.unknown_ref + t.duplicate_ref + t.overfill + t.capacity_rejects, 0u);
  EXPECT_EQ(books.symbol(600), "S600");
}

TEST(BookHotPath, ExhaustingCapacityIsCountedNotFatal) {
  const std::vector<itch::Message> stream = make_stream(200'000, 50, 8);
  BookSet books(Capacity{1500, 300, 64});
  g_allocs = 0;
  g_counting = true;
  for (const auto& m : stream) books.apply(m);
  g_counting = false;
  EXPECT_EQ(g_allocs.load(), 0);
  const Integrity t = books.totals();
  EXPECT_GT(t.capacity_rejects, 0u);
  EXPECT_LE(books.live_orders(), 1500u);
  EXPECT_LE(books.live_levels(), 300u);
  bool some_unsynced = false;
  for (std::uint16_t l = 1; l <= 50; ++l) some_unsynced |= !books.is_synced(l);
  EXPECT_TRUE(some_unsynced);
}


struct CountingEmitter final : feed::EventEmitter {
  std::uint64_t quotes = 0, trades = 0;
  void emit(const md::Event& e) noexcept override { ++(e.kind == md::Event::Kind::Quote ? quotes : trades); }
};

// ITCH as the feed's protocol: the decoder, the books and the events it emits, message by message
// from wire bytes, allocate and lock nothing after construction.
TEST(BookHotPath, TheItchFeedProtocolNeverAllocatesOrLocks) {
  const std::vector<std::vector<std::uint8_t>> wire = wire_day(make_stream(300'000, 200, 9), 200);
  ItchEventConfig cfg;
  cfg.symbols = {"S1", "S2", "S3", "S50", "S199"};
  cfg.date = itch::Date{2019, 12, 30};
  cfg.capacity = Capacity{1 << 16, 1 << 14, 512};
  ItchEventDecoder decoder(cfg);
  CountingEmitter out;
  std::uint64_t undecodable = 0;
  g_allocs = 0;
  g_locks = 0;
  g_counting = true;
  for (std::uint64_t i = 0; i < wire.size(); ++i) {
    undecodable += !decoder.decode(i + 1, wire[i].data(), static_cast<std::uint16_t>(wire[i].size()), out);
  }
  decoder.on_lost(1, 1);
  g_counting = false;
  EXPECT_EQ(g_allocs.load(), 0);
  EXPECT_EQ(g_locks.load(), 0);
  EXPECT_EQ(undecodable, 0u);
  EXPECT_EQ(decoder.decode_counters().total_decoded, wire.size());
  EXPECT_GT(out.quotes, 100u);  // 5 of the 200 symbols are delivered
  EXPECT_GT(out.trades, 10u);
  EXPECT_EQ(decoder.books().totals().unknown_ref, 0u);
}

// The file path: ItchReplay with look-ahead (records decoded into its ring, prefetched, applied
// later, flushed by a hole and at the end) allocates and locks nothing either.
TEST(BookHotPath, TheLookaheadReplayNeverAllocatesOrLocks) {
  const std::vector<std::vector<std::uint8_t>> wire = wire_day(make_stream(300'000, 200, 13), 200);
  BookSet books(Capacity{1 << 16, 1 << 14, 512});
  ItchReplay replay(books, nullptr, Lookahead::On);
  g_allocs = 0;
  g_locks = 0;
  g_counting = true;
  for (std::uint64_t i = 0; i < wire.size(); ++i) {
    if (i == wire.size() / 2) {  // this record never comes
      replay.on_lost(i + 1, 1);
      if (replay.held() != 0) break;  // on_lost flushes (checked below)
      continue;
    }
    replay.on_record(i + 1, wire[i].data(), static_cast<std::uint16_t>(wire[i].size()));
  }
  replay.on_end();
  g_counting = false;
  EXPECT_EQ(g_allocs.load(), 0);
  EXPECT_EQ(g_locks.load(), 0);
  EXPECT_EQ(replay.decode_counters().total_decoded, wire.size() - 1);  // no early break either
  EXPECT_EQ(replay.held(), 0u);
  EXPECT_EQ(replay.lost(), 1u);
  EXPECT_LE(books.totals().unknown_ref, 3u);  // at most the messages naming the lost one's order
  EXPECT_GT(books.live_orders(), 1000u);
}

#else
TEST(BookHotPath, SkippedUnderSanitizers) { GTEST_SKIP() << "the sanitizer runtime owns malloc"; }
#endif

}  // namespace
}  // namespace tickinfer::book
