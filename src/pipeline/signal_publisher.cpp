#include "pipeline/signal_publisher.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "stats/clock.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::pipeline {

namespace {
// Datagrams waiting for their kernel transmit stamp at which a busy loop reads them anyway.
constexpr std::size_t kTxBusyWaiting = 64;
}  // namespace

SharedSignals::SharedSignals(const PipelineConfig& cfg) : several(cfg.agents > 1) {
  if (!cfg.shm.empty()) ring = std::make_unique<SignalRingWriter>(cfg.shm, cfg.shm_capacity, several);
}

SignalPublisher::SignalPublisher(const PipelineConfig& cfg, const std::vector<LoggedModel>& models,
                                 std::size_t widest_input, StageStats& stats, SharedSignals& shared, bool join_log)
    : stats_(stats), full_vectors_(cfg.full_vectors), several_(shared.several), seq_(shared.seq), shm_(shared.ring.get()) {
  if (cfg.udp.enabled()) {
    udp_ = feed::UdpSocket::sender(cfg.multicast_interface);
    const sockaddr_in to = feed::make_address(cfg.udp.host, cfg.udp.port);
    // Connected: send() skips the per-datagram route lookup of sendto() (about 0.5 us on loopback).
    if (::connect(udp_.fd(), reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0)
      throw Error("[signals] udp " + cfg.udp.host + ":" + std::to_string(cfg.udp.port) + ": connect failed: " +
                  std::strerror(errno));
    udp_on_ = true;
    batching_ = cfg.udp_batch == SignalBatching::Packet;
    if (cfg.tx_timestamps) {
      tx_ = std::make_unique<TxStampCollector>(udp_.fd());
      if (!tx_->enabled()) tx_.reset();  // the kernel refused: the _tx stages stay empty
    }
  }
  if (!cfg.log_path.empty()) {
    log_ = std::make_unique<DecisionLogWriter>(cfg.log_path, cfg.flush, cfg.flush_interval_ns, cfg.fsync,
                                               cfg.log_buffer_bytes, cfg.log_writer_thread, join_log);
    if (!join_log)
      for (const LoggedModel& m : models) log_->declare(m);
  }
  if (batching_ && log_ && full_vectors_) {
    pending_stride_ = widest_input;
    pending_inputs_.assign(pending_stride_ * kMaxSignalsPerDatagram, 0.0f);
  }
}

void SignalPublisher::warm_up() noexcept {
  Signal s;
  s.score_count = 1;
  encode_signal(s, msg_);
}

Signal& SignalPublisher::claim() noexcept {
  Signal& s = pending_[pending_count_].s;
  s = Signal{};
  return s;
}

void SignalPublisher::commit(const feed::FeedEvent& fe, std::uint16_t model, const float* input,
                             std::uint32_t input_size, std::int64_t model_done_ns) noexcept {
  PendingSignal& p = pending_[pending_count_++];
  Signal& s = p.s;
  // Shared by several agents: one atomic increment; alone: a plain one.
  s.signal_seq = several_ ? seq_.fetch_add(1, std::memory_order_relaxed) + 1 : seq_.load(std::memory_order_relaxed) + 1;
  if (!several_) seq_.store(s.signal_seq, std::memory_order_relaxed);
  s.tick_seq = fe.seq;
  s.instrument = fe.event.instrument();
  s.exchange_ts_ns = fe.event.exchange_ts_ns();
  s.kernel_rx_ns = fe.ts.kernel_rx_ns;
  if (degraded_.exchange(false, std::memory_order_relaxed)) s.flags |= kSignalDegraded;
  if (fe.line == 2) s.flags |= kSignalRecovered;
  p.model = model;
  p.input_size = input_size;
  p.model_done_ns = model_done_ns;
  p.input = input;
  if (log_) {
    p.input_fingerprint = fingerprint(input, input_size);
    if (batching_ && full_vectors_) {
      float* copy = pending_inputs_.data() + (pending_count_ - 1) * pending_stride_;
      std::memcpy(copy, input, input_size * sizeof(float));
      p.input = copy;
    }
  }
  if (!batching_ || pending_count_ == kMaxSignalsPerDatagram) flush();
}

// "Signal sent" is when the send and the shm publish returned.
void SignalPublisher::flush() noexcept {
  if (pending_count_ == 0) return;
  const std::int64_t sent = stats::realtime_ns();
  for (std::size_t i = 0; i < pending_count_; ++i) {
    Signal& s = pending_[i].s;
    s.sent_ns = sent;
    s.rx_to_signal_ns = static_cast<std::uint32_t>(std::clamp<std::int64_t>(sent - s.kernel_rx_ns, 0, 0xFFFFFFFFll));
    encode_signal(s, msg_ + i * kSignalBytes);
  }
  const std::size_t bytes = pending_count_ * kSignalBytes;
  // A refused send (no listener yet: ECONNREFUSED from the ICMP answer) is counted, never retried.
  bool udp_sent = false;
  if (udp_on_) {
    udp_sent = ::send(udp_.fd(), msg_, bytes, MSG_DONTWAIT) == static_cast<ssize_t>(bytes);
    if (!udp_sent) {
      udp_failures_ += pending_count_;
      if (tx_) tx_->send_failed();
    }
  }
  if (shm_) {
    for (std::size_t i = 0; i < pending_count_; ++i) shm_->publish(msg_ + i * kSignalBytes);
    shm_published_ += pending_count_;
  }
  const std::int64_t t_sent = stats::realtime_ns();
  if (tx_ && udp_sent) {
    // The kernel stamped the datagram as it left; the stamp is read back in an idle round.
    for (std::size_t i = 0; i < pending_count_; ++i) {
      tx_exchange_ns_[i] = pending_[i].s.exchange_ts_ns;
      tx_rx_ns_[i] = pending_[i].s.kernel_rx_ns;
    }
    tx_->sent(sent, t_sent, tx_exchange_ns_, tx_rx_ns_, pending_count_);
    // A backlog can keep the loop from its housekeeping rounds for thousands of datagrams: read
    // the stamps here once many wait, before the collector must give the oldest up.
    if (tx_->waiting() >= kTxBusyWaiting) read_tx_stamps(t_sent, false, false);
  }
  for (std::size_t i = 0; i < pending_count_; ++i) {
    const PendingSignal& p = pending_[i];
    const Signal& s = p.s;
    stats_.stage[kSignal].record(t_sent - p.model_done_ns);
    stats_.stage[kRxToSignal].record(t_sent - s.kernel_rx_ns);
    stats_.interval_rx.record(t_sent - s.kernel_rx_ns);
    const bool per_model = p.model < stats_.model_rx.size();
    if (per_model) stats_.model_rx[p.model].record(t_sent - s.kernel_rx_ns);
    if (same_clock(s.kernel_rx_ns, s.exchange_ts_ns)) {
      stats_.stage[kEndToEnd].record(t_sent - s.exchange_ts_ns);
      stats_.interval_e2e.record(t_sent - s.exchange_ts_ns);
      if (per_model) stats_.model_e2e[p.model].record(t_sent - s.exchange_ts_ns);
    }
    ++signals_;
    if (log_) {
      DecisionRecord r;
      r.model = p.model;
      r.instrument = s.instrument;
      r.wall_ns = s.sent_ns;
      r.tick_seq = s.tick_seq;
      r.signal_seq = s.signal_seq;
      r.exchange_ts_ns = s.exchange_ts_ns;
      r.latency_ns = s.rx_to_signal_ns;
      r.decision = s.decision;
      r.score_count = s.score_count;
      for (int k = 0; k < s.score_count; ++k) r.scores[k] = s.scores[k];
      r.input_fingerprint = p.input_fingerprint;
      log_->append(r, full_vectors_ ? p.input : nullptr, p.input_size, now_ns_);
    }
  }
  pending_count_ = 0;
}

// Normally in idle rounds only, once a few datagrams or a millisecond's worth wait (one recvmmsg
// reads several). While a backlog keeps the loop busy, it still reads once many wait, everything
// queued: the error queue counts against the socket's receive buffer, and a full one drops stamps.
void SignalPublisher::read_tx_stamps(std::int64_t now_ns, bool idle, bool all) noexcept {
  constexpr std::size_t kMinWaiting = 4;
  constexpr std::int64_t kMaxWaitNs = 1'000'000;
  if (!tx_ || tx_->waiting() == 0) return;
  if (!all && !idle && tx_->waiting() < kTxBusyWaiting) return;
  if (!all && tx_->waiting() < kMinWaiting && now_ns - tx_->oldest_sent_ns() < kMaxWaitNs) return;
  auto record = [this](std::int64_t tx_ns, std::int64_t exchange_ns, std::int64_t rx_ns) {
    stats_.stage[kRxToTx].record(tx_ns - rx_ns);
    if (same_clock(rx_ns, exchange_ns)) {
      stats_.stage[kEndToEndTx].record(tx_ns - exchange_ns);
      stats_.interval_e2e_tx.record(tx_ns - exchange_ns);
    }
  };
  // A full batch means more may wait: read on until the queue is short of one, so a busy loop
  // that sends more than a batch per round does not let the backlog grow until stamps are given
  // up (at 1,024 waiting). The last, short read costs no extra call.
  for (int n = tx_->drain(record); n == TxStampCollector::kReadBatch || (all && n > 0); n = tx_->drain(record)) {
  }
}

void SignalPublisher::maintain(std::int64_t now_ns) noexcept {
  if (log_) log_->maybe_flush(now_ns);
}

void SignalPublisher::finish() noexcept {
  if (log_) log_->flush();
}

WriterTotals SignalPublisher::totals() const noexcept {
  WriterTotals t;
  t.udp_send_failures = udp_failures_;
  if (tx_) {
    t.tx_stamps_on = true;
    t.tx_stamps_matched = tx_->matched();
    t.tx_stamps_missing = tx_->missing() + tx_->waiting();
    t.tx_stamps_stray = tx_->stray();
  }
  if (shm_) {
    t.shm_on = true;
    t.shm_published = shm_published_;
  }
  if (log_) {
    t.decision_log_on = true;
    t.decision_log_records = log_->records();
    t.decision_log_bytes = log_->bytes_written();
    t.decision_log_flushes = log_->flushes();
    t.decision_log_write_errors = log_->write_errors();
    t.decision_log_last_errno = log_->last_write_errno();
    t.decision_log_dropped = log_->dropped();
    t.decision_log_writer_waits = log_->writer_waits();
  }
  return t;
}

}  // namespace tickinfer::pipeline
