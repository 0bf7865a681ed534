#pragma once
// The market-data feed as a library: receive MoldUDP64 on line A (and optionally line B),
// arbitrate and sequence, recover gaps by re-request, decode, and hand each event to a callback
// or an SPSC ring in sequence order, exactly once, with three timestamps.
//
//   tickinfer::feed::FeedConfig cfg;
//   cfg.line_a.port = 31001; cfg.has_line_b = true; cfg.line_b.port = 31002;
//   cfg.recovery_host = "127.0.0.1"; cfg.recovery_port = 31000;
//   tickinfer::feed::FeedHandler feed(cfg, [](const tickinfer::feed::FeedEvent& e) { ... });
//   while (running) feed.run_once();   // or feed.run(stop_flag) with the configured idle strategy
//
// Errors: the constructor throws tickinfer::Error for a bad configuration or a socket that cannot
// be opened (the message names the address). After that nothing throws: malformed datagrams,
// undecodable messages, gaps and recovery failures are counted in stats() and reported through
// the optional gap/loss callbacks. Threading: one thread drives poll()/run(); stats() may be read
// from that thread, or from another once it stopped.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tickinfer/error.hpp"
#include "tickinfer/feed_stats.hpp"
#include "tickinfer/market_data.hpp"
#include "tickinfer/spsc_ring.hpp"

namespace tickinfer::stats {
class LatencyHistogram;  // src/stats/latency_histogram.hpp: the lead-time and latency histograms
}

namespace tickinfer::feed {

// All CLOCK_REALTIME ns, so they compare with the kernel's SO_TIMESTAMPNS stamp.
struct FeedTimestamps {
  std::int64_t kernel_rx_ns = 0;  // the kernel received the datagram that carried the message
  std::int64_t sequenced_ns = 0;  // the sequencer released it (in order)
  std::int64_t delivered_ns = 0;  // just before the callback / ring push
};

struct FeedEvent {
  std::uint64_t seq = 0;
  std::uint8_t line = 0;  // 0 = A, 1 = B, 2 = recovery
  md::Event event;
  FeedTimestamps ts;
};

// The payload protocol inside MoldUDP64. The transport (framing, arbitration, sequencing,
// recovery) never looks inside a message block; a decoder turns each block, in sequence order,
// into zero or more events. Without one, the feed speaks tickinfer's own Q/T messages
// (docs/feed-wire-format.md); NASDAQ TotalView-ITCH 5.0 is book::ItchEventDecoder (src/book/),
// which keeps full-depth books and emits the top of book and the trades.
class EventEmitter {
 public:
  virtual void emit(const md::Event& event) noexcept = 0;

 protected:
  ~EventEmitter() = default;
};

class MessageDecoder {
 public:
  virtual ~MessageDecoder() = default;
  // One message block; out.emit() for each event it yields. Returns false for a block it cannot
  // decode (counted in FeedStats::undecodable, skipped). Runs on the feed thread: no allocation,
  // no lock, no system call.
  virtual bool decode(std::uint64_t seq, const std::uint8_t* msg, std::uint16_t len,
                      EventEmitter& out) noexcept = 0;
  // The longest message block of the protocol: the sequencer's slot size.
  virtual std::uint16_t max_message_bytes() const noexcept = 0;
  // [first, first + count) will never arrive (what the protocol's state may have missed).
  virtual void on_lost(std::uint64_t first, std::uint64_t count) noexcept {}
};

struct FeedLine {
  std::string address = "127.0.0.1";  // unicast bind address, or a multicast group (224/4)
  std::uint16_t port = 0;
  std::string interface = "0.0.0.0";  // multicast: local interface address
};

struct FeedConfig {
  FeedLine line_a;
  bool has_line_b = false;
  FeedLine line_b;
  std::string recovery_host;          // re-request server; empty = no recovery (gaps are skipped)
  std::uint16_t recovery_port = 0;
  std::string session;                // pin this session; empty = adopt the first confirmed (docs/feed.md)
  bool join_at_first_seen = false;    // late join: start at the first sequence seen
  std::uint32_t window = 4096;        // reorder window, messages (power of two)
  std::int64_t gap_timeout_ns = 1'000'000;
  std::uint32_t gap_packet_threshold = 256;  // packets on all lines; several receive batches
  std::int64_t recovery_timeout_ns = 5'000'000;
  int recovery_attempts = 4;
  std::uint16_t recovery_max_per_request = 1024;
  int rcvbuf_bytes = 16 << 20;
  int batch = 32;                     // datagrams per recvmmsg
  std::string idle = "spin";          // spin | yield | backoff | block
  std::int64_t max_park_ns = 1'000'000;
  std::shared_ptr<MessageDecoder> decoder;  // the payload protocol; null: tickinfer's Q/T messages
};

struct FeedStats {
  SequencerStats sequencer;
  LineStats lines[3];                 // A, B, recovery
  RecoveryStats recovery;
  std::uint64_t datagrams = 0;
  std::uint64_t malformed = 0;        // datagrams that failed parse_packet (any reason)
  std::uint64_t malformed_by_status[kParseStatusCount] = {};
  std::uint64_t truncated = 0;        // longer than the receive buffer
  std::uint64_t undecodable = 0;      // message blocks of unknown type or wrong length (skipped)
  std::uint64_t kernel_drops[3] = {}; // SO_RXQ_OVFL per socket (A, B, recovery)
  std::uint64_t receive_errors = 0;
  std::uint64_t ring_full_spins = 0;  // ring delivery waited for the consumer
  std::uint64_t end_of_session_next = 0;  // the adopted session's End of Session next seq (0: not seen)
  std::uint64_t recovery_outstanding = 0; // re-requests still waiting for an answer
  std::uint64_t next_expected = 0;        // the sequencer's N
  std::uint64_t highest_seen = 0;         // highest sequence known to exist
  std::uint64_t buffered = 0;             // messages waiting in the reorder window
  // The first kLostRangesKept ranges reported lost, in report order; sequencer.lost_ranges has
  // the total (report_lost_ranges in src/feed/feed_report.hpp prints "first N, then a count").
  LostRange lost_ranges_first[kLostRangesKept] = {};
  std::uint64_t lost_ranges_kept = 0;
};

class FeedHandler {
 public:
  using Callback = std::function<void(const FeedEvent&)>;
  using LossCallback = std::function<void(std::uint64_t first, std::uint64_t count, LossReason)>;
  using DatagramEndCallback = std::function<void()>;

  FeedHandler(const FeedConfig& config, Callback on_event);
  // Ring delivery: events are pushed to `ring`; when it is full the feed thread spins until the
  // consumer makes room (backpressure goes to the kernel buffer; nothing is dropped).
  FeedHandler(const FeedConfig& config, SpscRing<FeedEvent>& ring);
  ~FeedHandler();
  FeedHandler(const FeedHandler&) = delete;
  FeedHandler& operator=(const FeedHandler&) = delete;

  void on_loss(LossCallback cb);  // optional: told about every range that will never arrive
  // Optional, callback delivery only: called once after the events one datagram released (or a
  // gap timer, a recovery answer, the end of a poll) have all gone to the callback, so a consumer
  // can batch its own output per inbound packet. Not called when nothing was delivered.
  void on_datagram_end(DatagramEndCallback cb);

  // One duty cycle: drain every socket once, run gap timers and recovery. Returns the work done
  // (datagrams + recovery actions); 0 means idle.
  int poll();
  // Duty cycles with the configured idle strategy until *stop is true.
  void run(const std::atomic<bool>& stop);
  // Closes the per-line accounting (see Arbiter::finish) at the End of Session sequence, or at
  // next_seq if given.
  void finish(std::uint64_t next_seq = 0);

  FeedStats stats() const;
  // Socket warnings (e.g. receive buffer capped by the kernel). Empty when all is well.
  std::vector<std::string> warnings() const;
  // Ports actually bound (useful with port 0): A, B, recovery (0 if absent).
  std::uint16_t port(int line) const;
  // Lead-time histogram of line i (0/1) over the other line.
  const stats::LatencyHistogram& lead_ns(int line) const;
  // Kernel receive -> delivered, one sample per delivered message.
  const stats::LatencyHistogram& rx_to_delivered_ns() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tickinfer::feed
