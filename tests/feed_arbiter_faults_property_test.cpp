// Property: for random fault mixes on lines A and B (loss, duplication, reordering, and packets
// that must not count: another session's, far-future ones, malformed datagrams), every per-line
// counter equals the injected truth exactly, and the delivered stream is still the in-order union
// of both lines. Kernel stamps are the arrival times, so the lead goes to the earlier copy.
// Thousands of seeded cases; the failing seed is printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
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

enum class Kind { Real, Stray, FarFuture, Malformed };

struct Arrival {
  std::uint64_t time;
  std::uint64_t tiebreak;
  int line;
  Kind kind;
  std::size_t packet;  // Real: index into the session's packets
};

struct Truth {
  std::uint64_t packets = 0, messages = 0, lost = 0, dups = 0, reordered = 0;
  std::uint64_t other_session = 0, far_future = 0, malformed = 0, led = 0;
};

void run_case(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  const int n_packets = 20 + static_cast<int>(rng() % 200);
  const double loss = u(rng) * 0.3, dup = u(rng) * 0.1, reorder = u(rng) * 0.4;
  const double stray = u(rng) * 0.1, far = u(rng) * 0.05, bad = u(rng) * 0.05;
  const std::uint64_t max_delay = 1 + rng() % 4;
  std::vector<TestPacket> packets;
  std::uint64_t seq = 1;
  for (int i = 0; i < n_packets; ++i) {
    const auto count = static_cast<std::uint16_t>(1 + rng() % 3);
    packets.push_back(make_packet(seq, count));
    seq += count;
  }
  const std::uint64_t end = seq;
  const TestPacket stray_packet = make_packet(1 + rng() % end, 2, "STRAY");
  const TestPacket far_packet = make_packet(end + 10'000'000 + rng() % 1000, 1);

  // Packet 0 arrives first on line A, unharmed: the session is confirmed from the start.
  std::vector<Arrival> arrivals{Arrival{0, 0, 0, Kind::Real, 0}};
  std::set<std::uint64_t> delivered_by_a_line;
  for (std::uint64_t s = 1; s < packets[0].view().end_seq(); ++s) delivered_by_a_line.insert(s);
  for (int line = 0; line < 2; ++line) {
    for (std::size_t i = 0; i < packets.size(); ++i) {
      const std::uint64_t t = 2 * i + 1;
      if (u(rng) < stray) arrivals.push_back(Arrival{t + rng() % 3, rng(), line, Kind::Stray, 0});
      if (u(rng) < far) arrivals.push_back(Arrival{t + rng() % 3, rng(), line, Kind::FarFuture, 0});
      if (u(rng) < bad) arrivals.push_back(Arrival{t + rng() % 3, rng(), line, Kind::Malformed, 0});
      if ((line == 0 && i == 0) || u(rng) < loss) continue;
      const int copies = u(rng) < dup ? 2 : 1;
      for (int c = 0; c < copies; ++c) {
        const std::uint64_t delay = u(rng) < reorder ? 2 * (rng() % (max_delay + 1)) : 0;
        arrivals.push_back(Arrival{t + delay, rng(), line, Kind::Real, i});
      }
      const PacketView v = packets[i].view();
      for (std::uint64_t s = v.seq; s < v.end_seq(); ++s) delivered_by_a_line.insert(s);
    }
  }
  std::sort(arrivals.begin(), arrivals.end(), [](const Arrival& a, const Arrival& b) {
    return a.time != b.time ? a.time < b.time : a.tiebreak < b.tiebreak;
  });

  // The truth, counted over the arrival order the plain way.
  Truth truth[2];
  std::set<std::size_t> seen[2];
  std::uint64_t high[2] = {0, 0};
  std::map<std::size_t, std::pair<int, std::uint64_t>> first_copy;  // packet -> (line, order)
  std::set<std::size_t> matched;
  for (std::size_t k = 0; k < arrivals.size(); ++k) {
    const Arrival& a = arrivals[k];
    Truth& t = truth[a.line];
    if (a.kind == Kind::Stray) { ++t.other_session; continue; }
    if (a.kind == Kind::FarFuture) { ++t.far_future; continue; }
    if (a.kind == Kind::Malformed) { ++t.malformed; continue; }
    const PacketView v = packets[a.packet].view();
    ++t.packets;
    t.messages += v.count;
    auto f = first_copy.find(a.packet);
    if (f == first_copy.end()) {
      first_copy[a.packet] = {a.line, k};
    } else if (f->second.first != a.line && !matched.count(a.packet)) {
      matched.insert(a.packet);
      ++truth[f->second.first].led;  // stamps are arrival times: the first copy was earlier
    }
    if (seen[a.line].count(a.packet)) { ++t.dups; continue; }
    if (v.seq < high[a.line]) ++t.reordered;
    high[a.line] = std::max(high[a.line], v.end_seq());
    seen[a.line].insert(a.packet);
  }
  for (int line = 0; line < 2; ++line)
    for (std::size_t i = 0; i < packets.size(); ++i)
      if (!seen[line].count(i)) truth[line].lost += packets[i].view().count;

  RecordingSink sink;
  SequencerConfig c;
  c.window = 1024;
  c.policy = GapPolicy::Skip;
  c.gap_timeout_ns = 0;
  c.gap_packet_threshold = static_cast<std::uint32_t>(16 * max_delay + 16);
  Sequencer sequencer(c, sink);
  Arbiter arbiter(sequencer, 1024);
  std::int64_t now = 0;
  for (const Arrival& a : arrivals) {
    now += 1000;  // kernel stamps in arrival order
    switch (a.kind) {
      case Kind::Real: arbiter.on_packet(a.line, packets[a.packet].view(), now, now); break;
      case Kind::Stray: arbiter.on_packet(a.line, stray_packet.view(), now, now); break;
      case Kind::FarFuture: arbiter.on_packet(a.line, far_packet.view(), now, now); break;
      case Kind::Malformed: arbiter.on_malformed(a.line); break;
    }
  }
  const TestPacket eos = make_control(end, true);
  arbiter.on_packet(0, eos.view(), now + 1, now + 1);
  sequencer.flush(now + 1, LossReason::Skipped);
  arbiter.finish(end);

  const std::vector<std::uint64_t> expect_delivered(delivered_by_a_line.begin(), delivered_by_a_line.end());
  ASSERT_EQ(sink.delivered, expect_delivered) << "seed " << seed;
  ASSERT_TRUE(sink.content_ok) << "seed " << seed;
  for (int line = 0; line < 2; ++line) {
    const LineStats& s = arbiter.line(line);
    const Truth& t = truth[line];
    ASSERT_EQ(s.packets, t.packets) << "seed " << seed << " line " << line;
    ASSERT_EQ(s.messages, t.messages) << "seed " << seed << " line " << line;
    ASSERT_EQ(s.lost_messages, t.lost) << "seed " << seed << " line " << line;
    ASSERT_EQ(s.duplicate_packets, t.dups) << "seed " << seed << " line " << line;
    ASSERT_EQ(s.reordered_packets, t.reordered) << "seed " << seed << " line " << line;
    ASSERT_EQ(s.too_late_packets, 0u) << "seed " << seed << " line " << line;
    ASSERT_EQ(s.other_session_packets, t.other_session) << "seed " << seed << " line " << line;
    ASSERT_EQ(s.far_future_packets, t.far_future) << "seed " << seed << " line " << line;
    ASSERT_EQ(s.malformed_packets, t.malformed) << "seed " << seed << " line " << line;
    ASSERT_EQ(s.led, t.led) << "seed " << seed << " line " << line;
    ASSERT_EQ(s.lead_by_read_order, 0u) << "seed " << seed << " line " << line;
    ASSERT_EQ(s.control_packets, line == 0 ? 1u : 0u) << "seed " << seed << " line " << line;
  }
}

TEST(FeedArbiterFaultsProperty, EveryPerLineCounterEqualsTheInjectedTruth) {
  for (std::uint64_t seed = 1; seed <= 3000; ++seed) {
    run_case(seed);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace tickinfer::feed
