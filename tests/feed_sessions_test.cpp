// Session rules (docs/feed.md, "Sessions"): a stray packet of another session, mid-stream or
// before the first real packet, never takes over and never moves a line's statistics; a real
// session change happens only after End of Session, at sequence 1. Far-future packets and lead
// by kernel receive stamp, per line.
#include <gtest/gtest.h>

#include <numeric>

#include "feed/arbiter.hpp"
#include "feed_test_support.hpp"

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

struct Rig {
  RecordingSink sink;
  Sequencer seq;
  Arbiter arb;
  std::int64_t now = 0;
  explicit Rig(SequencerConfig c) : seq(c, sink), arb(seq, 1024) {}
  static SequencerConfig config(GapPolicy policy = GapPolicy::Skip) {
    SequencerConfig c;
    c.window = 64;
    c.policy = policy;
    c.gap_timeout_ns = 0;
    c.gap_packet_threshold = 8;
    c.far_future_limit = 1000;
    return c;
  }
  void data(int line, std::uint64_t s, std::uint16_t n, const char* session = "S1") {
    auto p = make_packet(s, n, session);
    ++now;
    arb.on_packet(line, p.view(), now, now);
  }
  void eos(int line, std::uint64_t next, const char* session = "S1") {
    auto p = make_control(next, true, session);
    ++now;
    arb.on_packet(line, p.view(), now, now);
  }
  const LineStats& line(int i) const { return arb.line(i); }
};

void expect_clean(const LineStats& s) {
  EXPECT_EQ(s.lost_messages, 0u);
  EXPECT_EQ(s.duplicate_packets, 0u);
  EXPECT_EQ(s.reordered_packets, 0u);
  EXPECT_EQ(s.too_late_packets, 0u);
}

TEST(FeedSessions, AStrayPacketMidStreamIsCountedAndDroppedAndTheSessionEndsNormally) {
  Rig r(Rig::config());
  for (std::uint64_t s = 1; s <= 10; ++s) r.data(0, s, 1);
  r.data(1, 500, 3, "EVIL");      // the stray, on line B
  r.data(1, 1, 1, "EVIL");        // even one at sequence 1 does not switch a live session
  for (std::uint64_t s = 11; s <= 20; ++s) r.data(0, s, 1);
  r.eos(0, 21);
  r.arb.finish(21);
  EXPECT_EQ(r.sink.delivered, iota(1, 20));
  EXPECT_TRUE(r.sink.lost.empty());
  EXPECT_EQ(r.sink.sessions, std::vector<std::string>{"S1"});
  EXPECT_EQ(r.seq.stats().wrong_session_packets, 2u);
  EXPECT_EQ(r.seq.stats().end_of_session, 1u);
  EXPECT_EQ(r.sink.end_next, 21u);
  EXPECT_EQ(r.line(1).other_session_packets, 2u);
  EXPECT_EQ(r.line(1).packets, 0u);
  EXPECT_EQ(r.line(0).packets, 20u);
  EXPECT_EQ(r.line(0).other_session_packets, 0u);
  expect_clean(r.line(0));
  EXPECT_EQ(r.line(1).lost_messages, 20u);  // B really delivered nothing of S1
  EXPECT_EQ(r.line(1).too_late_packets, 0u);
}

TEST(FeedSessions, AStrayBeforeTheFirstRealPacketIsHeldNeverDeliveredAndReplaced) {
  Rig q(Rig::config());
  q.data(1, 7, 2, "EVIL");  // starts at 7: a candidate, held in the window, not delivered
  EXPECT_TRUE(q.sink.delivered.empty());
  EXPECT_FALSE(q.seq.locked());
  for (std::uint64_t s = 1; s <= 12; ++s) q.data(0, s, 1);
  q.eos(0, 13);
  q.arb.finish(13);
  EXPECT_EQ(q.sink.delivered, iota(1, 12));  // S1's own 7 and 8, not the stray's
  EXPECT_TRUE(q.sink.content_ok);
  EXPECT_TRUE(q.sink.lost.empty());
  EXPECT_EQ(q.sink.sessions, std::vector<std::string>{"S1"});
  EXPECT_EQ(q.seq.stats().candidates_dropped, 1u);
  EXPECT_EQ(q.seq.stats().held_dropped, 2u);
  EXPECT_EQ(q.line(1).other_session_packets, 1u);  // the stray moved out of B's counters
  EXPECT_EQ(q.line(1).packets, 0u);
  EXPECT_EQ(q.line(1).messages, 0u);
  EXPECT_EQ(q.line(0).packets, 12u);
  expect_clean(q.line(0));
}

TEST(FeedSessions, AStrayCandidateIsReplacedByTheSessionThatConfirmsFirst) {
  Rig r(Rig::config());
  r.data(1, 40, 1, "EVIL");
  r.data(0, 5, 1);  // S1's start (1..4) was lost on both lines
  r.data(0, 6, 1);
  EXPECT_TRUE(r.sink.delivered.empty());
  r.data(0, 7, 1);  // S1's third increasing packet: S1 is the session
  EXPECT_TRUE(r.seq.locked());
  EXPECT_EQ(r.seq.session().str(), "S1");
  for (std::uint64_t s = 1; s <= 12; ++s) r.data(1, s, 1);  // B has all of it
  r.eos(0, 13);
  r.seq.flush(r.now, LossReason::Skipped);
  EXPECT_EQ(r.sink.delivered, iota(1, 12));
  EXPECT_TRUE(r.sink.lost.empty());
  EXPECT_EQ(r.seq.stats().candidates_dropped, 1u);
  // While EVIL was the candidate, S1 was only a challenger: its packets 5 and 6 counted towards
  // confirming it but were not held (only a candidate's data is); 7, the packet that confirmed
  // it, was kept. So 7 comes from A and everything else from B.
  EXPECT_EQ(r.sink.delivered_line, (std::vector<std::uint8_t>{1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1}));
}

TEST(FeedSessions, AnUnconfirmedStrayIsNeverDeliveredEvenWhenAloneForever) {
  auto c = Rig::config();
  c.join_at_first_seen = true;  // the late joiner: any sequence would do as a start
  Rig r(c);
  r.data(0, 900, 5, "EVIL");
  r.data(0, 900, 5, "EVIL");  // copies do not confirm
  r.data(1, 900, 5, "EVIL");
  for (int i = 0; i < 20; ++i) r.seq.poll(r.now += 1'000'000);
  EXPECT_TRUE(r.sink.delivered.empty());
  EXPECT_TRUE(r.sink.lost.empty());
  EXPECT_FALSE(r.seq.locked());
  EXPECT_EQ(r.seq.stats().sessions, 0u);
}

TEST(FeedSessions, ARealSessionChangeHappensAfterEndOfSessionAtSequenceOne) {
  Rig r(Rig::config());
  for (std::uint64_t s = 1; s <= 5; ++s) {
    r.data(0, s, 1, "DAY1");
    r.data(1, s, 1, "DAY1");
  }
  r.data(0, 50, 1, "DAY2");  // before End of Session: a stray
  r.eos(0, 6, "DAY1");
  r.data(1, 60, 1, "DAY2");  // after it, but not at sequence 1: still a stray
  EXPECT_EQ(r.sink.sessions, std::vector<std::string>{"DAY1"});
  r.data(0, 1, 2, "DAY2");
  r.data(1, 1, 2, "DAY2");
  r.data(0, 3, 1, "DAY2");
  r.data(1, 3, 1, "DAY2");
  r.data(1, 5, 1, "DAY1");  // late copy of the session just left
  r.eos(0, 4, "DAY2");
  r.arb.finish(4);
  EXPECT_EQ(r.sink.sessions, (std::vector<std::string>{"DAY1", "DAY2"}));
  EXPECT_EQ(r.sink.delivered, (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 1, 2, 3}));
  EXPECT_TRUE(r.sink.lost.empty());
  EXPECT_EQ(r.seq.stats().sessions, 2u);
  EXPECT_EQ(r.line(0).other_session_packets, 1u);
  EXPECT_EQ(r.line(1).other_session_packets, 2u);
  for (int l = 0; l < 2; ++l) {
    expect_clean(r.line(l));
    EXPECT_EQ(r.line(l).packets, 7u);
  }
}

TEST(FeedSessions, APinnedSessionCountsOthersPerLineWithoutTouchingTheLinesStatistics) {
  auto c = Rig::config();
  c.pin_session = true;
  c.session = Session::from("S1");
  Rig r(c);
  r.data(1, 1'000'000, 1, "EVIL");
  for (std::uint64_t s = 1; s <= 10; ++s) {
    r.data(0, s, 1);
    r.data(1, s, 1);
    if (s == 4) r.data(1, 123'456, 2, "EVIL");
  }
  r.eos(0, 11);
  r.arb.finish(11);
  EXPECT_EQ(r.sink.delivered, iota(1, 10));
  EXPECT_EQ(r.line(1).other_session_packets, 2u);
  for (int l = 0; l < 2; ++l) {
    expect_clean(r.line(l));
    EXPECT_EQ(r.line(l).packets, 10u);
  }
}

TEST(FeedSessions, AFarFuturePacketHasItsOwnCounterAndMovesNothingElse) {
  Rig r(Rig::config());
  for (std::uint64_t s = 1; s <= 10; ++s) {
    r.data(0, s, 1);
    r.data(1, s, 1);
    if (s == 3) r.data(1, 340'560'663, 1);
  }
  r.eos(0, 11);
  r.arb.finish(11);
  EXPECT_EQ(r.sink.delivered, iota(1, 10));
  EXPECT_EQ(r.line(1).far_future_packets, 1u);
  EXPECT_EQ(r.seq.stats().far_future, 1u);
  for (int l = 0; l < 2; ++l) {
    expect_clean(r.line(l));
    EXPECT_EQ(r.line(l).packets, 10u);
  }
}

TEST(FeedSessions, TheLeadGoesToTheEarlierKernelStampNotTheCopyReadFirst) {
  Rig r(Rig::config());
  for (std::uint64_t s = 1; s <= 10; ++s) {
    auto p = make_packet(s, 1);
    const std::int64_t b_rx = 1'000'000 * static_cast<std::int64_t>(s);
    r.arb.on_packet(0, p.view(), b_rx + 200'000, b_rx + 300'000);  // A read first, received later
    r.arb.on_packet(1, p.view(), b_rx, b_rx + 300'000);
  }
  EXPECT_EQ(r.line(1).led, 10u);
  EXPECT_EQ(r.line(0).led, 0u);
  EXPECT_EQ(r.arb.lead_ns(1).count(), 10);
  EXPECT_EQ(r.arb.lead_ns(1).max(), 200'000);
  EXPECT_EQ(r.arb.lead_ns(1).min(), 200'000);
  // Without a kernel stamp on one copy: read order decides, and is counted, untimed.
  auto p = make_packet(11, 1);
  r.arb.on_packet(0, p.view(), 20'000'000, 20'000'000, false);
  r.arb.on_packet(1, p.view(), 19'000'000, 20'000'000);
  EXPECT_EQ(r.line(0).led, 1u);
  EXPECT_EQ(r.line(0).lead_by_read_order, 1u);
  EXPECT_EQ(r.arb.lead_ns(0).count(), 0);
}

}  // namespace
}  // namespace tickinfer::feed
