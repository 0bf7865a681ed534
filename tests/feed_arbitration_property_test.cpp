// Property: for any interleaving of loss, reordering and duplication across lines A and B, the
// sequencer (through the arbiter) delivers exactly the in-order union of what either line
// delivered, each message once, and reports as lost exactly the sequences neither line delivered.
// Thousands of seeded cases; the failing seed is printed. The reference is a plain std::set.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "feed/arbiter.hpp"
#include "feed_test_support.hpp"

namespace tickinfer::feed {
namespace {

using testing::make_control;
using testing::make_packet;
using testing::RecordingSink;
using testing::TestPacket;

struct Arrival {
  std::uint64_t time;
  std::uint64_t tiebreak;
  int line;
  std::size_t packet;
};

void run_case(std::uint64_t seed, GapPolicy policy) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  const int n_packets = 20 + static_cast<int>(rng() % 200);
  const double loss = u(rng) * 0.4, dup = u(rng) * 0.2, reorder = u(rng) * 0.5;
  const std::uint64_t max_delay = 1 + rng() % 4;  // displacement bound, packets
  std::vector<TestPacket> packets;
  std::uint64_t seq = 1;
  for (int i = 0; i < n_packets; ++i) {
    const auto count = static_cast<std::uint16_t>(1 + rng() % 3);
    packets.push_back(make_packet(seq, count));
    seq += count;
  }
  const std::uint64_t end = seq;
  std::vector<Arrival> arrivals;
  std::set<std::uint64_t> delivered_by_a_line;
  for (int line = 0; line < 2; ++line) {
    for (std::size_t i = 0; i < packets.size(); ++i) {
      if (u(rng) < loss) continue;
      const int copies = u(rng) < dup ? 2 : 1;
      for (int c = 0; c < copies; ++c) {
        const std::uint64_t delay = u(rng) < reorder ? rng() % (max_delay + 1) : 0;
        arrivals.push_back(Arrival{i + delay, rng(), line, i});
      }
      const PacketView v = packets[i].view();
      for (std::uint64_t s = v.seq; s < v.end_seq(); ++s) delivered_by_a_line.insert(s);
    }
  }
  std::sort(arrivals.begin(), arrivals.end(), [](const Arrival& a, const Arrival& b) {
    return a.time != b.time ? a.time < b.time : a.tiebreak < b.tiebreak;
  });

  RecordingSink sink;
  SequencerConfig c;
  c.window = 1024;
  c.policy = policy;
  c.gap_timeout_ns = 0;                                    // count only: the clock is not the point
  c.gap_packet_threshold = static_cast<std::uint32_t>(8 * max_delay + 8);  // > any copy's lateness
  Sequencer sequencer(c, sink);
  Arbiter arbiter(sequencer, 1024);
  std::int64_t now = 0;
  for (const Arrival& a : arrivals) { ++now; arbiter.on_packet(a.line, packets[a.packet].view(), now, now); }
  const TestPacket eos = make_control(end, true);
  ++now;
  arbiter.on_packet(0, eos.view(), now, now);
  if (policy == GapPolicy::Recover) {
    // Every requested range is answered "not available": recovery fails for all of it.
    std::size_t handled = 0;
    for (int round = 0; round < 1000 && sequencer.next_expected() < end; ++round) {
      sequencer.poll(now);
      for (; handled < sink.requested.size(); ++handled) {
        auto [first, count] = sink.requested[handled];
        sequencer.abandon(first, first + count, now);
      }
      if (handled == sink.requested.size()) sequencer.flush(now, LossReason::Unrecoverable);
    }
  } else {
    sequencer.flush(now, LossReason::Skipped);
  }

  const std::vector<std::uint64_t> expect_delivered(delivered_by_a_line.begin(), delivered_by_a_line.end());
  std::vector<std::uint64_t> expect_lost;
  for (std::uint64_t s = 1; s < end; ++s)
    if (!delivered_by_a_line.count(s)) expect_lost.push_back(s);
  ASSERT_EQ(sink.delivered, expect_delivered) << "seed " << seed;
  ASSERT_EQ(sink.lost_seqs(), expect_lost) << "seed " << seed;
  ASSERT_TRUE(sink.content_ok) << "seed " << seed;
  ASSERT_EQ(sequencer.next_expected(), end) << "seed " << seed;
}

TEST(FeedArbitrationProperty, SkipPolicyDeliversTheInOrderUnionAndReportsExactlyWhatBothLinesLost) {
  for (std::uint64_t seed = 1; seed <= 3000; ++seed) {
    run_case(seed, GapPolicy::Skip);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(FeedArbitrationProperty, RecoverPolicyWithFailingRecoveryLosesExactlyWhatBothLinesLost) {
  for (std::uint64_t seed = 10001; seed <= 12000; ++seed) {
    run_case(seed, GapPolicy::Recover);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// Per-line statistics against the same construction: losses, duplicates and reorders per line
// as a plain count over the arrival order.
TEST(FeedArbitrationProperty, PerLineStatisticsMatchAPlainRecount) {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<TestPacket> packets;
    std::uint64_t seq = 1;
    for (int i = 0; i < 150; ++i) {
      const auto count = static_cast<std::uint16_t>(1 + rng() % 3);
      packets.push_back(make_packet(seq, count));
      seq += count;
    }
    RecordingSink sink;
    SequencerConfig c;
    c.window = 1024;
    c.gap_timeout_ns = 0;
    c.gap_packet_threshold = 0;
    Sequencer sequencer(c, sink);
    Arbiter arbiter(sequencer, 1024);
    std::uint64_t dups[2] = {}, reordered[2] = {}, lost[2] = {};
    for (int line = 0; line < 2; ++line) {
      std::vector<std::size_t> order;
      for (std::size_t i = 0; i < packets.size(); ++i) {
        if (u(rng) < 0.1) continue;
        order.push_back(i);
        if (u(rng) < 0.05) order.push_back(i);
      }
      for (std::size_t i = 0; i + 1 < order.size(); ++i)
        if (u(rng) < 0.1) std::swap(order[i], order[i + 1]);
      // Plain recount over the arrival order, and the arbiter fed in that same order.
      std::set<std::size_t> seen;
      std::uint64_t high = 0;
      for (std::size_t i : order) {
        const PacketView v = packets[i].view();
        arbiter.on_packet(line, v, 0, 0);
        if (seen.count(i)) {
          ++dups[line];
          continue;
        }
        if (v.seq < high) ++reordered[line];
        high = std::max(high, v.end_seq());
        seen.insert(i);
      }
      for (std::size_t i = 0; i < packets.size(); ++i)
        if (!seen.count(i)) lost[line] += packets[i].view().count;
    }
    arbiter.finish(seq);
    for (int line = 0; line < 2; ++line) {
      EXPECT_EQ(arbiter.line(line).duplicate_packets, dups[line]) << seed;
      EXPECT_EQ(arbiter.line(line).reordered_packets, reordered[line]) << seed;
      EXPECT_EQ(arbiter.line(line).lost_messages, lost[line]) << seed;
    }
  }
}

}  // namespace
}  // namespace tickinfer::feed
