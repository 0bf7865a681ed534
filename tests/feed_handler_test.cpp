// FeedHandler on a real socket fed hostile datagrams: every malformed one is counted by reason
// and dropped, an undecodable message consumes its sequence number without reaching the
// application, a wrong session is ignored, and good messages around all of it still arrive in order.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <vector>

#include "feed/messages.hpp"
#include "feed/moldudp64.hpp"
#include "feed/udp_socket.hpp"
#include "tickinfer/feed.hpp"

namespace tickinfer::feed {
namespace {

std::vector<std::uint8_t> packet(std::uint64_t seq, const std::vector<std::vector<std::uint8_t>>& msgs,
                                 const char* session = "GOOD") {
  std::vector<std::uint8_t> b(2048);
  PacketBuilder pb(b.data(), b.size());
  pb.start(Session::from(session), seq);
  for (const auto& m : msgs) pb.add(m.data(), static_cast<std::uint16_t>(m.size()));
  b.resize(pb.finish());
  return b;
}

std::vector<std::uint8_t> quote(std::uint32_t instrument) {
  md::Quote q;
  q.instrument = instrument;
  q.bid_price = 100;
  q.ask_price = 101;
  std::vector<std::uint8_t> m(kQuoteBytes);
  encode_quote(q, m.data());
  return m;
}

TEST(FeedHandler, HostileDatagramsAreCountedByReasonAndGoodMessagesStillArriveInOrder) {
  FeedConfig c;
  c.line_a.address = "127.0.0.1";
  c.session = "GOOD";
  c.gap_timeout_ns = 1'000'000'000;  // nothing here should need a gap decision
  std::vector<std::uint64_t> seqs;
  std::vector<std::uint32_t> instruments;
  FeedHandler feed(c, [&](const FeedEvent& e) {
    seqs.push_back(e.seq);
    instruments.push_back(e.event.instrument());
  });
  UdpSocket tx = UdpSocket::sender();
  const auto to = make_address("127.0.0.1", feed.port(kLineA));
  auto send = [&](const std::vector<std::uint8_t>& d) { ASSERT_TRUE(tx.send_to(d.data(), d.size(), to)); };

  send(packet(1, {quote(1)}));
  send(std::vector<std::uint8_t>(7, 0));                        // too short
  auto cut = packet(2, {quote(2)});
  cut.resize(cut.size() - 5);
  send(cut);                                                    // block runs past the datagram
  auto trailing = packet(2, {quote(2)});
  trailing.push_back(0);
  send(trailing);                                               // trailing bytes
  send(packet(2, {std::vector<std::uint8_t>(65, 'Q')}));        // longer than a slot
  send(std::vector<std::uint8_t>(3000, 0));                     // longer than the receive buffer
  send(packet(2, {quote(99)}, "EVIL"));                         // another session
  send(packet(2, {std::vector<std::uint8_t>{'Z', 1, 2}, quote(3)}));  // unknown type, then a quote
  send(packet(4, {quote(4)}));

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (seqs.size() < 3 && std::chrono::steady_clock::now() < deadline) {
    if (feed.poll() == 0) usleep(100);
  }
  EXPECT_EQ(seqs, (std::vector<std::uint64_t>{1, 3, 4}));  // 2 was the undecodable block
  EXPECT_EQ(instruments, (std::vector<std::uint32_t>{1, 3, 4}));
  const FeedStats s = feed.stats();
  EXPECT_EQ(s.malformed, 4u);
  EXPECT_EQ(s.malformed_by_status[static_cast<int>(ParseStatus::TooShort)], 1u);
  EXPECT_EQ(s.malformed_by_status[static_cast<int>(ParseStatus::BlockTruncated)], 1u);
  EXPECT_EQ(s.malformed_by_status[static_cast<int>(ParseStatus::TrailingBytes)], 1u);
  EXPECT_EQ(s.malformed_by_status[static_cast<int>(ParseStatus::MessageTooLong)], 1u);
  EXPECT_EQ(s.truncated, 1u);
  EXPECT_EQ(s.sequencer.wrong_session_packets, 1u);
  EXPECT_EQ(s.undecodable, 1u);
  EXPECT_EQ(s.sequencer.lost, 0u);
  EXPECT_EQ(s.datagrams, 9u);
}

// Without --session: a stray before the first real packet and one mid-stream take nothing over;
// the real session's End of Session ends it, and the per-line and lost-range reports are exact.
TEST(FeedHandler, UnpinnedAStraySessionNeverTakesOverAndIsCountedPerLine) {
  FeedConfig c;
  c.line_a.address = "127.0.0.1";
  c.gap_timeout_ns = 1'000'000'000;
  c.gap_packet_threshold = 2;
  std::vector<std::uint64_t> seqs;
  FeedHandler feed(c, [&](const FeedEvent& e) { seqs.push_back(e.seq); });
  UdpSocket tx = UdpSocket::sender();
  const auto to = make_address("127.0.0.1", feed.port(kLineA));
  auto send = [&](const std::vector<std::uint8_t>& d) { ASSERT_TRUE(tx.send_to(d.data(), d.size(), to)); };
  send(packet(40, {quote(66)}, "EVIL"));        // before the first real packet: a candidate only
  send(packet(1, {quote(1)}));                   // the real session starts: adopted
  send(packet(2, {quote(2)}));
  send(packet(3, {quote(99)}, "EVIL"));         // mid-stream
  send(packet(1, {quote(99)}, "EVIL"));         // even at sequence 1
  send(packet(340'560'663, {quote(99)}));       // far future of the real session
  send(std::vector<std::uint8_t>(7, 0));         // too short
  send(packet(4, {quote(4)}));                   // 3 lost
  send(packet(5, {quote(5)}));
  std::vector<std::uint8_t> eos(kHeaderBytes);
  encode_control(eos.data(), Session::from("GOOD"), 6, true);
  send(eos);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (seqs.size() < 4 && std::chrono::steady_clock::now() < deadline) {
    if (feed.poll() == 0) usleep(100);
  }
  for (int i = 0; i < 50; ++i) feed.poll();
  feed.finish();
  EXPECT_EQ(seqs, (std::vector<std::uint64_t>{1, 2, 4, 5}));
  const FeedStats s = feed.stats();
  EXPECT_EQ(s.end_of_session_next, 6u);
  EXPECT_EQ(s.sequencer.sessions, 1u);
  EXPECT_EQ(s.sequencer.candidates_dropped, 1u);
  EXPECT_EQ(s.lines[kLineA].other_session_packets, 3u);
  EXPECT_EQ(s.lines[kLineA].far_future_packets, 1u);
  EXPECT_EQ(s.lines[kLineA].malformed_packets, 1u);
  EXPECT_EQ(s.lines[kLineA].packets, 4u);
  EXPECT_EQ(s.lines[kLineA].lost_messages, 1u);
  EXPECT_EQ(s.lines[kLineA].too_late_packets, 0u);
  ASSERT_EQ(s.lost_ranges_kept, 1u);
  EXPECT_EQ(s.lost_ranges_first[0].first, 3u);
  EXPECT_EQ(s.lost_ranges_first[0].count, 1u);
}

TEST(FeedHandler, BadConfigurationIsAClearError) {
  FeedConfig c;
  c.line_a.address = "nowhere";
  EXPECT_THROW(FeedHandler(c, [](const FeedEvent&) {}), Error);
  FeedConfig d;
  d.line_a.address = "127.0.0.1";
  d.window = 1000;  // not a power of two
  EXPECT_THROW(FeedHandler(d, [](const FeedEvent&) {}), Error);
  FeedConfig e;
  e.line_a.address = "127.0.0.1";
  e.idle = "nap";
  EXPECT_THROW(FeedHandler(e, [](const FeedEvent&) {}), Error);
  FeedConfig f;
  f.line_a.address = "127.0.0.1";
  EXPECT_THROW(FeedHandler(f, FeedHandler::Callback{}), Error);
}

}  // namespace
}  // namespace tickinfer::feed
