#pragma once
// The tick-to-signal pipeline behind `tickinfer run`:
//
//   lines A/B -> FeedHandler (receive, arbitrate, sequence, recover, decode)
//     -> FeaturePipeline::on_event -> per routed model: input (current vector / window / row)
//     -> Plan::run -> signal (encode, UDP send, shm ring) -> decision log append
//
// with per-stage timestamps into StageStats. Threading (PipelineConfig::threading):
//   Inline: one thread polls the feed and runs everything in the feed callback;
//   Rings:  a feed thread delivers FeedEvents into an SpscRing; a compute thread does the rest.
// Threads are pinned when cpus are configured; both loops are agents with configurable idle
// strategies (src/feed/idle_strategy.hpp).
//
// Lifecycle: construct (loads and checks everything; throws tickinfer::Error with a clear message:
// bad spec, missing model, signature or width mismatch, socket or shm failure) -> warmup() (every
// model runs on representative inputs until its latency is stable) -> mark_ready() (ready file,
// log line, metrics) -> run(stop) -> statistics / write_report_json(). The hot path (feed event to
// signal) never allocates, locks or throws; allocation_count() sampled in the statistics shows it.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/config.hpp"
#include "pipeline/stage_stats.hpp"
#include "tickinfer/feed.hpp"

namespace tickinfer::pipeline {

struct WarmupResult {
  std::string model;
  int iterations = 0;
  bool stable = false;
  std::int64_t p50_ns = 0;   // of the last block
  std::int64_t p99_ns = 0;
};

struct ModelRunStats {
  std::string name;
  std::uint32_t version = 0;
  std::uint64_t runs = 0;
  std::uint64_t row_calls = 0;  // Plan::run_rows calls that computed them (0: one Plan::run per tick)
  std::uint64_t long_signals = 0, short_signals = 0, flat_signals = 0;
  double score_min = 0, score_max = 0, score_sum = 0;
};

struct RunTotals {
  std::uint64_t events = 0;       // feed events processed by the compute side
  std::uint64_t signals = 0;
  std::uint64_t udp_send_failures = 0;
  bool tx_stamps_on = false;            // kernel transmit stamps read back (rx_to_tx, end_to_end_tx)
  std::uint64_t tx_stamps_matched = 0;  // datagrams whose stamp was read and matched
  std::uint64_t tx_stamps_missing = 0;  // sent datagrams without one (error queue overflowed, or unread)
  std::uint64_t tx_stamps_stray = 0;    // stamps that matched no recorded datagram
  std::uint64_t feed_loss_reports = 0;   // ranges the feed reported lost
  std::uint64_t feed_lost_messages = 0;
  std::uint64_t allocations_at_ready = 0;
  std::uint64_t allocations_at_end = 0;  // equal to the above: nothing allocated in steady state
  double seconds = 0;
  bool end_of_session = false;
  bool degraded = false;           // the feed went silent, or lost data
  std::string degraded_reason;
  bool wall_clock_exchange = false;  // exchange timestamps comparable with receive times
};

class Pipeline {
 public:
  explicit Pipeline(const PipelineConfig& config);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // Runs every model on representative inputs until its block-p50 latency is stable.
  std::vector<WarmupResult> warmup();
  // Writes the ready file (if configured) and flips the readiness reported by the metrics endpoint.
  void mark_ready();
  // Consumes the feed until *stop, the configured seconds, End of Session (all delivered), or a
  // feed silence of 2 x feed_silence_s. Call once.
  void run(const std::atomic<bool>& stop);

  const PipelineConfig& config() const noexcept { return cfg_; }
  const StageStats& stage_stats() const noexcept;
  const std::vector<IntervalSample>& intervals() const noexcept;
  // Number of intervals published so far (readable from another thread while run() runs).
  std::size_t intervals_published() const noexcept;
  std::vector<ModelRunStats> model_stats() const;
  RunTotals totals() const;
  feed::FeedStats feed_stats() const;  // after run() returned
  const std::vector<WarmupResult>& warmup_results() const noexcept;
  bool ready() const noexcept;
  // True once run()'s hot thread reads the feed sockets (a sender started before that would see
  // its first datagrams wait in the socket buffer).
  bool polling() const noexcept;
  // Ports the feed bound (0: absent), A and B.
  std::uint16_t feed_port(int line) const;

  // The run report (docs/pipeline.md "Run report"): configuration summary, per-stage summaries
  // and percentile curves, intervals, feed statistics, models, totals. `extra` (a JSON object
  // text, may be empty) is added under "bench".
  std::string report_json(const std::string& extra = "") const;

  struct Impl;

 private:
  PipelineConfig cfg_;
  std::unique_ptr<Impl> impl_;
};

// The per-stage table printed at the end of a run (p50/p95/p99/p99.9/max per stage, us).
std::string format_stage_table(const StageStats& s);

}  // namespace tickinfer::pipeline
