// FeedHandler: sockets -> BatchReceiver -> parse -> Arbiter/Sequencer -> decode -> callback/ring.
#include <time.h>

#include <optional>

#include "feed/arbiter.hpp"
#include "feed/batch_receiver.hpp"
#include "feed/idle_strategy.hpp"
#include "feed/messages.hpp"
#include "feed/recovery_client.hpp"
#include "feed/sequencer.hpp"
#include "feed/udp_socket.hpp"
#include "tickinfer/error.hpp"
#include "tickinfer/feed.hpp"
#include "stats/clock.hpp"
#include "stats/latency_histogram.hpp"

namespace tickinfer::feed {

namespace {
ReceiverConfig receiver_config(const FeedLine& l, int rcvbuf) {
  ReceiverConfig r;
  const bool multicast = !l.address.empty() && make_address(l.address, 0).sin_addr.s_addr != 0 &&
                         IN_MULTICAST(ntohl(make_address(l.address, 0).sin_addr.s_addr));
  if (multicast) {
    r.group = l.address;
    r.interface = l.interface;
  } else {
    r.bind_address = l.address;
  }
  r.port = l.port;
  r.rcvbuf_bytes = rcvbuf;
  return r;
}
SequencerConfig sequencer_config(const FeedConfig& c) {
  SequencerConfig s;
  s.window = c.window;
  s.max_message_bytes = c.decoder ? c.decoder->max_message_bytes() : 64;
  s.gap_timeout_ns = c.gap_timeout_ns;
  s.gap_packet_threshold = c.gap_packet_threshold;
  s.policy = c.recovery_host.empty() ? GapPolicy::Skip : GapPolicy::Recover;
  s.join_at_first_seen = c.join_at_first_seen;
  if (!c.session.empty()) {
    s.pin_session = true;
    s.session = Session::from(c.session);
  }
  return s;
}
}  // namespace

struct FeedHandler::Impl final : SequencerSink {
  FeedConfig cfg;
  Callback callback;
  SpscRing<FeedEvent>* ring = nullptr;
  LossCallback loss_cb;
  DatagramEndCallback datagram_end_cb;
  std::uint64_t delivered_unflushed = 0;  // callback deliveries since datagram_end_cb last ran
  UdpSocket sockets[3];
  int socket_count = 0;
  int line_of_socket[3] = {kLineA, kLineB, kLineRecovery};
  bool had_data[3] = {false, false, false};  // the socket's last receive returned datagrams
  BatchReceiver rx;
  Sequencer sequencer;
  Arbiter arbiter;
  std::optional<RecoveryClient> recovery;
  IdleStrategy idle;
  FeedStats counters;
  stats::LatencyHistogram rx_to_delivered{60'000'000'000};

  Impl(const FeedConfig& c)
      : cfg(c),
        rx(c.batch, 2048),
        sequencer(sequencer_config(c), *this),
        arbiter(sequencer, std::max<std::uint32_t>(1u << 16, c.window)),
        idle(parse_idle_kind(c.idle), c.max_park_ns) {
    sockets[socket_count++] = UdpSocket::receiver(receiver_config(c.line_a, c.rcvbuf_bytes));
    if (c.has_line_b) {
      sockets[socket_count++] = UdpSocket::receiver(receiver_config(c.line_b, c.rcvbuf_bytes));
    }
    if (!c.recovery_host.empty()) {
      ReceiverConfig r;
      r.bind_address = "0.0.0.0";
      r.port = 0;
      r.rcvbuf_bytes = c.rcvbuf_bytes;
      line_of_socket[socket_count] = kLineRecovery;
      sockets[socket_count++] = UdpSocket::receiver(r);
      RecoveryConfig rc;
      rc.server = make_address(c.recovery_host, c.recovery_port);
      rc.timeout_ns = c.recovery_timeout_ns;
      rc.max_attempts = c.recovery_attempts;
      rc.max_per_request = c.recovery_max_per_request;
      recovery.emplace(sockets[socket_count - 1], sequencer, rc);
    }
    std::vector<int> fds;
    for (int i = 0; i < socket_count; ++i) fds.push_back(sockets[i].fd());
    idle.set_fds(fds);
  }

  void on_message(std::uint64_t seq, const std::uint8_t* msg, std::uint16_t len, const RxMeta& meta,
                  std::int64_t sequenced_ns) noexcept override {
    if (cfg.decoder) {
      ProtocolEmitter out(*this, seq, meta, sequenced_ns);
      if (!cfg.decoder->decode(seq, msg, len, out)) ++counters.undecodable;
      return;
    }
    // Ring delivery decodes straight into the claimed slot (no copy of a just-built event).
    FeedEvent local;
    FeedEvent* e = &local;
    if (ring) {
      while (!(e = ring->try_claim())) ++counters.ring_full_spins;
    }
    if (decode_message(msg, len, e->event) != DecodeStatus::Ok) {
      ++counters.undecodable;
      return;  // a claimed slot is simply not committed
    }
    deliver(*e, seq, meta, sequenced_ns);
  }
  // Stamps and hands over one event (e is the claimed ring slot, or a local one).
  void deliver(FeedEvent& e, std::uint64_t seq, const RxMeta& meta, std::int64_t sequenced_ns) noexcept {
    e.seq = seq;
    e.line = meta.line;
    e.ts.kernel_rx_ns = meta.kernel_rx_ns;
    e.ts.sequenced_ns = sequenced_ns;
    e.ts.delivered_ns = stats::realtime_ns();
    rx_to_delivered.record(e.ts.delivered_ns - e.ts.kernel_rx_ns);
    if (ring) {
      ring->commit();
    } else {
      callback(e);
      ++delivered_unflushed;
    }
  }
  // A configured protocol's events: each one claimed, stamped and delivered as it is emitted.
  struct ProtocolEmitter final : EventEmitter {
    Impl& impl;
    std::uint64_t seq;
    const RxMeta& meta;
    std::int64_t sequenced_ns;
    ProtocolEmitter(Impl& i, std::uint64_t s, const RxMeta& m, std::int64_t ns)
        : impl(i), seq(s), meta(m), sequenced_ns(ns) {}
    void emit(const md::Event& event) noexcept override {
      FeedEvent local;
      FeedEvent* e = &local;
      if (impl.ring) {
        while (!(e = impl.ring->try_claim())) ++impl.counters.ring_full_spins;
      }
      e->event = event;
      impl.deliver(*e, seq, meta, sequenced_ns);
    }
  };
  // Tells the consumer that the messages of one datagram (or one timer release) are all out.
  void end_of_datagram() noexcept {
    if (delivered_unflushed == 0 || !datagram_end_cb) return;
    delivered_unflushed = 0;
    datagram_end_cb();
  }
  void on_gap_detected(std::uint64_t first, std::uint64_t count, std::int64_t now_ns) noexcept override {
    if (recovery) recovery->request(first, count, now_ns);
  }
  void on_lost(std::uint64_t first, std::uint64_t count, LossReason reason) noexcept override {
    if (cfg.decoder) cfg.decoder->on_lost(first, count);
    if (counters.lost_ranges_kept < kLostRangesKept) {
      counters.lost_ranges_first[counters.lost_ranges_kept++] = LostRange{first, count, reason};
    }
    if (loss_cb) loss_cb(first, count, reason);
  }
  // A new session's End of Session is its own: the one of the session left no longer applies.
  void on_session_start(const Session&) noexcept override { counters.end_of_session_next = 0; }
  void on_end_of_session(const Session&, std::uint64_t next_seq) noexcept override {
    counters.end_of_session_next = next_seq;
  }

  int poll() noexcept {
    // One batch per socket per round, round-robin, until no socket has a full batch left: the
    // lines are interleaved roughly as the kernel received them, so a backlog on line A cannot
    // push a hole past the packet-count trigger before line B's copy is even read.
    int work = 0;
    // Taken before reading: holes are judged against a time by which everything received has
    // been read (Sequencer::poll).
    const std::int64_t poll_start = stats::realtime_ns();
    bool more = true;
    while (more) {
      more = false;
      for (int s = 0; s < socket_count; ++s) {
        const int line = line_of_socket[s];
        // A socket that was empty gets asked for one datagram (handled at once, rx.receive), one
        // that had data for a whole batch.
        const int want = had_data[s] ? rx.batch() : 1;
        const int n = rx.receive(sockets[s].fd(), want);
        had_data[s] = n > 0;
        counters.kernel_drops[line] = rx.kernel_drops();
        if (n == 0) continue;
        const std::int64_t now = stats::realtime_ns();
        for (int i = 0; i < n; ++i) {
          ++counters.datagrams;
          if (rx.truncated(i)) {
            ++counters.truncated;
            continue;
          }
          PacketView p;
          const ParseStatus st = parse_packet(rx.data(i), rx.length(i), p, sequencer.config().max_message_bytes);
          if (st != ParseStatus::Ok) {
            ++counters.malformed;
            ++counters.malformed_by_status[static_cast<int>(st)];
            arbiter.on_malformed(line);
            continue;
          }
          arbiter.on_packet(line, p, rx.kernel_rx_ns(i), now, rx.kernel_stamped(i));
          end_of_datagram();
        }
        work += n;
        if (n == want) more = true;
      }
    }
    work += static_cast<int>(sequencer.poll(poll_start));
    if (recovery) work += recovery->poll(stats::realtime_ns());
    end_of_datagram();
    return work;
  }
};

FeedHandler::FeedHandler(const FeedConfig& config, Callback on_event) : impl_(std::make_unique<Impl>(config)) {
  if (!on_event) throw Error("feed: the event callback is empty");
  impl_->callback = std::move(on_event);
}

FeedHandler::FeedHandler(const FeedConfig& config, SpscRing<FeedEvent>& ring)
    : impl_(std::make_unique<Impl>(config)) {
  impl_->ring = &ring;
}

FeedHandler::~FeedHandler() = default;

void FeedHandler::on_loss(LossCallback cb) { impl_->loss_cb = std::move(cb); }
void FeedHandler::on_datagram_end(DatagramEndCallback cb) { impl_->datagram_end_cb = std::move(cb); }

int FeedHandler::poll() { return impl_->poll(); }

void FeedHandler::run(const std::atomic<bool>& stop) {
  while (!stop.load(std::memory_order_relaxed)) impl_->idle.idle(impl_->poll());
}

void FeedHandler::finish(std::uint64_t next_seq) {
  if (next_seq == 0) next_seq = impl_->counters.end_of_session_next;
  if (next_seq == 0) next_seq = impl_->sequencer.highest_seen() + 1;
  impl_->arbiter.finish(next_seq);
}

FeedStats FeedHandler::stats() const {
  FeedStats s = impl_->counters;
  s.sequencer = impl_->sequencer.stats();
  for (int i = 0; i < 3; ++i) s.lines[i] = impl_->arbiter.line(i);
  if (impl_->recovery) {
    s.recovery = impl_->recovery->stats();
    s.recovery_outstanding = impl_->recovery->outstanding();
  }
  s.receive_errors = impl_->rx.errors();
  s.next_expected = impl_->sequencer.next_expected();
  s.highest_seen = impl_->sequencer.highest_seen();
  s.buffered = impl_->sequencer.buffered();
  return s;
}

std::vector<std::string> FeedHandler::warnings() const {
  std::vector<std::string> w;
  for (int i = 0; i < impl_->socket_count; ++i) {
    if (!impl_->sockets[i].warning().empty()) w.push_back(impl_->sockets[i].warning());
  }
  return w;
}

std::uint16_t FeedHandler::port(int line) const {
  for (int i = 0; i < impl_->socket_count; ++i) {
    if (impl_->line_of_socket[i] == line) return impl_->sockets[i].local_port();
  }
  return 0;
}

const stats::LatencyHistogram& FeedHandler::lead_ns(int line) const { return impl_->arbiter.lead_ns(line); }
const stats::LatencyHistogram& FeedHandler::rx_to_delivered_ns() const { return impl_->rx_to_delivered; }

}  // namespace tickinfer::feed
