#include "pipeline/pipeline.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <thread>

#include "itch/itch_forwarder.hpp"
#include "features/feature_pipeline.hpp"
#include "features/feature_plan.hpp"
#include "features/shm_feature_ring.hpp"
#include "features/shm_feature_store.hpp"
#include "pipeline/agents.hpp"
#include "pipeline/compute_unit.hpp"
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
  // ITCH: the feed forwards the symbols' book messages; each compute agent keeps their books
  // (book_tick_config) and feeds the features from them.
  if (cfg.protocol == "itch50")
    fc.decoder = std::make_shared<itch::ItchForwarder>(cfg.itch_symbols, *itch::parse_iso_date(cfg.trading_date));
  return fc;
}

// One compute agent's books: the configured capacity, as deep as its features read.
ItchBookTickConfig book_tick_config(const PipelineConfig& cfg, const features::FeatureSpec& spec) {
  ItchBookTickConfig c;
  c.symbols = cfg.itch_symbols;
  c.date = *itch::parse_iso_date(cfg.trading_date);  // checked when the config was parsed
  c.depth = spec.book_depth();
  c.capacity.orders = cfg.itch_max_orders;
  c.capacity.levels = std::max<std::uint32_t>(cfg.itch_max_orders / 4, 1024);
  return c;
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
                               // what this process computes (every agent's instruments)
  // One per compute agent ([threading] agents; 1: the whole plan): features, models, statistics,
  // publisher, tick processor, ring.
  std::vector<std::unique_ptr<ComputeUnit>> units;
  StageStats merged_stats;  // agents > 1: every agent's statistics, added up after run()
  RunStatus status;
  std::unique_ptr<SharedSignals> shared;  // null with check_only
  std::unique_ptr<features::ShmFeatureWriter> feature_store;  // [features] shm; null when off
  std::unique_ptr<features::FeatureRingWriter> feature_ring;  // [features] ring; null when off
  std::unique_ptr<FeatureUdpPublisher> feature_udp;           // [features] udp; null when off
  std::unique_ptr<MetricsServer> metrics;
  std::string metrics_text;  // the supervisor's, capacity kMetricsTextBytes
  MergedIntervals merged;    // agents > 1
  std::unique_ptr<AgentDispatch> dispatch;  // agents > 1: instrument -> agent ring
  std::unique_ptr<feed::FeedHandler> feed;

  std::vector<WarmupResult> warm;
  std::atomic<bool> ready{false};
  std::uint64_t alloc_ready = 0, alloc_end = 0;
  double seconds = 0;
  bool degraded = false;
  std::string degraded_reason;

  Impl(const PipelineConfig& c, const Clock& k) : cfg(c), clock(k) {}
  bool agents() const { return units.size() > 1; }
  bool running() const { return units[0]->compute != nullptr; }
};

Pipeline::Pipeline(const PipelineConfig& config, const Clock& clock)
    : cfg_(config), impl_(std::make_unique<Impl>(cfg_, clock)) {
  Impl& m = *impl_;
  // The file parser refuses these too; a command-line override must not get around it.
  if (const std::string p = agents_problem(cfg_); !p.empty()) throw Error(p);
  m.plan = plan_run_features(cfg_);
  // The first agent loads and checks every model; the others clone its plans (shared weights).
  const auto parts = cfg_.agents > 1 ? assign_agents(cfg_, m.plan)
                                     : std::vector<std::vector<std::uint32_t>>{m.plan.spec.instruments};
  for (std::size_t k = 0; k < parts.size(); ++k)
    m.units.push_back(std::make_unique<ComputeUnit>(cfg_, m.plan, parts[k], static_cast<int>(k),
                                                    k ? m.units[0]->router.get() : nullptr));
  if (cfg_.check_only) return;

  // Outputs.
  m.shared = std::make_unique<SharedSignals>(cfg_);
  const double interval_s = static_cast<double>(cfg_.status_interval_ns) / 1e9;
  const double span = cfg_.seconds > 0 ? cfg_.seconds + 60 : 86400;
  const auto max_intervals = static_cast<std::size_t>(span / interval_s) + 16;
  for (auto& u : m.units) {
    u->open_outputs(cfg_, *m.shared, u->index > 0, max_intervals, m.status.lost_messages);
    if (cfg_.shard.enabled()) u->compute->set_other_shards(other_shards(m.plan));
    if (cfg_.protocol == "itch50") u->compute->enable_books(book_tick_config(cfg_, u->plan.spec));
  }
  if (m.agents()) m.merged.samples.resize(max_intervals);
  if (!cfg_.features_shm.empty()) {
    m.feature_store =
        std::make_unique<features::ShmFeatureWriter>("/" + cfg_.features_shm, m.plan.spec, cfg_.features_shm_ttl_ns);
    for (auto& u : m.units) {
      std::vector<std::uint32_t> slots;  // the agent's instrument index -> the store's slot
      if (m.agents())
        for (auto id : u->plan.spec.instruments)
          slots.push_back(static_cast<std::uint32_t>(
              std::find(m.plan.spec.instruments.begin(), m.plan.spec.instruments.end(), id) -
              m.plan.spec.instruments.begin()));
      u->compute->publish_features(m.feature_store.get(), std::move(slots));
    }
  }
  TickProcessor& first = *m.units[0]->compute;
  if (!cfg_.features_ring.empty()) {  // one agent only (config.cpp)
    m.feature_ring = std::make_unique<features::FeatureRingWriter>("/" + cfg_.features_ring, m.plan.spec,
                                                                  cfg_.features_ring_capacity);
    first.stream_features(m.feature_ring.get());
  }
  if (cfg_.features_udp.enabled()) {
    m.feature_udp = std::make_unique<FeatureUdpPublisher>(cfg_.features_udp, cfg_.multicast_interface, m.plan.spec.width(),
                                                          m.plan.spec.feature_set_id());
    first.send_features(m.feature_udp.get());
  }
  if (cfg_.metrics.enabled()) {
    m.metrics = std::make_unique<MetricsServer>(cfg_.metrics.host, cfg_.metrics.port);
    m.metrics_text.reserve(kMetricsTextBytes);
    format_metrics(m.metrics_text, false, nullptr, 0);
    m.metrics->set_text(m.metrics_text);
  }

  // Feed last: its sockets start buffering data as soon as they are bound.
  const feed::FeedConfig fc = feed_config(cfg_);
  TickProcessor* compute = &first;
  if (m.agents()) {
    m.dispatch = std::make_unique<AgentDispatch>(m.units);
    AgentDispatch* d = m.dispatch.get();
    m.feed = std::make_unique<feed::FeedHandler>(fc, [d](const feed::FeedEvent& e) { d->on_event(e); });
  } else if (cfg_.threading == ThreadingMode::Rings) {
    m.feed = std::make_unique<feed::FeedHandler>(fc, *m.units[0]->ring);
  } else {
    m.feed = std::make_unique<feed::FeedHandler>(fc, [compute](const feed::FeedEvent& e) { compute->on_event(e); });
    // Batches end with the inbound datagram when signals are batched or feature vectors wait for
    // their UDP datagram.
    if (m.units[0]->publisher->batching() || m.feature_udp) m.feed->on_datagram_end([compute] { compute->end_batch(); });
  }
  RunStatus* status = &m.status;
  std::vector<SignalPublisher*> publishers;
  for (auto& u : m.units) publishers.push_back(u->publisher.get());
  m.feed->on_loss([status, publishers](std::uint64_t, std::uint64_t count, feed::LossReason) {
    status->loss_ranges.fetch_add(1, std::memory_order_relaxed);
    status->lost_messages.fetch_add(count, std::memory_order_relaxed);
    for (SignalPublisher* p : publishers) p->mark_degraded();
  });
}

Pipeline::~Pipeline() = default;

std::string Pipeline::books_text() const {
  book::Integrity t;
  std::uint64_t decoded = 0, undecodable = 0, ticks = 0, live = 0, notices = 0, unapplied = 0;
  bool any = false;
  for (const auto& u : impl_->units) {
    if (!u->compute) continue;
    unapplied += u->compute->unapplied_messages();
    const BookStage* b = u->compute->books();
    if (!b) continue;
    any = true;
    t += b->books().totals();
    decoded += b->decode_counters().total_decoded;
    undecodable += b->decode_counters().total_unknown_type + b->decode_counters().total_wrong_length;
    ticks += b->ticks();
    live += b->books().live_orders();
    notices += b->loss_notices();
  }
  if (!any) return unapplied ? "books: " + std::to_string(unapplied) + " exchange messages had no book stage\n" : "";
  const auto n = [](std::uint64_t v) { return std::to_string(v); };
  return "books: " + n(decoded) + " messages applied (" + n(undecodable) + " undecodable), " + n(ticks) +
         " book ticks to the features, " + n(live) + " live orders at the end, " + n(notices) +
         " loss notices\n       integrity: unknown_ref " + n(t.unknown_ref) + ", duplicate_ref " + n(t.duplicate_ref) +
         ", overfill " + n(t.overfill) + ", bad_side " + n(t.bad_side) + ", zero_shares " + n(t.zero_shares) +
         ", locate_mismatch " + n(t.locate_mismatch) + ", crossed " + n(t.crossed) + ", locked " + n(t.locked) +
         ", capacity_rejects " + n(t.capacity_rejects) + ", while_unsynced " + n(t.while_unsynced) + "\n";
}

std::vector<BookSummary> Pipeline::book_summaries() const {
  std::vector<BookSummary> out;
  if (cfg_.protocol != "itch50") return out;
  for (std::size_t i = 0; i < cfg_.itch_symbols.size(); ++i) {
    BookSummary s;
    s.symbol = cfg_.itch_symbols[i];
    s.instrument = static_cast<std::uint32_t>(i + 1);
    for (const auto& u : impl_->units) {  // the agent that computes it saw its messages
      const BookStage* b = u->compute ? u->compute->books() : nullptr;
      const int locate = b ? b->books().locate_of(s.symbol) : -1;
      if (locate < 0) continue;
      const auto loc = static_cast<std::uint16_t>(locate);
      const book::BookSet& books = b->books();
      s.seen = true;
      s.synced = books.is_synced(loc);
      s.bid_levels = books.depth(loc, book::Side::Bid);
      s.ask_levels = books.depth(loc, book::Side::Ask);
      for (const book::Side side : {book::Side::Bid, book::Side::Ask})
        for (std::size_t l = 0; l < books.depth(loc, side); ++l) s.orders += books.level(loc, side, l).orders;
      s.integrity = books.integrity(loc);
      break;
    }
    out.push_back(s);
  }
  return out;
}

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
  if (impl_->agents()) {
    t += "compute agents: " + std::to_string(impl_->units.size()) +
         " (each its instruments' features, recurrent state and model plans; weights shared)\n";
    for (const auto& u : impl_->units) {
      std::size_t routed = 0;
      for (const auto& mc : cfg_.models) {
        if (mc.instruments.empty()) { ++routed; continue; }
        for (auto id : mc.instruments)
          if (std::find(u->plan.spec.instruments.begin(), u->plan.spec.instruments.end(), id) != u->plan.spec.instruments.end()) {
            ++routed;
            break;
          }
      }
      t += "  agent " + std::to_string(u->index) + ": " + std::to_string(u->plan.spec.instruments.size()) +
           " instruments, " + std::to_string(routed) + " of the models, cpu " +
           (u->cpu < 0 ? std::string("not pinned") : std::to_string(u->cpu)) + "\n";
    }
  }
  return t;
}

const StageStats& Pipeline::stage_stats() const noexcept {
  return impl_->agents() ? impl_->merged_stats : impl_->units[0]->stats;
}
const std::vector<IntervalSample>& Pipeline::intervals() const noexcept {
  static const std::vector<IntervalSample> none;
  if (!impl_->running()) return none;
  return impl_->agents() ? impl_->merged.samples : impl_->units[0]->compute->intervals();
}
std::size_t Pipeline::intervals_published() const noexcept {
  if (!impl_->running()) return 0;
  return impl_->agents() ? impl_->merged.published.load(std::memory_order_acquire) : impl_->units[0]->compute->published();
}
const std::vector<WarmupResult>& Pipeline::warmup_results() const noexcept { return impl_->warm; }
bool Pipeline::ready() const noexcept { return impl_->ready.load(); }
bool Pipeline::polling() const noexcept { return impl_->status.polling.load(std::memory_order_acquire); }
std::uint16_t Pipeline::feed_port(int line) const { return impl_->feed->port(line); }
feed::FeedStats Pipeline::feed_stats() const {
  feed::FeedStats s = impl_->feed->stats();
  if (impl_->dispatch) s.ring_full_spins += impl_->dispatch->full_spins();
  return s;
}

std::vector<ModelRunStats> Pipeline::model_stats() const {
  std::vector<ModelRunStats> all = impl_->units[0]->router->run_stats();
  for (std::size_t k = 1; k < impl_->units.size(); ++k) {
    const std::vector<ModelRunStats> v = impl_->units[k]->router->run_stats();
    for (std::size_t i = 0; i < v.size(); ++i) {
      ModelRunStats& a = all[i];
      const ModelRunStats& b = v[i];
      if (b.runs == 0) continue;
      a.score_min = a.runs ? std::min(a.score_min, b.score_min) : b.score_min;
      a.score_max = a.runs ? std::max(a.score_max, b.score_max) : b.score_max;
      a.runs += b.runs;
      a.row_calls += b.row_calls;
      a.long_signals += b.long_signals;
      a.short_signals += b.short_signals;
      a.flat_signals += b.flat_signals;
      a.score_sum += b.score_sum;
    }
  }
  return all;
}

std::vector<AgentRunStats> Pipeline::agent_stats() const {
  std::vector<AgentRunStats> v;
  if (!impl_->running()) return v;
  for (const auto& u : impl_->units) {
    AgentRunStats a;
    a.index = u->index;
    a.cpu = u->cpu;
    a.instruments = u->plan.spec.instruments.size();
    a.events = u->compute->events();
    a.signals = u->publisher->signals();
    a.queue_depth_max = u->compute->queue_depth_max();
    const auto& h = u->stats.stage[kRxToSignal];
    a.rx_p50_ns = h.value_at_percentile(50);
    a.rx_p99_ns = h.value_at_percentile(99);
    a.rx_p999_ns = h.value_at_percentile(99.9);
    a.rx_max_ns = h.max();
    v.push_back(a);
  }
  return v;
}

namespace {
void add_writer_totals(WriterTotals& t, const WriterTotals& w) {
  t.udp_send_failures += w.udp_send_failures;
  t.tx_stamps_on = t.tx_stamps_on || w.tx_stamps_on;
  t.tx_stamps_matched += w.tx_stamps_matched;
  t.tx_stamps_missing += w.tx_stamps_missing;
  t.tx_stamps_stray += w.tx_stamps_stray;
  t.shm_on = t.shm_on || w.shm_on;
  t.shm_published += w.shm_published;
  t.decision_log_on = t.decision_log_on || w.decision_log_on;
  t.decision_log_records += w.decision_log_records;
  t.decision_log_bytes += w.decision_log_bytes;
  t.decision_log_flushes += w.decision_log_flushes;
  t.decision_log_write_errors += w.decision_log_write_errors;
  if (w.decision_log_last_errno != 0) t.decision_log_last_errno = w.decision_log_last_errno;
  t.decision_log_dropped += w.decision_log_dropped;
  t.decision_log_writer_waits += w.decision_log_writer_waits;
}
}  // namespace

RunTotals Pipeline::totals() const {
  const Impl& m = *impl_;
  RunTotals t;
  for (const auto& u : m.units) {
    if (u->publisher) {
      add_writer_totals(t, u->publisher->totals());
      t.signals += u->publisher->signals();
    }
    if (u->compute) {
      t.events += u->compute->events();
      t.features_published += u->compute->features_published();
      t.other_shard_events += u->compute->other_shard_events();
      t.wall_clock_exchange = t.wall_clock_exchange || u->compute->wall_clock();
    }
    const ViewCounts vc = u->router->view_counts();
    t.feature_view_builds += vc.builds;
    t.feature_view_reuses += vc.reuses;
    t.feature_view_saved_ns += vc.saved_ns;
  }
  t.features_shm_on = m.feature_store != nullptr;
  t.features_ring_on = m.feature_ring != nullptr;
  if (m.feature_ring) t.features_ring_published = m.feature_ring->published();
  t.features_udp_on = m.feature_udp != nullptr;
  if (m.feature_udp) {
    t.features_udp_records = m.feature_udp->records();
    t.features_udp_datagrams = m.feature_udp->datagrams();
    t.features_udp_send_failures = m.feature_udp->send_failures();
  }
  t.shard_on = cfg_.shard.enabled();
  t.shard_instruments = m.plan.spec.instruments.size();
  t.universe_instruments = m.plan.universe.size();
  t.feature_columns = m.plan.spec.width();
  t.feature_pipeline_columns = m.plan.pipeline_columns;
  t.feature_requested_columns = m.plan.requested_columns;
  t.feature_views = m.plan.groups;
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
  // Each agent warms its own clones (their arenas); a model is reported from the first agent
  // that serves it.
  m.warm.clear();
  for (auto& u : m.units) {
    for (WarmupResult& w : u->router->warm_up(cfg_))
      if (std::none_of(m.warm.begin(), m.warm.end(), [&](const WarmupResult& x) { return x.model == w.model; }))
        m.warm.push_back(std::move(w));
    // Warm the signal encoder too (not the UDP destination: no fake signals go out).
    if (u->publisher) u->publisher->warm_up();
  }
  // In the configuration's order.
  std::vector<WarmupResult> ordered;
  for (const auto& mc : cfg_.models)
    for (const auto& w : m.warm)
      if (w.model == mc.name) ordered.push_back(w);
  m.warm = std::move(ordered);
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
  for (auto& u : m.units) u->compute->start(start);
  m.status.last_event_ns.store(start);

  // Agents first (constructing them may allocate), then their threads.
  const bool rings = cfg_.threading == ThreadingMode::Rings;
  FeedAgent feed_agent(*m.feed, m.status, rings ? nullptr : m.units[0]->compute.get());
  std::vector<std::unique_ptr<ComputeAgent>> compute_agents;
  std::vector<std::unique_ptr<RefitAgent>> refit_agents;
  std::vector<const TickProcessor*> computes;
  std::vector<AgentLine> lines;
  for (auto& u : m.units) {
    if (rings) compute_agents.push_back(std::make_unique<ComputeAgent>(*u->ring, *u->compute, m.status));
    refit_agents.push_back(std::make_unique<RefitAgent>(*u->features));
    computes.push_back(u->compute.get());
    lines.push_back({u->cpu, u->plan.spec.instruments.size()});
  }
  SupervisorAgent supervisor(cfg_, m.status, stop, std::move(computes), std::move(lines), m.ready, m.metrics.get(),
                             &m.metrics_text, start, m.agents() ? &m.merged : nullptr);
  {
    std::vector<std::unique_ptr<AgentRunner>> runners;
    runners.reserve(2 + 2 * m.units.size());
    // Inline: one thread, on compute_cpu, with the feed's idle strategy.
    runners.push_back(std::make_unique<AgentRunner>(feed_agent, m.clock, feed::parse_idle_kind(cfg_.feed_idle),
                                                    rings ? cfg_.feed_cpu : cfg_.compute_cpu, m.status.halt,
                                                    &m.status.polling));
    for (std::size_t k = 0; k < compute_agents.size(); ++k)
      runners.push_back(std::make_unique<AgentRunner>(*compute_agents[k], m.clock, feed::parse_idle_kind(cfg_.compute_idle),
                                                      m.units[k]->cpu, m.status.halt));
    // Rolling standardization refits on its own thread (docs/features.md); never the hot path.
    if (m.plan.spec.standardize.mode == features::StandardizeMode::Rolling)
      for (auto& r : refit_agents)
        runners.push_back(std::make_unique<AgentRunner>(*r, m.clock, feed::IdleKind::BackOff, -1, m.status.halt));
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
  for (auto& u : m.units) u->publisher->finish();
  if (m.agents()) {
    m.merged_stats.reset();
    for (auto& u : m.units) m.merged_stats.merge(u->stats);
  }
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
