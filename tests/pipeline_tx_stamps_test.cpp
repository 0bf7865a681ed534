// TxStampCollector on a real UDP socket: the kernel's transmit stamp of each datagram comes back
// on the error queue, lies inside the send() it belongs to, and reaches every signal of that
// datagram in send order; a datagram whose stamp never comes is counted missing, not mismatched.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <time.h>

#include <vector>

#include "feed/udp_socket.hpp"
#include "pipeline/tx_stamps.hpp"

namespace tickinfer::pipeline {
namespace {

std::int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

struct Got {
  std::int64_t tx, exchange, rx;
};

struct Link {
  feed::UdpSocket sink, out;
  Link() {
    feed::ReceiverConfig rc;
    rc.bind_address = "127.0.0.1";
    sink = feed::UdpSocket::receiver(rc);
    out = feed::UdpSocket::sender();
    const sockaddr_in to = feed::make_address("127.0.0.1", sink.local_port());
    EXPECT_EQ(::connect(out.fd(), reinterpret_cast<const sockaddr*>(&to), sizeof to), 0);
  }
};

std::vector<Got> drain_all(TxStampCollector& c) {
  std::vector<Got> got;
  for (int tries = 0; tries < 1000 && c.waiting() > 0; ++tries)
    c.drain([&](std::int64_t tx, std::int64_t ex, std::int64_t rx) { got.push_back({tx, ex, rx}); });
  return got;
}

TEST(TxStamps, EachSignalGetsItsDatagramsStampInSendOrder) {
  Link l;
  TxStampCollector c(l.out.fd());
  ASSERT_TRUE(c.enabled());
  std::vector<std::int64_t> before, after;
  std::vector<Got> want;
  std::uint8_t payload[96] = {};
  for (int d = 0; d < 100; ++d) {
    const std::size_t n = 1 + static_cast<std::size_t>(d % 3);
    std::int64_t ex[3], rx[3];
    for (std::size_t k = 0; k < n; ++k) {
      ex[k] = 1000 * d + static_cast<std::int64_t>(k);
      rx[k] = 2000 * d + static_cast<std::int64_t>(k);
      want.push_back({0, ex[k], rx[k]});
    }
    const std::int64_t t0 = now_ns();
    ASSERT_EQ(::send(l.out.fd(), payload, sizeof payload, 0), static_cast<ssize_t>(sizeof payload));
    const std::int64_t t1 = now_ns();
    c.sent(t0, t1, ex, rx, n);
    for (std::size_t k = 0; k < n; ++k) {
      before.push_back(t0);
      after.push_back(t1);
    }
  }
  const auto got = drain_all(c);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].exchange, want[i].exchange) << i;
    EXPECT_EQ(got[i].rx, want[i].rx) << i;
    EXPECT_GE(got[i].tx, before[i]) << i;
    EXPECT_LE(got[i].tx, after[i]) << i;
  }
  EXPECT_EQ(c.matched(), 100u);
  EXPECT_EQ(c.missing(), 0u);
  EXPECT_EQ(c.stray(), 0u);
}

TEST(TxStamps, ADatagramWithoutAStampIsCountedMissing) {
  Link l;
  TxStampCollector c(l.out.fd());
  ASSERT_TRUE(c.enabled());
  const std::int64_t ex = 7, rx = 8;
  // Recorded as sent but never handed to the kernel: no stamp will come for it.
  const std::int64_t f0 = now_ns();
  c.sent(f0, f0 + 1, &ex, &rx, 1);
  std::uint8_t payload[8] = {};
  const std::int64_t t0 = now_ns();
  ASSERT_EQ(::send(l.out.fd(), payload, sizeof payload, 0), 8);
  const std::int64_t t1 = now_ns();
  const std::int64_t ex2 = 70, rx2 = 80;
  c.sent(t0, t1, &ex2, &rx2, 1);
  const auto got = drain_all(c);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].exchange, 70);
  EXPECT_EQ(c.missing(), 1u);
  EXPECT_EQ(c.matched(), 1u);
}

TEST(TxStamps, AFullQueueGivesUpTheOldest) {
  Link l;
  TxStampCollector c(l.out.fd());
  ASSERT_TRUE(c.enabled());
  const std::int64_t ex = 1, rx = 2;
  for (std::size_t i = 0; i < TxStampCollector::kCapacity + 5; ++i)
    c.sent(static_cast<std::int64_t>(i) * 10, static_cast<std::int64_t>(i) * 10 + 5, &ex, &rx, 1);
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
