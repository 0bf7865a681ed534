#include "pipeline/agents.hpp"

#include <algorithm>
#include <cstdio>

#include "feed/feed_report.hpp"
#include "pipeline/metrics_server.hpp"
#include "pipeline/metrics_text.hpp"
#include "stats/clock.hpp"

namespace tickinfer::pipeline {

AgentRunner::AgentRunner(Agent& agent, const Clock& clock, feed::IdleKind idle_kind, int cpu,
                         const std::atomic<bool>& halt, std::atomic<bool>* started) {
  thread_ = std::thread([&agent, &clock, idle_kind, cpu, &halt, started] {
    stats::pin_current_thread(cpu);
    feed::IdleStrategy idle(idle_kind);
    if (started) started->store(true, std::memory_order_release);
    while (!halt.load(std::memory_order_relaxed)) idle.idle(agent.do_work(clock.now_ns()));
    agent.on_close();
  });
}

AgentRunner::~AgentRunner() {
  if (thread_.joinable()) thread_.join();
}

// The work is the feed's (datagrams, recovery actions): the housekeeping never keeps the idle
// strategy from waiting.
int FeedAgent::do_work(std::int64_t now_ns) noexcept {
  int work = 0;
  if (compute_) {
    compute_->begin_cycle(now_ns);
    const std::uint64_t before = compute_->events();
    work = feed_.poll();
    if (compute_->events() != before) status_.last_event_ns.store(now_ns, std::memory_order_relaxed);
    compute_->housekeeping(now_ns, work == 0);
  } else {
    work = feed_.poll();
  }
  if (now_ns >= next_eos_check_ns_) {
    const feed::FeedStats s = feed_.stats();
    for (int i = 0; i < feed::kParseStatusCount; ++i)
      status_.feed_malformed[i].store(s.malformed_by_status[i], std::memory_order_relaxed);
    std::uint64_t far = 0;
    for (const auto& l : s.lines) far += l.far_future_packets;
    status_.feed_other_session.store(s.sequencer.wrong_session_packets, std::memory_order_relaxed);
    status_.feed_far_future.store(far, std::memory_order_relaxed);
    if (feed::session_over(s)) status_.end_of_session.store(true, std::memory_order_relaxed);
    next_eos_check_ns_ = now_ns + kEndOfSessionCheckNs;
  }
  return work;
}

void FeedAgent::on_close() noexcept {
  if (compute_) compute_->finish();
}

int ComputeAgent::do_work(std::int64_t now_ns) noexcept {
  compute_.begin_cycle(now_ns);
  compute_.note_queue_depth(ring_.size());
  int work = 0;
  feed::FeedEvent e;
  while (work < kMaxEventsPerCycle && ring_.try_pop(e)) {
    compute_.on_event(e);
    ++work;
  }
  compute_.end_batch();  // rings: a batch ends when the ring is drained (datagram bounds are not seen here)
  if (work > 0) status_.last_event_ns.store(now_ns, std::memory_order_relaxed);
  compute_.housekeeping(now_ns, work == 0);
  return work;
}

void ComputeAgent::on_close() noexcept {
  feed::FeedEvent e;
  while (ring_.try_pop(e)) compute_.on_event(e);
  compute_.finish();
}

IntervalSample merge_intervals(const IntervalSample* a, std::size_t n) noexcept {
  IntervalSample m;
  for (std::size_t k = 0; k < n; ++k) {
    const IntervalSample& s = a[k];
    m.t_s = std::max(m.t_s, s.t_s);
    m.ticks += s.ticks;
    m.signals += s.signals;
    m.rx_p50_ns = std::max(m.rx_p50_ns, s.rx_p50_ns);
    m.rx_p99_ns = std::max(m.rx_p99_ns, s.rx_p99_ns);
    m.rx_max_ns = std::max(m.rx_max_ns, s.rx_max_ns);
    m.e2e_p50_ns = std::max(m.e2e_p50_ns, s.e2e_p50_ns);
    m.e2e_p99_ns = std::max(m.e2e_p99_ns, s.e2e_p99_ns);
    m.e2e_max_ns = std::max(m.e2e_max_ns, s.e2e_max_ns);
    m.e2e_tx_p99_ns = std::max(m.e2e_tx_p99_ns, s.e2e_tx_p99_ns);
    m.allocations = std::max(m.allocations, s.allocations);  // one process-wide counter, read at different times
    m.feed_lost = std::max(m.feed_lost, s.feed_lost);
    m.log_write_errors += s.log_write_errors;
    m.features_published += s.features_published;
    m.feature_ring_records += s.feature_ring_records;
    m.feature_udp_records += s.feature_udp_records;
    m.feature_view_builds += s.feature_view_builds;
    m.feature_view_reuses += s.feature_view_reuses;
    m.other_shard_events += s.other_shard_events;
    m.queue_depth_max = std::max(m.queue_depth_max, s.queue_depth_max);
  }
  return m;
}

SupervisorAgent::SupervisorAgent(const PipelineConfig& cfg, const RunStatus& status, const std::atomic<bool>& stop,
                                 std::vector<const TickProcessor*> computes, std::vector<AgentLine> lines,
                                 const std::atomic<bool>& ready, MetricsServer* metrics, std::string* metrics_text,
                                 std::int64_t run_start_ns, MergedIntervals* merged)
    : cfg_(cfg), status_(status), stop_(stop), computes_(std::move(computes)), lines_(std::move(lines)),
      agent_samples_(computes_.size()), merged_(merged), ready_(ready), metrics_(metrics),
      metrics_text_(metrics_text), run_start_ns_(run_start_ns),
      silence_ns_(static_cast<std::int64_t>(cfg.feed_silence_s * 1e9)) {}

namespace {
// "  malformed 3 (too_short 1, trailing_bytes 2)  other-session 1  far-future 1", each only when not 0.
void print_feed_rejections(const IntervalSample& s) {
  std::uint64_t malformed = 0;
  for (auto n : s.feed_malformed) malformed += n;
  if (malformed > 0) std::printf("  %s", feed::report_malformed(malformed, s.feed_malformed).c_str());
  if (s.feed_other_session > 0)
    std::printf("  other-session %llu", static_cast<unsigned long long>(s.feed_other_session));
  if (s.feed_far_future > 0) std::printf("  far-future %llu", static_cast<unsigned long long>(s.feed_far_future));
}
}  // namespace

void SupervisorAgent::report(const IntervalSample& interval, const IntervalSample* agents) {
  IntervalSample s = interval;
  for (int i = 0; i < feed::kParseStatusCount; ++i)
    s.feed_malformed[i] = status_.feed_malformed[i].load(std::memory_order_relaxed);
  s.feed_other_session = status_.feed_other_session.load(std::memory_order_relaxed);
  s.feed_far_future = status_.feed_far_future.load(std::memory_order_relaxed);
  if (!cfg_.quiet) {
    const double secs = static_cast<double>(cfg_.status_interval_ns) / 1e9;
    std::printf("[%6.1fs] %8.0f ticks/s %8.0f signals/s  rx->signal p50 %6.1f us p99 %7.1f us max %8.1f us",
                s.t_s, static_cast<double>(s.ticks) / secs, static_cast<double>(s.signals) / secs,
                static_cast<double>(s.rx_p50_ns) / 1e3, static_cast<double>(s.rx_p99_ns) / 1e3,
                static_cast<double>(s.rx_max_ns) / 1e3);
    if (s.e2e_p99_ns > 0) std::printf("  e2e p99 %7.1f us", static_cast<double>(s.e2e_p99_ns) / 1e3);
    if (s.e2e_tx_p99_ns > 0) std::printf(" (to kernel TX %7.1f us)", static_cast<double>(s.e2e_tx_p99_ns) / 1e3);
    std::printf("  lost %llu  allocs %llu", static_cast<unsigned long long>(s.feed_lost),
                static_cast<unsigned long long>(s.allocations - alloc_ready_));
    if (s.log_write_errors > 0)
      std::printf("  decision log write errors %llu", static_cast<unsigned long long>(s.log_write_errors));
    print_feed_rejections(s);
    std::printf("\n");
    // One line per compute agent: whether one agent's load delays its own instruments only.
    for (std::size_t k = 0; agents && k < computes_.size(); ++k) {
      const IntervalSample& a = agents[k];
      std::printf("         agent %zu (cpu %d, %zu instruments) %8.0f ticks/s %8.0f signals/s  rx->signal p50 %6.1f us p99 "
                  "%7.1f us max %8.1f us  queue max %zu\n",
                  k, lines_[k].cpu, lines_[k].instruments, static_cast<double>(a.ticks) / secs,
                  static_cast<double>(a.signals) / secs, static_cast<double>(a.rx_p50_ns) / 1e3,
                  static_cast<double>(a.rx_p99_ns) / 1e3, static_cast<double>(a.rx_max_ns) / 1e3, a.queue_depth_max);
    }
    std::fflush(stdout);
  }
  if (metrics_) {
    format_metrics(*metrics_text_, ready_.load(), &s, s.allocations - alloc_ready_, agents, agents ? computes_.size() : 0);
    metrics_->set_text(*metrics_text_);
  }
}

int SupervisorAgent::do_work(std::int64_t now_ns) {
  int work = 0;
  std::size_t k = computes_[0]->published();
  for (const TickProcessor* c : computes_) k = std::min(k, c->published());
  for (; printed_ < k; ++printed_, ++work) {
    if (computes_.size() == 1) {
      report(computes_[0]->intervals()[printed_], nullptr);
      continue;
    }
    for (std::size_t a = 0; a < computes_.size(); ++a) agent_samples_[a] = computes_[a]->intervals()[printed_];
    const IntervalSample m = merge_intervals(agent_samples_.data(), agent_samples_.size());
    if (merged_ && printed_ < merged_->samples.size()) {
      merged_->samples[printed_] = m;
      merged_->published.store(printed_ + 1, std::memory_order_release);
    }
    report(m, agent_samples_.data());
  }
  if (reason_ != StopReason::None) return work;
  if (stop_.load()) {
    reason_ = StopReason::Requested;
  } else if (cfg_.seconds > 0 && static_cast<double>(now_ns - run_start_ns_) >= cfg_.seconds * 1e9) {
    reason_ = StopReason::Seconds;
  } else if (status_.end_of_session.load()) {
    reason_ = StopReason::EndOfSession;
  } else {
    const std::int64_t quiet = now_ns - status_.last_event_ns.load(std::memory_order_relaxed);
    if (quiet > silence_ns_ && !warned_silent_) {
      warned_silent_ = true;
      degraded_ = true;
      degraded_reason_ = "feed silent for " + std::to_string(quiet / 1'000'000) + " ms";
      std::fprintf(stderr, "tickinfer run: degraded: no market data for %.1f s\n", static_cast<double>(quiet) / 1e9);
    }
    if (quiet > 2 * silence_ns_) {
      degraded_reason_ = "feed silent for " + std::to_string(quiet / 1'000'000) + " ms: stopped";
      reason_ = StopReason::FeedSilent;
    }
  }
  return work;
}

}  // namespace tickinfer::pipeline
