// Receive-path plumbing on real sockets: kernel receive timestamps, the kernel's drop counter,
// truncated datagrams, the receive-buffer cap warning, bad addresses, multicast (skipped where
// the host cannot loop multicast back), and the blocking idle strategy waking on data.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <vector>

#include "feed/batch_receiver.hpp"
#include "feed/idle_strategy.hpp"
#include "feed/udp_socket.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::feed {
namespace {

std::int64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

UdpSocket local_receiver(int rcvbuf = 1 << 20) {
  ReceiverConfig c;
  c.bind_address = "127.0.0.1";
  c.rcvbuf_bytes = rcvbuf;
  return UdpSocket::receiver(c);
}

int receive_some(BatchReceiver& rx, int fd, double seconds = 2.0) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (const int n = rx.receive(fd)) return n;
    usleep(200);
  }
  return 0;
}

TEST(FeedSocket, DatagramsCarryKernelReceiveTimestamps) {
  UdpSocket rx_sock = local_receiver();
  UdpSocket tx = UdpSocket::sender();
  const std::uint8_t payload[40] = {1, 2, 3};
  const std::int64_t before = realtime_ns();
  ASSERT_TRUE(tx.send_to(payload, sizeof payload, make_address("127.0.0.1", rx_sock.local_port())));
  BatchReceiver rx(8, 2048);
  ASSERT_EQ(receive_some(rx, rx_sock.fd()), 1);
  EXPECT_EQ(rx.length(0), sizeof payload);
  EXPECT_EQ(rx.data(0)[2], 3);
  EXPECT_FALSE(rx.truncated(0));
  EXPECT_GE(rx.kernel_rx_ns(0), before);
  EXPECT_LE(rx.kernel_rx_ns(0), realtime_ns());
  EXPECT_EQ(ntohs(rx.source(0).sin_port), tx.local_port());
}

TEST(FeedSocket, TheKernelDropCounterShowsAnOverflowingBuffer) {
  UdpSocket rx_sock = local_receiver(4096);  // the kernel's minimum: a few datagrams
  UdpSocket tx = UdpSocket::sender();
  const auto to = make_address("127.0.0.1", rx_sock.local_port());
  std::vector<std::uint8_t> payload(1000, 7);
  for (int i = 0; i < 200; ++i) tx.send_to(payload.data(), payload.size(), to);
  BatchReceiver rx(64, 2048);
  ASSERT_GT(receive_some(rx, rx_sock.fd()), 0);
  while (rx.receive(rx_sock.fd()) > 0) {
  }
  // The kernel stamps each datagram with the drop count at the time it was queued: the ones
  // queued before the buffer filled say 0, the next one carries the drops.
  tx.send_to(payload.data(), payload.size(), to);
  ASSERT_EQ(receive_some(rx, rx_sock.fd()), 1);
  EXPECT_GT(rx.kernel_drops(), 0u);  // SO_RXQ_OVFL: what the full buffer discarded
}

// receive(fd, 1) takes one datagram and leaves the rest queued; the next full-batch call gets
// them with their own lengths, timestamps and flags (only the headers the kernel wrote are reset).
TEST(FeedSocket, AskingForOneLeavesTheRestForTheNextBatch) {
  UdpSocket rx_sock = local_receiver();
  UdpSocket tx = UdpSocket::sender();
  const auto to = make_address("127.0.0.1", rx_sock.local_port());
  std::vector<std::uint8_t> big(3000, 1);
  for (std::uint8_t len : {10, 20, 30}) {
    std::vector<std::uint8_t> p(len, len);
    ASSERT_TRUE(tx.send_to(p.data(), p.size(), to));
  }
  ASSERT_TRUE(tx.send_to(big.data(), big.size(), to));  // truncated in a 2048-byte buffer
  BatchReceiver rx(8, 2048);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  int n = 0;
  while (n == 0 && std::chrono::steady_clock::now() < end) n = rx.receive(rx_sock.fd(), 1);
  ASSERT_EQ(n, 1);
  EXPECT_EQ(rx.length(0), 10u);
  EXPECT_FALSE(rx.truncated(0));
  ASSERT_EQ(rx.receive(rx_sock.fd()), 3);
  EXPECT_EQ(rx.length(0), 20u);
  EXPECT_EQ(rx.data(0)[0], 20);
  EXPECT_EQ(rx.length(1), 30u);
  EXPECT_EQ(rx.data(1)[29], 30);
  EXPECT_FALSE(rx.truncated(0));
  EXPECT_TRUE(rx.truncated(2));
  EXPECT_GT(rx.kernel_rx_ns(2), 0);
  // The truncated datagram's flags do not leak into the next call's first entry.
  const std::uint8_t one = 1;
  ASSERT_TRUE(tx.send_to(&one, 1, to));
  n = 0;
  while (n == 0 && std::chrono::steady_clock::now() < end) n = rx.receive(rx_sock.fd(), 1);
  ASSERT_EQ(n, 1);
  EXPECT_EQ(rx.length(0), 1u);
  EXPECT_FALSE(rx.truncated(0));
  EXPECT_EQ(rx.receive(rx_sock.fd(), 1), 0);
}

TEST(FeedSocket, OversizedDatagramsAreFlaggedTruncated) {
  UdpSocket rx_sock = local_receiver();
  UdpSocket tx = UdpSocket::sender();
  std::vector<std::uint8_t> big(3000, 1);
  ASSERT_TRUE(tx.send_to(big.data(), big.size(), make_address("127.0.0.1", rx_sock.local_port())));
  BatchReceiver rx(4, 2048);
  ASSERT_EQ(receive_some(rx, rx_sock.fd()), 1);
  EXPECT_TRUE(rx.truncated(0));
}

TEST(FeedSocket, ACappedReceiveBufferIsReportedAsAWarning) {
  // Without CAP_NET_ADMIN the kernel caps SO_RCVBUF at net.core.rmem_max. Run as an unprivileged
  // user in a child so the cap applies even when the test runs as root.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (getuid() == 0 && setuid(65534) != 0) _exit(3);
    try {
      ReceiverConfig c;
      c.bind_address = "127.0.0.1";
      c.rcvbuf_bytes = 1 << 30;  // far above any default rmem_max
      UdpSocket s = UdpSocket::receiver(c);
      _exit(s.warning().find("receive buffer capped") != std::string::npos ? 0 : 4);
    } catch (...) {
      _exit(5);
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 3) GTEST_SKIP() << "cannot drop privileges here";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(FeedSocket, BadAddressesAreClearErrors) {
  EXPECT_THROW(make_address("not-an-ip", 1), Error);
  ReceiverConfig c;
  c.group = "10.0.0.1";  // not 224.0.0.0/4
  try {
    UdpSocket::receiver(c);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a multicast group"), std::string::npos) << e.what();
  }
  UdpSocket a = local_receiver();
  ReceiverConfig same;
  same.bind_address = "127.0.0.1";
  same.port = a.local_port();
  EXPECT_THROW(UdpSocket::receiver(same), Error);  // port in use: names the address
}

TEST(FeedSocket, MulticastGroupsAreJoinedAndReceived) {
  ReceiverConfig c;
  c.group = "239.255.77.1";
  UdpSocket rx_sock;
  try {
    rx_sock = UdpSocket::receiver(c);
  } catch (const Error& e) {
    GTEST_SKIP() << "no multicast here: " << e.what();
  }
  UdpSocket tx = UdpSocket::sender();
  const std::uint8_t payload[24] = {9};
  tx.send_to(payload, sizeof payload, make_address("239.255.77.1", rx_sock.local_port()));
  BatchReceiver rx(4, 2048);
  if (receive_some(rx, rx_sock.fd(), 1.0) == 0) GTEST_SKIP() << "multicast is not looped back on this host";
  EXPECT_EQ(rx.length(0), sizeof payload);
}

TEST(FeedIdleStrategy, BlockingWakesOnDataAndOtherwiseWaitsAtMostItsPark) {
  UdpSocket rx_sock = local_receiver();
  IdleStrategy idle(IdleKind::Blocking, 2'000'000'000);  // 2 s: far from any scheduling delay
  idle.set_fds({rx_sock.fd()});
  auto t0 = std::chrono::steady_clock::now();
  idle.idle(0);  // nothing to read: returns after the park
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(waited, std::chrono::milliseconds(1500));
  UdpSocket tx = UdpSocket::sender();
  const std::uint8_t b = 1;
  tx.send_to(&b, 1, make_address("127.0.0.1", rx_sock.local_port()));
  usleep(1000);
  t0 = std::chrono::steady_clock::now();
  idle.idle(0);  // readable: returns at once
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1500));
  for (const char* k : {"spin", "yield", "backoff", "block"}) EXPECT_STREQ(to_string(parse_idle_kind(k)), k);
  EXPECT_THROW(parse_idle_kind("nap"), Error);
}

}  // namespace
}  // namespace tickinfer::feed
