#pragma once
// Where signals go: the pending batch, one UDP datagram per batch (connected socket), the shm
// ring, the per-stage latency of "signal sent", the decision log, and the kernel transmit stamps
// read back afterwards. It counts what its writers did (WriterTotals) and reports all of it,
// the decision log's write errors included.
//
//   claim() -> (the router fills the model's fields) -> commit(): the signal waits in the batch,
//   or leaves at once with udp_batch = message (or without UDP), or when 15 wait;
//   flush(): stamp, encode, send, publish, record, log, at the end of the inbound datagram
//   (inline) or of the drained ring (rings);
//   read_tx_stamps() / maintain(): the compute thread's housekeeping, in its duty cycle.
//
// Errors: the constructor throws tickinfer::Error (UDP connect, shm ring, decision log file).
// After that nothing throws: a refused send is counted, never retried; a failed log write is
// counted with its errno (WriterTotals), never thrown. Hot path (claim/commit/flush, the
// housekeeping calls) noexcept, allocation-free, no locks; syscalls: the send, and the log's
// write(2) only under flush = "record" or without the writer thread.
// Threading: the compute thread calls everything but mark_degraded (the feed thread) and
// log_write_errors (any thread).
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include <netinet/in.h>

#include "feed/udp_socket.hpp"
#include "pipeline/config.hpp"
#include "pipeline/decision_log.hpp"
#include "pipeline/run_stats.hpp"
#include "pipeline/signal_format.hpp"
#include "pipeline/signal_ring.hpp"
#include "pipeline/stage_stats.hpp"
#include "pipeline/tx_stamps.hpp"
#include "tickinfer/feed.hpp"

namespace tickinfer::pipeline {

// What the publishers of one run's compute agents share: the process's signal sequence (one
// counter: numbers are unique and gap-free across the agents, each agent's ascending) and the
// shm ring (several writers, signal_ring.hpp). One publisher alone shares them with nobody.
struct SharedSignals {
  explicit SharedSignals(const PipelineConfig& cfg);
  bool several = false;  // [threading] agents > 1: the counter and the ring take atomic increments
  std::atomic<std::uint64_t> seq{0};
  std::unique_ptr<SignalRingWriter> ring;  // [signals] shm; null when off
};

class SignalPublisher {
 public:
  // models: the decision log's declarations; widest_input: floats of the largest model input
  // (the batch keeps a copy of each input for the log). join_log: another agent's publisher
  // created the decision log and declared the models; this one appends to it. Each publisher
  // has its own UDP socket (and transmit stamps): one sender per agent.
  SignalPublisher(const PipelineConfig& cfg, const std::vector<LoggedModel>& models, std::size_t widest_input,
                  StageStats& stats, SharedSignals& shared, bool join_log = false);
  SignalPublisher(const SignalPublisher&) = delete;
  SignalPublisher& operator=(const SignalPublisher&) = delete;

  // Signals of one inbound datagram leave together (udp_batch = packet with UDP on).
  bool batching() const noexcept { return batching_; }
  // Warms the encoder and the message buffer (no signal goes out).
  void warm_up() noexcept;

  // The agent's time for this duty cycle: records appended in it count the log's flush interval
  // from here.
  void begin_cycle(std::int64_t now_ns) noexcept { now_ns_ = now_ns; }
  // Hot path: the next pending signal, zeroed, for the model's fields.
  Signal& claim() noexcept;
  // Hot path: adds the tick's fields, the sequence number and the degraded flag to the claimed
  // signal; input (input_size floats) stays readable until the next flush (it is copied when
  // batching with a full-vector log). Sends the batch when it is due.
  void commit(const feed::FeedEvent& fe, std::uint16_t model, const float* input, std::uint32_t input_size,
              std::int64_t model_done_ns) noexcept;
  // Stamps, encodes and sends the pending signals (one datagram), publishes them to the shm ring,
  // records their latency and logs them.
  void flush() noexcept;
  // Reads the kernel's transmit stamps back (a syscall: in idle rounds, or once many wait; `all`:
  // everything queued, at the end of a run).
  void read_tx_stamps(std::int64_t now_ns, bool idle, bool all) noexcept;
  // Housekeeping: the decision log's interval flush.
  void maintain(std::int64_t now_ns) noexcept;
  // After the run: everything buffered goes to the log file.
  void finish() noexcept;

  // Feed thread: lost data; the next signal carries kSignalDegraded.
  void mark_degraded() noexcept { degraded_.store(true, std::memory_order_relaxed); }

  std::uint64_t signals() const noexcept { return signals_; }
  std::uint64_t log_write_errors() const noexcept { return log_ ? log_->write_errors() : 0; }
  // Compute thread, or after the run.
  WriterTotals totals() const noexcept;

 private:
  // A computed signal waiting for its datagram to leave.
  struct PendingSignal {
    Signal s;
    std::uint16_t model = 0;
    std::uint32_t input_size = 0;
    std::int64_t model_done_ns = 0;
    std::uint64_t input_fingerprint = 0;
    const float* input = nullptr;
  };

  StageStats& stats_;
  bool full_vectors_ = true;
  feed::UdpSocket udp_;
  bool udp_on_ = false;
  bool batching_ = false;
  std::unique_ptr<TxStampCollector> tx_;  // kernel transmit stamps of the UDP datagrams
  std::int64_t tx_exchange_ns_[kMaxSignalsPerDatagram] = {}, tx_rx_ns_[kMaxSignalsPerDatagram] = {};
  bool several_ = false;
  std::atomic<std::uint64_t>& seq_;
  SignalRingWriter* shm_ = nullptr;
  std::unique_ptr<DecisionLogWriter> log_;

  std::int64_t now_ns_ = 0;
  std::uint64_t signals_ = 0, udp_failures_ = 0, shm_published_ = 0;
  std::uint8_t msg_[kSignalBytes * kMaxSignalsPerDatagram] = {};
  std::size_t pending_count_ = 0;
  PendingSignal pending_[kMaxSignalsPerDatagram];
  std::vector<float> pending_inputs_;  // kMaxSignalsPerDatagram x pending_stride_ (batching, full-vector log)
  std::size_t pending_stride_ = 0;
  std::atomic<bool> degraded_{false};
};

}  // namespace tickinfer::pipeline
