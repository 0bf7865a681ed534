// RecoveryClient unit behaviour with a fake clock and a real UDP socket whose requests go to a
// local socket the test reads: request splitting, residual retries, failure after the last
// attempt (the sequencer then reports exactly the missing messages), and cancellation when the
// session changes.
#include <gtest/gtest.h>

#include "feed/batch_receiver.hpp"
#include "feed/recovery_client.hpp"
#include "feed/udp_socket.hpp"
#include "feed_test_support.hpp"

namespace tickinfer::feed {
namespace {

using testing::make_control;
using testing::make_packet;
using testing::RecordingSink;

struct ForwardingSink : RecordingSink {
  RecoveryClient* client = nullptr;
  void on_gap_detected(std::uint64_t first, std::uint64_t count, std::int64_t now) noexcept override {
    RecordingSink::on_gap_detected(first, count, now);
    if (client) client->request(first, count, now);
  }
};

struct Rig {
  ForwardingSink sink;
  Sequencer seq;
  UdpSocket server = UdpSocket::receiver([] {
    ReceiverConfig c;
    c.bind_address = "127.0.0.1";
    return c;
  }());
  UdpSocket client_socket = UdpSocket::sender();
  RecoveryClient client;
  BatchReceiver rx{64, 64};
  std::int64_t now = 0;
  static SequencerConfig config() {
    SequencerConfig c;
    c.window = 4096;
    c.policy = GapPolicy::Recover;
    c.gap_timeout_ns = 100;
    c.gap_packet_threshold = 0;
    return c;
  }
  static RecoveryConfig rc(std::uint16_t port) {
    RecoveryConfig r;
    r.server = make_address("127.0.0.1", port);
    r.timeout_ns = 1000;
    r.max_attempts = 3;
    r.max_per_request = 100;
    return r;
  }
  Rig() : seq(config(), sink), client(client_socket, seq, rc(server.local_port())) { sink.client = &client; }
  void feed(std::uint64_t s, std::uint16_t n, const char* session = "S1") {
    auto p = make_packet(s, n, session);
    seq.on_packet(p.view(), RxMeta{now, 0}, now);
  }
  // The (first, count) of every request that reached the server so far.
  std::vector<std::pair<std::uint64_t, std::uint16_t>> requests() {
    std::vector<std::pair<std::uint64_t, std::uint16_t>> out;
    for (int tries = 0; tries < 200; ++tries) {
      const int n = rx.receive(server.fd());
      for (int i = 0; i < n; ++i) {
        Session s;
        std::uint64_t first;
        std::uint16_t count;
        EXPECT_EQ(parse_request(rx.data(i), rx.length(i), s, first, count), ParseStatus::Ok);
        out.emplace_back(first, count);
      }
      if (n == 0 && !out.empty()) break;
      if (n == 0) usleep(1000);
    }
    return out;
  }
};

TEST(FeedRecoveryClient, SplitsLargeRangesAndAsksAgainOnlyForWhatIsStillMissing) {
  Rig r;
  r.feed(1, 1);
  r.feed(252, 1);  // 2..251 missing: 250 messages -> requests of 100, 100, 50
  r.now = 100;
  r.seq.poll(r.now);
  EXPECT_EQ(r.requests(), (std::vector<std::pair<std::uint64_t, std::uint16_t>>{{2, 100}, {102, 100}, {202, 50}}));
  r.feed(2, 60);    // partial answer for the first request
  r.feed(102, 100); // the second one complete
  r.now = 1100;
  r.client.poll(r.now);
  EXPECT_EQ(r.requests(), (std::vector<std::pair<std::uint64_t, std::uint16_t>>{{62, 40}, {202, 50}}));
  EXPECT_EQ(r.client.stats().completed, 1u);
  EXPECT_EQ(r.client.stats().retries, 2u);
}

TEST(FeedRecoveryClient, FailsAfterTheLastAttemptAndTheSequencerReportsExactlyTheMissingMessages) {
  Rig r;
  r.feed(1, 1);
  r.feed(11, 1);  // 2..10 missing
  r.now = 100;
  r.seq.poll(r.now);
  r.feed(4, 2);   // 4, 5 arrive late from somewhere
  for (int attempt = 0; attempt < 3; ++attempt) {
    r.now += 1000;
    r.client.poll(r.now);
  }
  EXPECT_EQ(r.client.stats().requests_sent, 3u);
  EXPECT_EQ(r.client.stats().failed, 1u);
  EXPECT_EQ(r.client.outstanding(), 0u);
  EXPECT_EQ(r.sink.lost_seqs(), (std::vector<std::uint64_t>{2, 3, 6, 7, 8, 9, 10}));
  EXPECT_EQ(r.sink.delivered, (std::vector<std::uint64_t>{1, 4, 5, 11}));
  for (auto reason : r.sink.lost_reason) EXPECT_EQ(reason, LossReason::Unrecoverable);
}

TEST(FeedRecoveryClient, ASessionChangeCancelsOutstandingRequests) {
  Rig r;
  r.feed(1, 1, "DAY1");
  r.feed(5, 1, "DAY1");
  r.now = 100;
  r.seq.poll(r.now);
  EXPECT_EQ(r.client.outstanding(), 1u);
  auto eos = make_control(5, true, "DAY1");
  r.seq.on_packet(eos.view(), RxMeta{r.now, 0}, r.now);
  r.feed(1, 3, "DAY2");
  for (int i = 0; i < 5; ++i) {
    r.now += 1000;
    r.client.poll(r.now);
  }
  EXPECT_EQ(r.client.outstanding(), 0u);
  EXPECT_EQ(r.client.stats().cancelled, 1u);
  EXPECT_EQ(r.client.stats().failed, 0u);
  // Only DAY1's hole was reported lost (by the session change), nothing of DAY2.
  EXPECT_EQ(r.sink.lost_seqs(), (std::vector<std::uint64_t>{2, 3, 4}));
  EXPECT_EQ(r.seq.next_expected(), 4u);
}

}  // namespace
}  // namespace tickinfer::feed
