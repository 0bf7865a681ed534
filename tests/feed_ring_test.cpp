// SpscRing across two threads (run under ThreadSanitizer with the tsan preset), its capacity
// rules, and FeedHandler delivering into a ring that a consumer thread drains.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include "feed/exchange.hpp"
#include "tickinfer/feed.hpp"
#include "tickinfer/spsc_ring.hpp"

namespace tickinfer {
namespace {

TEST(FeedSpscRing, RejectsCapacitiesThatAreNotPowersOfTwo) {
  EXPECT_THROW(SpscRing<int>(0), std::invalid_argument);
  EXPECT_THROW(SpscRing<int>(1), std::invalid_argument);
  EXPECT_THROW(SpscRing<int>(12), std::invalid_argument);
  SpscRing<int> r(4);
  int v = 0;
  EXPECT_FALSE(r.try_pop(v));
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(r.try_push(i));
  EXPECT_FALSE(r.try_push(99));  // full
  EXPECT_EQ(r.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(r.try_pop(v));
    EXPECT_EQ(v, i);
  }
  EXPECT_FALSE(r.try_pop(v));
  // Claim/commit: nothing is visible before commit; a full ring has no slot to claim.
  int* slot = r.try_claim();
  ASSERT_NE(slot, nullptr);
  *slot = 42;
  EXPECT_FALSE(r.try_pop(v));
  r.commit();
  ASSERT_TRUE(r.try_pop(v));
  EXPECT_EQ(v, 42);
  for (int i = 0; i < 4; ++i) {
    *r.try_claim() = i;
    r.commit();
  }
  EXPECT_EQ(r.try_claim(), nullptr);
}

TEST(FeedSpscRing, TwoThreadsPassEveryItemOnceInOrder) {
  struct Item {
    std::uint64_t seq;
    std::uint64_t check;
  };
  SpscRing<Item> ring(64);  // small: both the full and the empty paths run often
  constexpr std::uint64_t kItems = 200'000;
  std::thread producer([&] {
    for (std::uint64_t i = 0; i < kItems;) {  // alternate copy-in and claim/commit
      if (i & 1) {
        if (Item* slot = ring.try_claim()) {
          slot->seq = i;
          slot->check = i * 2654435761u;
          ring.commit();
          ++i;
        }
      } else if (ring.try_push(Item{i, i * 2654435761u})) {
        ++i;
      }
    }
  });
  std::uint64_t expect = 0;
  bool ok = true;
  while (expect < kItems) {
    Item it;
    if (!ring.try_pop(it)) continue;
    if (it.seq != expect || it.check != expect * 2654435761u) ok = false;
    ++expect;
  }
  producer.join();
  EXPECT_TRUE(ok);
  EXPECT_EQ(ring.size(), 0u);
}

TEST(FeedSpscRing, FeedHandlerDeliversIntoARingThatAnotherThreadDrains) {
  using namespace feed;
  ExchangeConfig ex;
  ex.messages = 20'000;
  ex.rate = 200'000;
  ex.line_b_enabled = false;
  ex.faults[0].loss = 0.01;
  ex.linger_ns = 20'000'000'000;
  Exchange exchange(ex);
  SpscRing<FeedEvent> ring(256);
  FeedConfig fc;
  fc.line_a.address = "127.0.0.1";
  fc.recovery_host = "127.0.0.1";
  fc.recovery_port = exchange.rerequest_port();
  fc.recovery_timeout_ns = 25'000'000;
  fc.recovery_attempts = 12;
  fc.idle = "backoff";
  FeedHandler feed(fc, ring);
  exchange.set_destinations(make_address("127.0.0.1", feed.port(kLineA)), sockaddr_in{});
  std::atomic<bool> stop_exchange{false}, stop_feed{false};
  std::thread ex_thread([&] { exchange.run(&stop_exchange); });
  std::thread feed_thread([&] { feed.run(stop_feed); });
  std::uint64_t expect = 1;
  bool in_order = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (expect <= ex.messages && std::chrono::steady_clock::now() < deadline) {
    FeedEvent e;
    if (!ring.try_pop(e)) {
      std::this_thread::yield();
      continue;
    }
    if (e.seq != expect) in_order = false;
    ++expect;
  }
  stop_feed = true;
  feed_thread.join();
  stop_exchange = true;
  ex_thread.join();
  EXPECT_TRUE(in_order);
  EXPECT_EQ(expect, ex.messages + 1);
  const FeedStats st = feed.stats();
  EXPECT_EQ(st.sequencer.lost, 0u);
  EXPECT_EQ(st.kernel_drops[0], 0u);
}

}  // namespace
}  // namespace tickinfer
