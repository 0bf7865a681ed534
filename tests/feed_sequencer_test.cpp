// Sequencer semantics with a fake clock: in-order delivery, reordering, duplicates, stale and
// far-future sequences, gaps detected by time and by packet count under both policies,
// recovery abandon, window overrun, heartbeats, and session changes.
#include <gtest/gtest.h>

#include <numeric>

#include "feed/sequencer.hpp"
#include "feed_test_support.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::feed {
namespace {

using testing::make_control;
using testing::make_packet;
using testing::RecordingSink;

std::vector<std::uint64_t> iota(std::uint64_t from, std::uint64_t to) {  // [from, to]
  std::vector<std::uint64_t> v(to - from + 1);
  std::iota(v.begin(), v.end(), from);
  return v;
}

SequencerConfig config(GapPolicy policy, std::int64_t timeout_ns = 1000, std::uint32_t packets = 0) {
  SequencerConfig c;
  c.window = 16;
  c.policy = policy;
  c.gap_timeout_ns = timeout_ns;
  c.gap_packet_threshold = packets;
  c.far_future_limit = 1000;
  return c;
}

struct Fixture {
  RecordingSink sink;
  Sequencer seq;
  std::int64_t now = 0;
  explicit Fixture(const SequencerConfig& c) : seq(c, sink) {}
  void feed(std::uint64_t s, std::uint16_t n, const char* session = "S1", std::uint8_t line = 0) {
    auto p = make_packet(s, n, session);
    seq.on_packet(p.view(), RxMeta{now, line}, now);
  }
  void control(std::uint64_t next, bool eos, const char* session = "S1") {
    auto p = make_control(next, eos, session);
    seq.on_packet(p.view(), RxMeta{now, 0}, now);
  }
};

TEST(FeedSequencer, DeliversInOrderPacketsDirectly) {
  Fixture f(config(GapPolicy::Skip));
  f.feed(1, 3);
  f.feed(4, 1);
  f.feed(5, 2);
  EXPECT_EQ(f.sink.delivered, iota(1, 6));
  EXPECT_TRUE(f.sink.content_ok);
  EXPECT_EQ(f.seq.stats().in_order_direct, 6u);
  EXPECT_EQ(f.seq.next_expected(), 7u);
  EXPECT_TRUE(f.sink.lost.empty());
}

TEST(FeedSequencer, EarlyPacketsWaitInTheWindowUntilTheHoleFills) {
  Fixture f(config(GapPolicy::Skip));
  f.feed(1, 1);
  f.feed(4, 2);
  f.feed(3, 1);
  EXPECT_EQ(f.sink.delivered, iota(1, 1));
  EXPECT_EQ(f.seq.buffered(), 3u);
  f.feed(2, 1);
  EXPECT_EQ(f.sink.delivered, iota(1, 5));
  EXPECT_TRUE(f.sink.content_ok);
  EXPECT_EQ(f.seq.buffered(), 0u);
}

TEST(FeedSequencer, DuplicatesAndStaleCopiesAreDroppedAndCounted) {
  Fixture f(config(GapPolicy::Skip));
  f.feed(1, 3);
  f.feed(1, 3);   // all three already delivered
  f.feed(5, 1);
  f.feed(5, 1);   // already buffered
  EXPECT_EQ(f.seq.stats().duplicates, 4u);
  f.feed(4, 1);
  f.feed(6, 40);  // N = 46
  f.feed(2, 1);   // 44 behind, window 16: stale
  EXPECT_EQ(f.seq.stats().stale, 1u);
  EXPECT_EQ(f.sink.delivered, iota(1, 45));
}

TEST(FeedSequencer, AGapIsSkippedAfterTheTimeoutWithItsExactRange) {
  Fixture f(config(GapPolicy::Skip, 1000));
  f.feed(1, 2);
  f.feed(6, 2);  // 3..5 missing
  f.now = 999;
  EXPECT_EQ(f.seq.poll(f.now), 0u);
  EXPECT_TRUE(f.sink.lost.empty());
  f.now = 1000;
  EXPECT_EQ(f.seq.poll(f.now), 2u);
  ASSERT_EQ(f.sink.lost.size(), 1u);
  EXPECT_EQ(f.sink.lost[0], (std::pair<std::uint64_t, std::uint64_t>{3, 3}));
  EXPECT_EQ(f.sink.lost_reason[0], LossReason::Skipped);
  EXPECT_EQ(f.sink.delivered, (std::vector<std::uint64_t>{1, 2, 6, 7}));
  f.feed(4, 1);  // the late copy is now a duplicate
  EXPECT_EQ(f.seq.stats().duplicates, 1u);
}

TEST(FeedSequencer, AGapIsSkippedAfterThePacketCount) {
  Fixture f(config(GapPolicy::Skip, 0, 3));
  f.feed(1, 1);
  f.feed(3, 1);  // opens the hole at 2
  f.feed(4, 1);
  f.feed(5, 1);
  EXPECT_TRUE(f.sink.lost.empty());
  f.feed(6, 1);  // third packet since the hole opened
  ASSERT_EQ(f.sink.lost.size(), 1u);
  EXPECT_EQ(f.sink.lost[0], (std::pair<std::uint64_t, std::uint64_t>{2, 1}));
  EXPECT_EQ(f.sink.delivered, (std::vector<std::uint64_t>{1, 3, 4, 5, 6}));
}

TEST(FeedSequencer, RecoverPolicyRequestsEveryMissingRangeOnceAndWaits) {
  Fixture f(config(GapPolicy::Recover, 1000));
  f.feed(1, 1);
  f.feed(3, 1);
  f.feed(6, 2);  // missing 2, 4..5
  f.now = 1000;
  f.seq.poll(f.now);
  ASSERT_EQ(f.sink.requested.size(), 2u);
  EXPECT_EQ(f.sink.requested[0], (std::pair<std::uint64_t, std::uint64_t>{2, 1}));
  EXPECT_EQ(f.sink.requested[1], (std::pair<std::uint64_t, std::uint64_t>{4, 2}));
  f.now = 5000;
  f.seq.poll(f.now);  // nothing new: no repeat requests (retries are the client's job)
  EXPECT_EQ(f.sink.requested.size(), 2u);
  f.feed(2, 1, "S1", 2);
  f.feed(4, 2, "S1", 2);
  EXPECT_EQ(f.sink.delivered, iota(1, 7));
  EXPECT_TRUE(f.sink.lost.empty());
}

TEST(FeedSequencer, AbandonedRangesAreReportedUnrecoverableAndDeliveryContinues) {
  Fixture f(config(GapPolicy::Recover, 1000));
  f.feed(1, 1);
  f.feed(3, 1);
  f.feed(6, 1);
  f.now = 1000;
  f.seq.poll(f.now);
  f.feed(4, 1, "S1", 2);         // partial answer for [4, 6)
  f.seq.abandon(4, 6, f.now);    // 4..5 given up: but N is still stuck at 2
  EXPECT_EQ(f.sink.delivered, iota(1, 1));
  f.seq.abandon(2, 3, f.now);
  EXPECT_EQ(f.sink.delivered, (std::vector<std::uint64_t>{1, 3, 4, 6}));
  EXPECT_EQ(f.sink.lost_seqs(), (std::vector<std::uint64_t>{2, 5}));
  for (auto r : f.sink.lost_reason) EXPECT_EQ(r, LossReason::Unrecoverable);
}

TEST(FeedSequencer, HeartbeatsRevealATailGap) {
  Fixture f(config(GapPolicy::Recover, 1000));
  f.feed(1, 2);
  f.control(3, false);  // nothing missing
  f.now = 2000;
  f.seq.poll(f.now);
  EXPECT_TRUE(f.sink.requested.empty());
  f.control(6, false);  // 3..5 exist but never arrived
  f.now = 3000;
  f.seq.poll(f.now);
  ASSERT_EQ(f.sink.requested.size(), 1u);
  EXPECT_EQ(f.sink.requested[0], (std::pair<std::uint64_t, std::uint64_t>{3, 3}));
  EXPECT_EQ(f.seq.stats().heartbeats, 2u);
}

TEST(FeedSequencer, FarFutureSequencesAreCountedAndDropped) {
  Fixture f(config(GapPolicy::Skip));
  f.feed(1, 1);
  f.feed(5000, 3);
  f.control(1'000'000, false);
  EXPECT_EQ(f.seq.stats().far_future, 4u);
  EXPECT_EQ(f.seq.highest_seen(), 1u);
  f.now = 1'000'000;
  f.seq.poll(f.now);
  EXPECT_TRUE(f.sink.lost.empty());
  f.feed(2, 1);
  EXPECT_EQ(f.sink.delivered, iota(1, 2));
}

TEST(FeedSequencer, WindowOverrunSkipsUnderSkipAndRequestsUnderRecover) {
  {
    Fixture f(config(GapPolicy::Skip, 0, 0));
    f.feed(1, 1);
    f.feed(3, 1);
    f.feed(30, 1);  // 30 - 2 >= 16: slide the window
    EXPECT_EQ(f.sink.lost_seqs(), (std::vector<std::uint64_t>{2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}));
    EXPECT_EQ(f.sink.delivered, (std::vector<std::uint64_t>{1, 3}));
    f.feed(15, 15);  // 15..29 fill the window, then 30
    EXPECT_EQ(f.sink.delivered.back(), 30u);
  }
  {
    Fixture f(config(GapPolicy::Recover, 1000, 0));
    f.feed(1, 1);
    f.feed(30, 1);
    f.feed(31, 1);
    EXPECT_EQ(f.seq.stats().window_overruns, 2u);
    EXPECT_TRUE(f.sink.requested.empty());
    f.now = 1000;
    f.seq.poll(f.now);  // one range for the hole and both dropped messages
    ASSERT_EQ(f.sink.requested.size(), 1u);
    EXPECT_EQ(f.sink.requested[0], (std::pair<std::uint64_t, std::uint64_t>{2, 30}));
    f.feed(2, 30, "S1", 2);
    EXPECT_EQ(f.sink.delivered, iota(1, 31));
  }
  {
    Fixture f(config(GapPolicy::Recover, 0, 0));
    f.feed(1, 1);
    f.feed(30, 1);
    f.seq.poll(1'000'000);  // no trigger configured: nothing requested, nothing lost
    EXPECT_TRUE(f.sink.requested.empty());
    EXPECT_TRUE(f.sink.lost.empty());
  }
  {
    Fixture f(config(GapPolicy::Recover, 1000, 0));
    f.feed(1, 1);
    f.feed(30, 1);
    f.now = 1000;
    f.seq.poll(f.now);
    ASSERT_EQ(f.sink.requested.size(), 1u);
    EXPECT_EQ(f.sink.requested[0], (std::pair<std::uint64_t, std::uint64_t>{2, 29}));
    f.feed(2, 29, "S1", 2);
    EXPECT_EQ(f.sink.delivered, iota(1, 30));
  }
}

TEST(FeedSequencer, ANewSessionIsANewSequenceSpaceNotAGap) {
  Fixture f(config(GapPolicy::Skip));
  f.feed(1, 3, "DAY1");
  f.feed(5, 1, "DAY1");  // 4 missing in DAY1
  f.control(6, true, "DAY1");  // End of Session: the only way out of a locked session
  f.feed(1, 2, "DAY2");
  EXPECT_EQ(f.sink.sessions, (std::vector<std::string>{"DAY1", "DAY2"}));
  EXPECT_EQ(f.sink.delivered, (std::vector<std::uint64_t>{1, 2, 3, 5, 1, 2}));
  ASSERT_EQ(f.sink.lost.size(), 1u);
  EXPECT_EQ(f.sink.lost[0], (std::pair<std::uint64_t, std::uint64_t>{4, 1}));
  EXPECT_EQ(f.sink.lost_reason[0], LossReason::SessionChanged);
  f.feed(4, 1, "DAY1");  // late packet of the old session
  EXPECT_EQ(f.seq.stats().stale, 1u);
  EXPECT_EQ(f.seq.next_expected(), 3u);
}

TEST(FeedSequencer, APinnedSessionIgnoresOthersAndALateJoinerStartsWhereItJoins) {
  auto c = config(GapPolicy::Skip);
  c.pin_session = true;
  c.session = Session::from("GOOD");
  Fixture f(c);
  f.feed(1, 1, "BAD");
  EXPECT_EQ(f.seq.stats().wrong_session_packets, 1u);
  f.feed(1, 1, "GOOD");
  EXPECT_EQ(f.sink.delivered, iota(1, 1));
  auto late = config(GapPolicy::Skip);
  late.join_at_first_seen = true;
  Fixture g(late);
  g.feed(1000, 2);
  g.feed(1002, 1);
  EXPECT_TRUE(g.sink.delivered.empty());  // a late joiner's candidate is held until confirmed
  g.feed(1003, 1);
  EXPECT_EQ(g.sink.delivered, iota(1000, 1003));
  EXPECT_TRUE(g.sink.lost.empty());
}

// A start at sequence 1 is in sync at once; a late joiner (Recover) is in sync only once the
// re-requested 1 .. joined_at - 1 and everything after them are delivered.
TEST(FeedSequencer, JoiningAndCatchingUpAreStated) {
  {
    Fixture f(config(GapPolicy::Recover));
    f.now = 50;
    f.feed(1, 3);
    EXPECT_EQ(f.seq.stats().joined_at, 1u);
    EXPECT_EQ(f.seq.stats().in_sync_seq, 1u);  // the first message: nothing before it is missing
    EXPECT_EQ(f.seq.stats().first_packet_ns, 50);
  }
  Fixture f(config(GapPolicy::Recover));
  f.now = 100;
  f.feed(9, 2);  // joins at 9: 1..8 are a gap
  EXPECT_EQ(f.seq.stats().joined_at, 9u);
  EXPECT_EQ(f.seq.stats().in_sync_seq, 0u);
  f.now = 200;
  f.feed(11, 1);
  f.feed(1, 4, "S1", 2);  // re-requested, line 2
  EXPECT_EQ(f.seq.stats().in_sync_seq, 0u);  // 5..8 still missing
  f.now = 300;
  f.feed(5, 4, "S1", 2);
  EXPECT_EQ(f.sink.delivered, iota(1, 11));
  EXPECT_EQ(f.seq.stats().in_sync_seq, 11u);
  EXPECT_EQ(f.seq.stats().in_sync_ns, 300);
  EXPECT_EQ(f.seq.stats().first_packet_ns, 100);
  f.feed(14, 1);  // a later gap does not unset it
  EXPECT_EQ(f.seq.stats().in_sync_seq, 11u);
}

TEST(FeedSequencer, BadConfigurationsAreRejected) {
  RecordingSink sink;
  auto c = config(GapPolicy::Skip);
  c.window = 12;
  EXPECT_THROW(Sequencer(c, sink), Error);
  c.window = 16;
  c.far_future_limit = 16;
  EXPECT_THROW(Sequencer(c, sink), Error);
  c.far_future_limit = 100;
  c.first_seq = 0;
  EXPECT_THROW(Sequencer(c, sink), Error);
}

}  // namespace
}  // namespace tickinfer::feed
