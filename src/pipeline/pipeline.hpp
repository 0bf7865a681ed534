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
// Threads are pinned when cpus are configured; every loop is an agent (agents.hpp) with a
// configurable idle strategy (src/feed/idle_strategy.hpp), driven by the injected Clock
// (clock.hpp): status intervals, stop after [run] seconds, feed silence and the decision log's
// flush interval follow it, so a test moves them with a ManualClock. The parts: ModelRouter
// (load, check, route, warm up), SignalPublisher (signals out, decision log, transmit stamps,
// writer counts), TickProcessor (one event, one duty cycle's housekeeping).
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

#include "pipeline/clock.hpp"
#include "pipeline/config.hpp"
#include "pipeline/run_stats.hpp"
#include "pipeline/stage_stats.hpp"
#include "tickinfer/feed.hpp"

namespace tickinfer::pipeline {

class Pipeline {
 public:
  // clock: the agents' time (clock.hpp); it must outlive the Pipeline.
  explicit Pipeline(const PipelineConfig& config, const Clock& clock = realtime_clock());
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // Runs every model on representative inputs until its block-p50 latency is stable.
  std::vector<WarmupResult> warmup();
  // Writes the ready file (if configured) and flips the readiness reported by the metrics endpoint.
  void mark_ready();
  // Consumes the feed until *stop, the configured seconds, End of Session (all delivered), or a
  // feed silence of 2 x feed_silence_s, all measured on the clock. Call once.
  void run(const std::atomic<bool>& stop);

  const PipelineConfig& config() const noexcept { return cfg_; }
  // The feature plan, a line per model: its columns of the plan and how it reads them.
  std::string feature_plan_text() const;
  // [feed] protocol = "itch50": what the compute side's books applied and their integrity
  // counters, every agent's together (one line); "" for other protocols.
  std::string books_text() const;
  // The same per configured symbol (after run() returned); empty for other protocols.
  std::vector<BookSummary> book_summaries() const;
  const StageStats& stage_stats() const noexcept;
  const std::vector<IntervalSample>& intervals() const noexcept;
  // Number of intervals published so far (readable from another thread while run() runs).
  std::size_t intervals_published() const noexcept;
  std::vector<ModelRunStats> model_stats() const;
  // Per compute agent (one entry per agent; one for a run without [threading] agents).
  std::vector<AgentRunStats> agent_stats() const;
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
