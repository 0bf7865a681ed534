// TxStampCollector on a real UDP socket: the kernel's transmit stamp of each datagram comes back
// on the error queue with the socket's send counter, and reaches every signal of that datagram:
// in order, inside the send() it belongs to, also across failed sends; stamps the kernel dropped
// are counted missing, and the stamps after them still find their own datagrams.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <vector>

#include "feed/udp_socket.hpp"
#include "pipeline/tx_stamps.hpp"
#include "stats/clock.hpp"

namespace tickinfer::pipeline {
namespace {

struct Got {
  std::int64_t tx, exchange, rx;
};

// A sender connected to `port` on loopback (a bound sink, or nobody: then sends get refused).
feed::UdpSocket connected_sender(std::uint16_t port) {
  feed::UdpSocket out = feed::UdpSocket::sender();
  const sockaddr_in to = feed::make_address("127.0.0.1", port);
  EXPECT_EQ(::connect(out.fd(), reinterpret_cast<const sockaddr*>(&to), sizeof to), 0);
  return out;
}

feed::UdpSocket sink() {
  feed::ReceiverConfig rc;
  rc.bind_address = "127.0.0.1";
  return feed::UdpSocket::receiver(rc);
}

// A loopback port nobody listens on (bound once, then closed): sends to it get refused.
std::uint16_t closed_port() {
  feed::UdpSocket gone = sink();
  return gone.local_port();
}

std::vector<Got> drain_all(TxStampCollector& c) {
  std::vector<Got> got;
  for (int tries = 0; tries < 1000 && c.waiting() > 0; ++tries)
    if (c.drain([&](std::int64_t tx, std::int64_t ex, std::int64_t rx) { got.push_back({tx, ex, rx}); }) == 0) break;
  return got;
}

// Sends one datagram per entry of `signals` (its signal count), through the collector as the
// pipeline does. Each signal's exchange time is its datagram's index; [before, after] of each
// successful send are kept to check the stamps against. Returns how many sends succeeded.
struct Sent {
  std::vector<std::int64_t> before, after;  // per datagram index
  std::vector<bool> ok;
};
Sent send_all(TxStampCollector& c, int fd, const std::vector<std::size_t>& signals) {
  Sent s;
  std::uint8_t payload[96] = {};
  for (std::size_t d = 0; d < signals.size(); ++d) {
    std::int64_t ex[4], rx[4];
    for (std::size_t k = 0; k < signals[d]; ++k) {
      ex[k] = static_cast<std::int64_t>(d);
      rx[k] = static_cast<std::int64_t>(1000 * d + k);
    }
    const std::int64_t t0 = stats::realtime_ns();
    const bool ok = ::send(fd, payload, sizeof payload, MSG_DONTWAIT) == static_cast<ssize_t>(sizeof payload);
    const std::int64_t t1 = stats::realtime_ns();
    if (ok) c.sent(t0, t1, ex, rx, signals[d]);
    else c.send_failed();
    s.before.push_back(t0);
    s.after.push_back(t1);
    s.ok.push_back(ok);
  }
  return s;
}

void expect_consistent(const std::vector<Got>& got, const Sent& s) {
  std::int64_t last = -1;
  for (const Got& g : got) {
    const auto d = static_cast<std::size_t>(g.exchange);
    ASSERT_LT(d, s.ok.size());
    EXPECT_TRUE(s.ok[d]) << d;
    EXPECT_GE(g.exchange, last);  // in send order
    last = g.exchange;
    EXPECT_GE(g.tx, s.before[d]) << d;  // stamped during its own send() (loopback: synchronous)
    EXPECT_LE(g.tx, s.after[d]) << d;
    EXPECT_EQ(g.rx / 1000, g.exchange);
  }
}

TEST(TxStamps, EachSignalGetsItsDatagramsStampInSendOrder) {
  feed::UdpSocket in = sink();
  feed::UdpSocket out = connected_sender(in.local_port());
  TxStampCollector c(out.fd());
  ASSERT_TRUE(c.enabled());
  std::vector<std::size_t> signals;
  std::size_t total = 0;
  for (int d = 0; d < 100; ++d) {
    signals.push_back(1 + static_cast<std::size_t>(d % 3));
    total += signals.back();
  }
  const Sent s = send_all(c, out.fd(), signals);
  const auto got = drain_all(c);
  ASSERT_EQ(got.size(), total);
  expect_consistent(got, s);
  EXPECT_EQ(c.matched(), 100u);
  EXPECT_EQ(c.missing(), 0u);
  EXPECT_EQ(c.stray(), 0u);
}

// Nobody listens: every other send() is refused (the ICMP answer to the previous one). Whether a
// refused send used a counter value depends on the kernel; the stamps must land right either way.
TEST(TxStamps, FailedSendsDoNotShiftTheMatching) {
  feed::UdpSocket out = connected_sender(closed_port());
  TxStampCollector c(out.fd());
  ASSERT_TRUE(c.enabled());
  const Sent s = send_all(c, out.fd(), std::vector<std::size_t>(40, 2));
  std::size_t ok = 0;
  for (bool b : s.ok) ok += b ? 1 : 0;
  ASSERT_GT(ok, 0u);
  ASSERT_LT(ok, 40u) << "no send was refused: the test did not exercise a failure";
  const auto got = drain_all(c);
  EXPECT_EQ(got.size(), 2 * ok);
  expect_consistent(got, s);
  EXPECT_EQ(c.matched(), ok);
  EXPECT_EQ(c.missing(), 0u);
  EXPECT_EQ(c.stray(), 0u);
}

// The error queue is charged to the receive buffer: shrunk to the minimum, the kernel drops most
// stamps of a burst. Those datagrams count as missing; the stamps that came still find their own.
TEST(TxStamps, DroppedStampsAreCountedMissingAndTheRestStillMatch) {
  feed::UdpSocket in = sink();
  feed::UdpSocket out = connected_sender(in.local_port());
  TxStampCollector c(out.fd());
  ASSERT_TRUE(c.enabled());
  const int tiny = 1;  // the kernel rounds up to its minimum (a few KB)
  ASSERT_EQ(::setsockopt(out.fd(), SOL_SOCKET, SO_RCVBUF, &tiny, sizeof tiny), 0);
  const Sent s = send_all(c, out.fd(), std::vector<std::size_t>(300, 1));
  const auto got = drain_all(c);
  expect_consistent(got, s);
  EXPECT_GT(c.matched(), 0u);
  EXPECT_LT(c.matched(), 300u);
  EXPECT_EQ(c.matched() + c.missing() + c.waiting(), 300u);
  EXPECT_EQ(c.stray(), 0u);
}

// Refused sends and dropped stamps together: with the error queue at its minimum and nobody
// listening, whatever the kernel did with the counter, every stamp that came finds its datagram.
TEST(TxStamps, FailedSendsAndDroppedStampsTogether) {
  feed::UdpSocket out = connected_sender(closed_port());
  TxStampCollector c(out.fd());
  ASSERT_TRUE(c.enabled());
  const int tiny = 1;
  ASSERT_EQ(::setsockopt(out.fd(), SOL_SOCKET, SO_RCVBUF, &tiny, sizeof tiny), 0);
  const Sent first = send_all(c, out.fd(), std::vector<std::size_t>(200, 1));
  auto got = drain_all(c);
  expect_consistent(got, first);
  // After a drain the queue has room again: the next stamps still match.
  const std::uint64_t matched_before = c.matched();
  const Sent second = send_all(c, out.fd(), std::vector<std::size_t>(4, 1));
  std::size_t ok = 0;
  for (bool b : second.ok) ok += b ? 1 : 0;
  got = drain_all(c);
  expect_consistent(got, second);
  EXPECT_EQ(c.matched() - matched_before, ok);
  EXPECT_EQ(c.stray(), 0u);
}

TEST(TxStamps, AFullQueueGivesUpTheOldest) {
  feed::UdpSocket in = sink();
  feed::UdpSocket out = connected_sender(in.local_port());
  TxStampCollector c(out.fd());
  ASSERT_TRUE(c.enabled());
  const std::int64_t ex = 1, rx = 2;
  for (std::size_t i = 0; i < TxStampCollector::kCapacity + 5; ++i) c.sent(static_cast<std::int64_t>(i) * 10, static_cast<std::int64_t>(i) * 10 + 5, &ex, &rx, 1);
  EXPECT_EQ(c.waiting(), TxStampCollector::kCapacity);
  EXPECT_EQ(c.missing(), 5u);
  EXPECT_EQ(c.oldest_sent_ns(), 5 * 10 + 5);
}

TEST(TxStamps, NoSocketNoStamps) {
  TxStampCollector c(-1);
  EXPECT_FALSE(c.enabled());
  const std::int64_t ex = 1, rx = 2;
  c.sent(0, 1, &ex, &rx, 1);
  EXPECT_EQ(c.waiting(), 0u);
  EXPECT_EQ(c.drain([](std::int64_t, std::int64_t, std::int64_t) {}), 0);
}

}  // namespace
}  // namespace tickinfer::pipeline
