// Real sockets on loopback: the synthetic exchange (its own thread, real UDP lines and a real
// re-request server) against FeedHandler. Covers gap recovery, including a silent server and
// partial answers, and the end-to-end bar: 1,000,000 messages at 50,000 msg/s with, per line,
// 5% reordering, 2% loss and 1% duplication.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "feed/exchange.hpp"
#include "feed/messages.hpp"
#include "tickinfer/feed.hpp"

namespace tickinfer::feed {
namespace {

struct Outcome {
  std::vector<std::uint64_t> seqs;
  std::vector<std::uint8_t> lines;
  std::vector<std::uint64_t> lost;
  std::uint64_t hash = kFnvOffset;
  std::uint64_t misordered = 0;
  FeedStats stats;
  ExchangeStats exchange;
  bool finished = false;
};

// Runs an exchange (own thread) and a feed handler (this thread) until the feed delivered or
// gave up on every message of the session, or the deadline passed.
Outcome run(ExchangeConfig ex_cfg, FeedConfig feed_cfg, double deadline_s) {
  Outcome out;
  ex_cfg.linger_ns = static_cast<std::int64_t>(deadline_s * 1e9);
  Exchange exchange(ex_cfg);
  feed_cfg.line_a.address = "127.0.0.1";
  feed_cfg.line_a.port = 0;
  feed_cfg.has_line_b = ex_cfg.line_b_enabled;
  feed_cfg.line_b.address = "127.0.0.1";
  feed_cfg.line_b.port = 0;
  feed_cfg.recovery_host = "127.0.0.1";
  feed_cfg.recovery_port = exchange.rerequest_port();
  feed_cfg.rcvbuf_bytes = 32 << 20;
  feed_cfg.idle = "backoff";
  feed_cfg.max_park_ns = 100'000;
  std::uint8_t buf[64];
  FeedHandler feed(feed_cfg, [&](const FeedEvent& e) {
    if (!out.seqs.empty() && e.seq != out.seqs.back() + 1 && e.seq <= out.seqs.back()) ++out.misordered;
    out.seqs.push_back(e.seq);
    out.lines.push_back(e.line);
    const auto len = static_cast<std::uint16_t>(encode_event(e.event, buf));
    out.hash = fnv1a_message(out.hash, e.seq, buf, len);
  });
  feed.on_loss([&](std::uint64_t f, std::uint64_t c, LossReason) {
    for (std::uint64_t s = f; s < f + c; ++s) out.lost.push_back(s);
  });
  for (const auto& w : feed.warnings()) std::fprintf(stderr, "warning: %s\n", w.c_str());
  exchange.set_destinations(make_address("127.0.0.1", feed.port(kLineA)),
                            make_address("127.0.0.1", feed.port(kLineB)));
  std::atomic<bool> stop{false};
  std::thread ex_thread([&] { exchange.run(&stop); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(deadline_s);
  const std::uint64_t end = ex_cfg.messages + 1;
  std::atomic<bool> feed_stop{false};
  for (;;) {
    const int work = feed.poll();
    const FeedStats s = work == 0 ? feed.stats() : FeedStats{};
    if (work == 0 && s.end_of_session_next == end && out.seqs.size() + out.lost.size() == ex_cfg.messages &&
        s.recovery_outstanding == 0) {
      out.finished = true;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) break;
    if (work == 0) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  stop = true;
  ex_thread.join();
  feed.finish(end);
  out.stats = feed.stats();
  out.exchange = exchange.stats();
  return out;
}

ExchangeConfig exchange_config(std::uint64_t messages, double rate, std::uint64_t seed) {
  ExchangeConfig c;
  c.messages = messages;
  c.rate = rate;
  c.market.seed = seed;
  return c;
}

// On a loaded 2-core machine either thread can be descheduled for tens of milliseconds; recovery
// must not give up on a server that is merely slow. Timeouts say nothing about latency here.
FeedConfig robust_config() {
  FeedConfig f;
  f.recovery_timeout_ns = 25'000'000;
  f.recovery_attempts = 12;
  return f;
}

void expect_complete_in_order(const Outcome& o, std::uint64_t messages) {
  ASSERT_TRUE(o.finished);
  EXPECT_EQ(o.misordered, 0u);
  ASSERT_EQ(o.seqs.size(), messages);
  for (std::uint64_t i = 0; i < messages; ++i) ASSERT_EQ(o.seqs[i], i + 1) << "position " << i;
  EXPECT_TRUE(o.lost.empty());
  EXPECT_EQ(o.hash, o.exchange.content_hash);
}

TEST(FeedLoopback, OneLineWithLossIsMadeWholeByReRequests) {
  auto ex = exchange_config(20'000, 100'000, 3);
  ex.line_b_enabled = false;
  ex.faults[0].loss = 0.05;
  ex.faults[0].burst_start = 0.002;
  Outcome o = run(ex, robust_config(), 60);
  expect_complete_in_order(o, 20'000);
  EXPECT_GT(o.exchange.both_lost_messages, 0u);
  for (std::uint64_t s : o.exchange.both_lost) EXPECT_EQ(o.lines[s - 1], kLineRecovery) << s;
  EXPECT_EQ(o.stats.lines[kLineA].lost_messages, o.exchange.line[0].lost_messages);
  EXPECT_EQ(o.stats.recovery.failed, 0u);
}

TEST(FeedLoopback, WhenTheServerIsSilentRecoveryFailsAndReportsExactlyTheMissingMessages) {
  auto ex = exchange_config(5'000, 100'000, 4);
  ex.line_b_enabled = false;
  ex.faults[0].loss = 0.03;
  ex.rerequest_silent = true;
  FeedConfig f;
  f.recovery_timeout_ns = 2'000'000;
  f.recovery_attempts = 3;
  Outcome o = run(ex, f, 30);
  ASSERT_TRUE(o.finished);
  EXPECT_EQ(o.misordered, 0u);
  if (o.stats.kernel_drops[kLineA] == 0) {
    EXPECT_EQ(o.lost, o.exchange.both_lost);  // exactly the messages line A never sent
  } else {
    // The feed's socket overflowed (counted): those datagrams are lost too, beyond what line A
    // never sent.
    EXPECT_TRUE(std::includes(o.lost.begin(), o.lost.end(), o.exchange.both_lost.begin(), o.exchange.both_lost.end()));
  }
  EXPECT_GT(o.stats.recovery.failed, 0u);
  EXPECT_EQ(o.stats.recovery.retries, o.stats.recovery.failed * 2);  // 3 attempts per request
  EXPECT_EQ(o.seqs.size() + o.lost.size(), 5'000u);
  // The server saw requests and answered none. (It may stop before reading the last few from
  // its socket, so the count it saw is at most what was sent, not equal to it.)
  EXPECT_GT(o.exchange.rerequests_ignored, 0u);
  EXPECT_LE(o.exchange.rerequests_ignored, o.stats.recovery.requests_sent - o.stats.recovery.send_failures);
  EXPECT_EQ(o.exchange.rerequests_ignored, o.exchange.rerequests);
}

TEST(FeedLoopback, PartialAnswersAreReRequestedUntilComplete) {
  auto ex = exchange_config(5'000, 100'000, 5);
  ex.line_b_enabled = false;
  ex.faults[0].burst_start = 0.01;
  ex.faults[0].burst_mean = 20;
  ex.rerequest_answer_fraction = 0.5;
  FeedConfig f = robust_config();
  // Each answer halves what is left of a range; the budget covers that and a starved exchange
  // thread on a loaded machine (16 gave up about once in twelve runs here).
  f.recovery_attempts = 64;
  Outcome o = run(ex, f, 30);
  expect_complete_in_order(o, 5'000);
  EXPECT_GT(o.stats.recovery.retries, 0u);
  EXPECT_EQ(o.stats.recovery.failed, 0u);
}

TEST(FeedLoopback, EndToEndMillionMessagesAtFiftyThousandPerSecondWithFaultsOnBothLines) {
  auto ex = exchange_config(1'000'000, 50'000, 2026);
  for (auto& f : ex.faults) {
    f.reorder = 0.05;
    f.loss = 0.02;
    f.duplicate = 0.01;
  }
  FeedConfig f = robust_config();
  f.gap_timeout_ns = 5'000'000;
  f.gap_packet_threshold = 256;
  Outcome o = run(ex, f, 120);
  expect_complete_in_order(o, 1'000'000);
  // Every message lost on both lines came back through re-request.
  ASSERT_GT(o.exchange.both_lost_messages, 0u);
  for (std::uint64_t s : o.exchange.both_lost) ASSERT_EQ(o.lines[s - 1], kLineRecovery) << s;
  // The statistics equal what the exchange injected (the kernel dropped nothing).
  for (int l = 0; l < 2; ++l) {
    EXPECT_EQ(o.stats.kernel_drops[l], 0u);
    EXPECT_EQ(o.stats.lines[l].lost_messages, o.exchange.line[l].lost_messages) << "line " << l;
    EXPECT_EQ(o.stats.lines[l].duplicate_packets, o.exchange.line[l].duplicate_packets) << "line " << l;
    EXPECT_EQ(o.stats.lines[l].reordered_packets, o.exchange.line[l].reordered_packets) << "line " << l;
    EXPECT_EQ(o.stats.lines[l].packets, o.exchange.line[l].packets_sent) << "line " << l;
    EXPECT_EQ(o.stats.lines[l].too_late_packets, 0u);
  }
  EXPECT_EQ(o.stats.sequencer.lost, 0u);
  EXPECT_EQ(o.stats.recovery.failed, 0u);
  EXPECT_EQ(o.stats.malformed, 0u);
  std::printf("e2e: %llu messages; injected per line A/B: lost %llu/%llu, dup packets %llu/%llu, "
              "reordered packets %llu/%llu; both lost %llu, all recovered (%llu requests)\n",
              1'000'000ull, (unsigned long long)o.exchange.line[0].lost_messages,
              (unsigned long long)o.exchange.line[1].lost_messages,
              (unsigned long long)o.exchange.line[0].duplicate_packets,
              (unsigned long long)o.exchange.line[1].duplicate_packets,
              (unsigned long long)o.exchange.line[0].reordered_packets,
              (unsigned long long)o.exchange.line[1].reordered_packets,
              (unsigned long long)o.exchange.both_lost_messages,
              (unsigned long long)o.stats.recovery.requests_sent);
}

}  // namespace
}  // namespace tickinfer::feed
