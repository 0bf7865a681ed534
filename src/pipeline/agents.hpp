#pragma once
// The threads of a run as agents (Aeron's model): each does one duty cycle in do_work(now_ns),
// returns the work it found (0: idle) and knows nothing of threads, idle strategies or clocks;
// an AgentRunner gives it a thread, a pinned CPU, the configured idle strategy
// (feed/idle_strategy.hpp) and the injected clock's time (clock.hpp). A test drives the same
// agents on its own thread with a ManualClock's time.
//
//   FeedAgent       polls the feed; inline mode: the feed delivers into the TickProcessor, and
//                   this agent also does the compute housekeeping; every 1 ms: End of Session?
//   ComputeAgent    rings mode: drains the SpscRing<FeedEvent> (up to 256 per cycle) into the
//                   TickProcessor, ends the batch when drained, housekeeping.
//   RefitAgent      rolling standardization: one FeaturePipeline::refit_step per cycle.
//   SupervisorAgent status lines and metrics for every published interval; the stop conditions
//                   (stop flag, [run] seconds, End of Session, feed silence). Never on the hot path.
//
// The hot agents' do_work is noexcept and allocation-free. RunStatus is what they share.
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "feed/idle_strategy.hpp"
#include "pipeline/clock.hpp"
#include "pipeline/config.hpp"
#include "pipeline/tick_processor.hpp"
#include "tickinfer/feed.hpp"
#include "tickinfer/spsc_ring.hpp"

namespace tickinfer::pipeline {

class MetricsServer;

// Shared by the agents of one run, across threads.
struct RunStatus {
  std::atomic<bool> halt{false};            // the runners stop after the current duty cycle
  std::atomic<bool> polling{false};         // the feed agent's thread entered its loop
  std::atomic<bool> end_of_session{false};  // End of Session seen and everything before it delivered
  std::atomic<std::int64_t> last_event_ns{0};  // clock time of the latest duty cycle that processed an event
  std::atomic<std::uint64_t> loss_ranges{0}, lost_messages{0};  // what the feed reported lost
  // What the feed rejected, published by the feed agent with its End of Session check.
  std::atomic<std::uint64_t> feed_malformed[feed::kParseStatusCount] = {};
  std::atomic<std::uint64_t> feed_other_session{0}, feed_far_future{0};
};

class Agent {
 public:
  virtual ~Agent() = default;
  // One duty cycle at clock time now_ns; the work done (0: the idle strategy waits).
  virtual int do_work(std::int64_t now_ns) = 0;
  // On the agent's thread, after its last duty cycle.
  virtual void on_close() noexcept {}
};

// One agent on a thread of its own until `halt`: pin (cpu < 0: not pinned), mark `started`,
// then do_work(clock.now_ns()) and idle(work) in turn; on_close at the end. Joins on destruction.
class AgentRunner {
 public:
  AgentRunner(Agent& agent, const Clock& clock, feed::IdleKind idle, int cpu, const std::atomic<bool>& halt,
              std::atomic<bool>* started = nullptr);
  ~AgentRunner();
  AgentRunner(const AgentRunner&) = delete;
  AgentRunner& operator=(const AgentRunner&) = delete;

 private:
  std::thread thread_;
};

class FeedAgent final : public Agent {
 public:
  // compute: the inline mode's compute side, which the feed delivers into; nullptr for rings.
  FeedAgent(feed::FeedHandler& feed, RunStatus& status, TickProcessor* compute) noexcept
      : feed_(feed), status_(status), compute_(compute) {}
  int do_work(std::int64_t now_ns) noexcept override;
  void on_close() noexcept override;

 private:
  static constexpr std::int64_t kEndOfSessionCheckNs = 1'000'000;
  feed::FeedHandler& feed_;
  RunStatus& status_;
  TickProcessor* compute_;
  std::int64_t next_eos_check_ns_ = 0;  // the first cycle checks
};

class ComputeAgent final : public Agent {
 public:
  ComputeAgent(SpscRing<feed::FeedEvent>& ring, TickProcessor& compute, RunStatus& status) noexcept
      : ring_(ring), compute_(compute), status_(status) {}
  int do_work(std::int64_t now_ns) noexcept override;
  void on_close() noexcept override;  // drains what the feed already delivered

 private:
  static constexpr int kMaxEventsPerCycle = 256;
  SpscRing<feed::FeedEvent>& ring_;
  TickProcessor& compute_;
  RunStatus& status_;
};

class RefitAgent final : public Agent {
 public:
  explicit RefitAgent(features::FeaturePipeline& features) noexcept : features_(features) {}
  int do_work(std::int64_t) noexcept override { return features_.refit_step(); }

 private:
  features::FeaturePipeline& features_;
};

enum class StopReason { None, Requested, Seconds, EndOfSession, FeedSilent };

// With [threading] agents > 1: the run's intervals, each merged from every agent's sample of it
// by the supervisor (counts summed; latencies and queue depth the worst agent's).
struct MergedIntervals {
  std::vector<IntervalSample> samples;  // allocated at set-up
  std::atomic<std::size_t> published{0};
};
IntervalSample merge_intervals(const IntervalSample* agents, std::size_t n) noexcept;

// What a status line says about a compute agent besides its interval.
struct AgentLine {
  int cpu = -1;
  std::size_t instruments = 0;
};

class SupervisorAgent final : public Agent {
 public:
  // metrics / metrics_text: the endpoint and its text buffer (nullptr: no endpoint).
  // computes: one per compute agent; with more than one, each interval is reported merged (into
  // *merged) and per agent (a line each, labelled metrics), once every agent has published it.
  SupervisorAgent(const PipelineConfig& cfg, const RunStatus& status, const std::atomic<bool>& stop,
                  std::vector<const TickProcessor*> computes, std::vector<AgentLine> lines,
                  const std::atomic<bool>& ready, MetricsServer* metrics, std::string* metrics_text,
                  std::int64_t run_start_ns, MergedIntervals* merged = nullptr);
  // Steady state starts here: status lines report allocations relative to it.
  void set_allocations_at_ready(std::uint64_t n) noexcept { alloc_ready_ = n; }
  // Reports the intervals published since the last cycle (the work), then checks the stop
  // conditions in order: stop flag, seconds, End of Session, feed silence (degraded after
  // feed_silence_s, stopped after twice that).
  int do_work(std::int64_t now_ns) override;

  StopReason stop_reason() const noexcept { return reason_; }
  bool degraded() const noexcept { return degraded_; }
  const std::string& degraded_reason() const noexcept { return degraded_reason_; }

 private:
  void report(const IntervalSample& s, const IntervalSample* agents);
  const PipelineConfig& cfg_;
  const RunStatus& status_;
  const std::atomic<bool>& stop_;
  std::vector<const TickProcessor*> computes_;
  std::vector<AgentLine> lines_;
  std::vector<IntervalSample> agent_samples_;  // one interval of every agent
  MergedIntervals* merged_;
  const std::atomic<bool>& ready_;
  MetricsServer* metrics_;
  std::string* metrics_text_;
  const std::int64_t run_start_ns_;
  const std::int64_t silence_ns_;
  std::uint64_t alloc_ready_ = 0;
  std::size_t printed_ = 0;
  bool warned_silent_ = false;
  StopReason reason_ = StopReason::None;
  bool degraded_ = false;
  std::string degraded_reason_;
};

}  // namespace tickinfer::pipeline
