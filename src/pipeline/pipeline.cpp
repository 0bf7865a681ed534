#include "pipeline/pipeline.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <thread>

#include "features/feature_pipeline.hpp"
#include "features/feature_plan.hpp"
#include "features/shm_feature_ring.hpp"
#include "features/shm_feature_store.hpp"
#include "pipeline/agents.hpp"
#include "pipeline/alloc_counter.hpp"
#include "pipeline/feature_udp_publisher.hpp"
#include "pipeline/metrics_server.hpp"
#include "pipeline/metrics_text.hpp"
#include "pipeline/model_router.hpp"
#include "pipeline/signal_publisher.hpp"
#include "pipeline/tick_processor.hpp"
#include "tickinfer/error.hpp"
#include "tickinfer/spsc_ring.hpp"

namespace tickinfer::pipeline {
namespace {

// The supervisor's duty cycle: it only reports and checks stop conditions.
constexpr auto kSupervisorPeriod = std::chrono::milliseconds(20);
// After End of Session: what the compute side still holds drains before the agents halt.
constexpr auto kEndOfSessionDrain = std::chrono::milliseconds(50);

feed::FeedConfig feed_config(const PipelineConfig& cfg) {
  feed::FeedConfig fc;
  fc.line_a = {cfg.line_a.host, cfg.line_a.port, cfg.interface};
  fc.has_line_b = cfg.line_b.enabled();
  if (fc.has_line_b) fc.line_b = {cfg.line_b.host, cfg.line_b.port, cfg.interface};
  if (cfg.recovery.enabled()) {
    fc.recovery_host = cfg.recovery.host;
    fc.recovery_port = cfg.recovery.port;
  }
  fc.session = cfg.session;
  fc.gap_timeout_ns = cfg.gap_timeout_ns;
  fc.recovery_timeout_ns = cfg.recovery_timeout_ns;
  fc.recovery_attempts = cfg.recovery_attempts;
  fc.rcvbuf_bytes = cfg.rcvbuf_bytes;
  fc.idle = cfg.feed_idle;
  return fc;
}

// The spec's instruments that another shard computes, sorted: what TickProcessor counts as
// skipped (an instrument in no shard is unknown, counted by the features).
std::vector<std::uint32_t> other_shards(const features::FeaturePlan& plan) {
  std::vector<std::uint32_t> mine = plan.spec.instruments, others;
  std::sort(mine.begin(), mine.end());
  for (auto id : plan.universe)
    if (!std::binary_search(mine.begin(), mine.end(), id)) others.push_back(id);
  std::sort(others.begin(), others.end());
  return others;
}

}  // namespace

// Members in construction order; destruction (reverse) stops the feed before what it delivers into.
struct Pipeline::Impl {
  const PipelineConfig& cfg;
  const Clock& clock;
  features::FeaturePlan plan;  // the union of the models' features, and each model's view; plan.spec:
                               // what the one FeaturePipeline computes
  std::unique_ptr<features::FeaturePipeline> features;
  std::unique_ptr<ModelRouter> router;
  StageStats stats;
  RunStatus status;
  std::unique_ptr<SignalPublisher> publisher;  // null with check_only
  std::unique_ptr<TickProcessor> compute;      // null with check_only
  std::unique_ptr<features::ShmFeatureWriter> feature_store;  // [features] shm; null when off
  std::unique_ptr<features::FeatureRingWriter> feature_ring;  // [features] ring; null when off
  std::unique_ptr<FeatureUdpPublisher> feature_udp;           // [features] udp; null when off
  std::unique_ptr<MetricsServer> metrics;
  std::string metrics_text;  // the supervisor's, capacity kMetricsTextBytes
  std::unique_ptr<SpscRing<feed::FeedEvent>> ring;
  std::unique_ptr<feed::FeedHandler> feed;

  std::vector<WarmupResult> warm;
  std::atomic<bool> ready{false};
  std::uint64_t alloc_ready = 0, alloc_end = 0;
  double seconds = 0;
  bool degraded = false;
  std::string degraded_reason;

  Impl(const PipelineConfig& c, const Clock& k) : cfg(c), clock(k) {}
};

Pipeline::Pipeline(const PipelineConfig& config, const Clock& clock)
    : cfg_(config), impl_(std::make_unique<Impl>(cfg_, clock)) {
  Impl& m = *impl_;
  m.plan = plan_run_features(cfg_);
  m.features = std::make_unique<features::FeaturePipeline>(m.plan.spec);
  m.router = std::make_unique<ModelRouter>(cfg_, m.plan, *m.features);
  if (cfg_.check_only) return;

  // Outputs.
  m.publisher = std::make_unique<SignalPublisher>(cfg_, m.router->logged_models(), m.router->widest_input(), m.stats);
  if (m.publisher->batching()) m.router->enable_row_batches();
  const double interval_s = static_cast<double>(cfg_.status_interval_ns) / 1e9;
  const double span = cfg_.seconds > 0 ? cfg_.seconds + 60 : 86400;
  m.compute = std::make_unique<TickProcessor>(*m.features, *m.router, *m.publisher, m.stats, cfg_.status_interval_ns,
                                              static_cast<std::size_t>(span / interval_s) + 16, m.status.lost_messages);
  if (cfg_.shard.enabled()) m.compute->set_other_shards(other_shards(m.plan));
  if (!cfg_.features_shm.empty()) {
    m.feature_store =
        std::make_unique<features::ShmFeatureWriter>("/" + cfg_.features_shm, m.plan.spec, cfg_.features_shm_ttl_ns);
    m.compute->publish_features(m.feature_store.get());
  }
  if (!cfg_.features_ring.empty()) {
    m.feature_ring = std::make_unique<features::FeatureRingWriter>("/" + cfg_.features_ring, m.plan.spec,
                                                                  cfg_.features_ring_capacity);
    m.compute->stream_features(m.feature_ring.get());
  }
  if (cfg_.features_udp.enabled()) {
    m.feature_udp = std::make_unique<FeatureUdpPublisher>(cfg_.features_udp, cfg_.multicast_interface, m.plan.spec.width(),
                                                          m.plan.spec.feature_set_id());
    m.compute->send_features(m.feature_udp.get());
  }
  if (cfg_.metrics.enabled()) {
    m.metrics = std::make_unique<MetricsServer>(cfg_.metrics.host, cfg_.metrics.port);
    m.metrics_text.reserve(kMetricsTextBytes);
    format_metrics(m.metrics_text, false, nullptr, 0);
    m.metrics->set_text(m.metrics_text);
  }

  // Feed last: its sockets start buffering data as soon as they are bound.
  const feed::FeedConfig fc = feed_config(cfg_);
  TickProcessor* compute = m.compute.get();
  if (cfg_.threading == ThreadingMode::Rings) {
    m.ring = std::make_unique<SpscRing<feed::FeedEvent>>(cfg_.ring_capacity);
    m.feed = std::make_unique<feed::FeedHandler>(fc, *m.ring);
  } else {
    m.feed = std::make_unique<feed::FeedHandler>(fc, [compute](const feed::FeedEvent& e) { compute->on_event(e); });
    // Batches end with the inbound datagram when signals are batched or feature vectors wait for
    // their UDP datagram.
    if (m.publisher->batching() || m.feature_udp) m.feed->on_datagram_end([compute] { compute->end_batch(); });
  }
  RunStatus* status = &m.status;
  SignalPublisher* publisher = m.publisher.get();
  m.feed->on_loss([status, publisher](std::uint64_t, std::uint64_t count, feed::LossReason) {
    status->loss_ranges.fetch_add(1, std::memory_order_relaxed);
    status->lost_messages.fetch_add(count, std::memory_order_relaxed);
    publisher->mark_degraded();
  });
}

Pipeline::~Pipeline() = default;

std::string Pipeline::feature_plan_text() const {
  const features::FeaturePlan& plan = impl_->plan;
  std::string t = "feature plan: " + std::to_string(plan.spec.width()) + " columns computed once per tick (" +
                  std::to_string(plan.pipeline_columns) + " from the spec, " +
                  std::to_string(plan.spec.width() - plan.pipeline_columns) + " added by models), " +
                  std::to_string(plan.requested_columns) + " requested by " + std::to_string(plan.views.size()) +
                  " model(s)\n";
  if (cfg_.shard.enabled())
    t += "shard: " + std::to_string(plan.spec.instruments.size()) + " of the spec's " +
         std::to_string(plan.universe.size()) + " instruments (" +
         (cfg_.shard.instruments.empty()
              ? "id % " + std::to_string(cfg_.shard.count) + " == " + std::to_string(cfg_.shard.index)
              : std::string("listed in [shard] instruments")) +
         "); the other shards' events are skipped\n";
  for (std::size_t i = 0; i < plan.views.size(); ++i) {
    const features::FeatureView& v = plan.views[i];
    t += "  model '" + cfg_.models[i].name + "': " + std::to_string(v.width()) + " columns, ";
    if (v.identity) t += "the plan itself, read in place";
    else if (v.prefix) t += "the plan's first columns, read in place";
    else t += std::string(v.scaling == features::ViewScaling::Own ? "its own scaling from the raw values" : "gathered") +
              ", view " + std::to_string(v.group);
    for (std::size_t o = 0; o < i; ++o)
      if (plan.views[o].group == v.group && !v.prefix) {
        t += " (shared with '" + cfg_.models[o].name + "': built once per tick)";
        break;
      }
    t += "\n";
  }
  return t;
}

const StageStats& Pipeline::stage_stats() const noexcept { return impl_->stats; }
const std::vector<IntervalSample>& Pipeline::intervals() const noexcept {
  static const std::vector<IntervalSample> none;
  return impl_->compute ? impl_->compute->intervals() : none;
}
std::size_t Pipeline::intervals_published() const noexcept {
  return impl_->compute ? impl_->compute->published() : 0;
}
const std::vector<WarmupResult>& Pipeline::warmup_results() const noexcept { return impl_->warm; }
bool Pipeline::ready() const noexcept { return impl_->ready.load(); }
bool Pipeline::polling() const noexcept { return impl_->status.polling.load(std::memory_order_acquire); }
std::uint16_t Pipeline::feed_port(int line) const { return impl_->feed->port(line); }
feed::FeedStats Pipeline::feed_stats() const { return impl_->feed->stats(); }
std::vector<ModelRunStats> Pipeline::model_stats() const { return impl_->router->run_stats(); }

RunTotals Pipeline::totals() const {
  const Impl& m = *impl_;
  RunTotals t;
  if (m.publisher) {
    static_cast<WriterTotals&>(t) = m.publisher->totals();
    t.signals = m.publisher->signals();
  }
  if (m.compute) {
    t.events = m.compute->events();
    t.features_shm_on = m.feature_store != nullptr;
    t.features_published = m.compute->features_published();
    t.features_ring_on = m.feature_ring != nullptr;
    if (m.feature_ring) t.features_ring_published = m.feature_ring->published();
    t.features_udp_on = m.feature_udp != nullptr;
    if (m.feature_udp) {
      t.features_udp_records = m.feature_udp->records();
      t.features_udp_datagrams = m.feature_udp->datagrams();
      t.features_udp_send_failures = m.feature_udp->send_failures();
    }
    t.wall_clock_exchange = m.compute->wall_clock();
  }
  t.shard_on = cfg_.shard.enabled();
  t.shard_instruments = m.plan.spec.instruments.size();
  t.universe_instruments = m.plan.universe.size();
  if (m.compute) t.other_shard_events = m.compute->other_shard_events();
  t.feature_columns = m.plan.spec.width();
  t.feature_pipeline_columns = m.plan.pipeline_columns;
  t.feature_requested_columns = m.plan.requested_columns;
  t.feature_views = m.plan.groups;
  const ViewCounts vc = m.router->view_counts();
  t.feature_view_builds = vc.builds;
  t.feature_view_reuses = vc.reuses;
  t.feature_view_saved_ns = vc.saved_ns;
  t.feed_loss_reports = m.status.loss_ranges.load();
  t.feed_lost_messages = m.status.lost_messages.load();
  t.allocations_at_ready = m.alloc_ready;
  t.allocations_at_end = m.alloc_end;
  t.seconds = m.seconds;
  t.end_of_session = m.status.end_of_session.load();
  t.degraded = m.degraded;
  t.degraded_reason = m.degraded_reason;
  return t;
}

std::vector<WarmupResult> Pipeline::warmup() {
  Impl& m = *impl_;
  m.warm = m.router->warm_up(cfg_);
  // Warm the signal encoder too (not the UDP destination: no fake signals go out).
  if (m.publisher) m.publisher->warm_up();
  return m.warm;
}

void Pipeline::mark_ready() {
  Impl& m = *impl_;
  if (!cfg_.ready_file.empty()) {
    std::ofstream f(cfg_.ready_file);
    if (!f) throw Error("ready file '" + cfg_.ready_file + "': cannot create");
    f << "ready pid " << getpid() << "\n";
  }
  m.ready.store(true);
  if (m.metrics) {
    format_metrics(m.metrics_text, true, nullptr, 0);
    m.metrics->set_text(m.metrics_text);
  }
}

void Pipeline::run(const std::atomic<bool>& stop) {
  Impl& m = *impl_;
  const std::int64_t start = m.clock.now_ns();
  m.compute->start(start);
  m.status.last_event_ns.store(start);

  // Agents first (constructing them may allocate), then their threads.
  const bool rings = cfg_.threading == ThreadingMode::Rings;
  FeedAgent feed_agent(*m.feed, m.status, rings ? nullptr : m.compute.get());
  std::optional<ComputeAgent> compute_agent;
  if (rings) compute_agent.emplace(*m.ring, *m.compute, m.status);
  RefitAgent refit_agent(*m.features);
  SupervisorAgent supervisor(cfg_, m.status, stop, *m.compute, m.ready, m.metrics.get(), &m.metrics_text, start);
  {
    std::vector<std::unique_ptr<AgentRunner>> runners;
    runners.reserve(3);
    // Inline: one thread, on compute_cpu, with the feed's idle strategy.
    runners.push_back(std::make_unique<AgentRunner>(feed_agent, m.clock, feed::parse_idle_kind(cfg_.feed_idle),
                                                    rings ? cfg_.feed_cpu : cfg_.compute_cpu, m.status.halt,
                                                    &m.status.polling));
    if (rings)
      runners.push_back(std::make_unique<AgentRunner>(*compute_agent, m.clock, feed::parse_idle_kind(cfg_.compute_idle),
                                                      cfg_.compute_cpu, m.status.halt));
    // Rolling standardization refits on its own thread (docs/features.md); never the hot path.
    if (m.plan.spec.standardize.mode == features::StandardizeMode::Rolling)
      runners.push_back(std::make_unique<AgentRunner>(refit_agent, m.clock, feed::IdleKind::BackOff, -1, m.status.halt));
    // Steady state starts here: every thread exists (creating one allocates its state).
    m.alloc_ready = allocation_count();
    supervisor.set_allocations_at_ready(m.alloc_ready);
    do {
      std::this_thread::sleep_for(kSupervisorPeriod);
      supervisor.do_work(m.clock.now_ns());
    } while (supervisor.stop_reason() == StopReason::None);
    if (supervisor.stop_reason() == StopReason::EndOfSession) std::this_thread::sleep_for(kEndOfSessionDrain);
    m.status.halt.store(true);
  }  // the runners join their threads here
  m.degraded = supervisor.degraded();
  m.degraded_reason = supervisor.degraded_reason();
  // Close the per-line loss accounting at the session's end (End of Session's next sequence), so
  // a line's misses at the tail count as well as the ones its later packets revealed.
  if (m.status.end_of_session.load()) m.feed->finish(0);
  m.seconds = static_cast<double>(m.clock.now_ns() - start) / 1e9;
  m.alloc_end = allocation_count();
  const std::uint64_t lost = m.status.lost_messages.load();
  if (lost > 0 && !m.degraded) {
    m.degraded = true;
    m.degraded_reason = std::to_string(lost) + " messages lost by the feed";
  }
  m.publisher->finish();
}

std::string format_stage_table(const StageStats& s) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-13s %-8s %10s %9s %9s %9s %9s %9s\n", "stage", "kind", "samples", "p50 us",
                "p95 us", "p99 us", "p99.9 us", "max us");
  out += line;
  for (int i = 0; i < kStageCount; ++i) {
    const auto& h = s.stage[i];
    const char* kind = stage_is_compute(i) ? "compute" : (i == kRxToSignal || i == kEndToEnd || i == kRxToTx || i == kEndToEndTx ? "total" : "network");
    if (i == kQueue) kind = "queue";
    if (h.count() == 0) {
      std::snprintf(line, sizeof line, "%-13s %-8s %10s %9s\n", stage_name(i), kind, "0", "-");
    } else {
      std::snprintf(line, sizeof line, "%-13s %-8s %10lld %9.2f %9.2f %9.2f %9.2f %9.2f\n", stage_name(i), kind,
                    static_cast<long long>(h.count()), static_cast<double>(h.value_at_percentile(50)) / 1e3,
                    static_cast<double>(h.value_at_percentile(95)) / 1e3,
                    static_cast<double>(h.value_at_percentile(99)) / 1e3,
                    static_cast<double>(h.value_at_percentile(99.9)) / 1e3, static_cast<double>(h.max()) / 1e3);
    }
    out += line;
  }
  return out;
}

}  // namespace tickinfer::pipeline
