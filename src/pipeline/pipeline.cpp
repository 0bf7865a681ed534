#include "pipeline/pipeline.hpp"

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <thread>

#include "features/feature_pipeline.hpp"
#include "features/signature.hpp"
#include "feed/idle_strategy.hpp"
#include "feed/udp_socket.hpp"
#include "pipeline/alloc_counter.hpp"
#include "pipeline/decision_log.hpp"
#include "pipeline/metrics_server.hpp"
#include "pipeline/metrics_text.hpp"
#include "pipeline/signal_format.hpp"
#include "pipeline/signal_ring.hpp"
#include "pipeline/tx_stamps.hpp"
#include "stats/clock.hpp"
#include "tickinfer/error.hpp"
#include "tickinfer/spsc_ring.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer::pipeline {
namespace {



constexpr std::int64_t kWallClockSkew = 10'000'000'000;  // |rx - exchange ts| below this: same clock

}  // namespace

struct RunningModel {
  ModelConfig cfg;
  std::unique_ptr<Plan> plan;                  // Tick / Window
  std::vector<std::unique_ptr<Plan>> stream;   // Stream: one stateful plan per instrument index
  std::size_t input_size = 0;
  std::vector<float> out;
  std::vector<int> outputs;
  ModelRunStats st;
  // Tick mode with signals batched per inbound datagram, on a row-wise plan: the datagram's ticks
  // wait here and run in one Plan::run_rows call (each row bit-identical to Plan::run) at the
  // end of the datagram, every layer's weights read once for all of them.
  bool rows = false;
  std::vector<float> rows_in, rows_out;           // kMaxSignalsPerDatagram x input / output size
  std::vector<feed::FeedEvent> rows_events;       // the ticks waiting
  std::vector<std::int64_t> rows_ready_ns;        // when each one's input was ready
  int rows_pending = 0;
};

// A computed signal waiting for its datagram to leave (see PipelineConfig::udp_batch).
struct PendingSignal {
  Signal s;
  RunningModel* model = nullptr;
  std::int64_t model_done_ns = 0;
  std::uint64_t input_fingerprint = 0;
  const float* input = nullptr;  // the model's input, copied (batching) so the next tick cannot change it
};

struct Pipeline::Impl {
  const PipelineConfig& cfg;
  features::FeatureSpec spec;
  std::unique_ptr<features::FeaturePipeline> features;
  std::vector<RunningModel> models;
  std::vector<std::vector<int>> routes;  // instrument index -> model indices
  std::unique_ptr<SpscRing<feed::FeedEvent>> ring;
  std::unique_ptr<feed::FeedHandler> feed;
  feed::UdpSocket udp;
  sockaddr_in udp_to{};
  bool udp_on = false;
  std::unique_ptr<TxStampCollector> tx;  // kernel transmit stamps of the UDP datagrams
  std::int64_t tx_exchange_ns[kMaxSignalsPerDatagram], tx_rx_ns[kMaxSignalsPerDatagram];
  std::unique_ptr<SignalRingWriter> shm;
  std::unique_ptr<DecisionLogWriter> log;
  std::unique_ptr<MetricsServer> metrics;
  std::string metrics_text;  // the supervisor's, capacity kMetricsTextBytes

  StageStats stats;
  std::vector<IntervalSample> intervals;
  std::atomic<std::size_t> published{0};
  std::vector<WarmupResult> warm;
  std::atomic<bool> ready{false};
  std::atomic<bool> polling{false};  // the hot thread(s) entered their loop

  // Hot-path state (compute thread).
  std::uint64_t events = 0, signals = 0, udp_failures = 0;
  std::uint64_t interval_events = 0, interval_signals = 0;
  std::uint64_t signal_seq = 0;
  std::int64_t run_start = 0, next_interval = 0;
  bool wall_clock = false;
  std::uint8_t msg[kSignalBytes * kMaxSignalsPerDatagram];
  bool batching = false;                // udp_batch = packet with UDP on: flush per inbound datagram
  std::size_t pending_count = 0;
  PendingSignal pending[kMaxSignalsPerDatagram];
  std::vector<float> pending_inputs;    // kMaxSignalsPerDatagram x the widest model input (full_vectors log)
  std::size_t pending_stride = 0;

  // Shared between threads.
  std::atomic<bool> halt{false};
  std::atomic<bool> eos{false};
  std::atomic<std::int64_t> last_event_ns{0};
  std::atomic<std::uint64_t> loss_ranges{0}, lost_messages{0};
  std::atomic<bool> degraded_flag{false};
  std::uint64_t alloc_ready = 0, alloc_end = 0;
  double seconds = 0;
  bool degraded = false;
  std::string degraded_reason;

  explicit Impl(const PipelineConfig& c) : cfg(c) {}

  void on_event(const feed::FeedEvent& fe) noexcept;
  void emit(RunningModel& m, const float* input, const feed::FeedEvent& fe, std::int64_t t_model) noexcept;
  void flush_signals() noexcept;
  void run_rows(RunningModel& m) noexcept;
  void flush_batches() noexcept;
  void housekeeping(std::int64_t now) noexcept;
  void read_tx_stamps(std::int64_t now, bool idle, bool all) noexcept;
  void check_eos() noexcept;
};

Pipeline::Pipeline(const PipelineConfig& config) : cfg_(config), impl_(std::make_unique<Impl>(cfg_)) {
  Impl& m = *impl_;
  m.spec = features::load_feature_spec(cfg_.feature_spec);
  m.features = std::make_unique<features::FeaturePipeline>(m.spec);
  const std::size_t width = m.spec.width();
  m.routes.resize(m.spec.instruments.size());

  for (std::size_t mi = 0; mi < cfg_.models.size(); ++mi) {
    const ModelConfig& mc = cfg_.models[mi];
    const std::string who = "model '" + mc.name + "' (" + mc.path + ")";
    if (access(mc.path.c_str(), R_OK) != 0) throw Error(who + ": file not found or not readable");
    if (mc.check_signature) features::check_signature(m.spec, features::load_model_signature(mc.path), who);
    const Model model = Model::load(mc.path);
    const auto ins = model.inputs();
    if (ins.size() != 1 || ins[0].shape.empty())
      throw Error(who + ": expected exactly one input with a feature axis");
    features::check_input_width(m.spec, static_cast<std::size_t>(ins[0].shape.back()), who);
    RunningModel rm;
    rm.cfg = mc;
    CompileOptions opt;
    if (mc.trigger == ModelTrigger::Stream) opt.mode = RecurrentMode::Stream;
    if (mc.trigger == ModelTrigger::Window) opt.window_length = mc.window > 0 ? mc.window : static_cast<int>(m.spec.window);
    Plan plan = compile(model, opt);
    if (plan.num_inputs() != 1 || plan.num_outputs() != 1)
      throw Error(who + ": the pipeline runs models with one input and one output");
    rm.input_size = plan.input_size(0);
    if (mc.trigger == ModelTrigger::Tick && rm.input_size != width)
      throw Error(who + ": mode \"tick\" needs an input of " + std::to_string(width) + " features, the model takes " +
                  std::to_string(rm.input_size) + " (a sequence model needs mode \"window\" or \"stream\")");
    if (mc.trigger == ModelTrigger::Window && rm.input_size != width * m.spec.window)
      throw Error(who + ": mode \"window\" needs [" + std::to_string(m.spec.window) + ", " + std::to_string(width) +
                  "] inputs (the feature spec's window), the model takes " + std::to_string(rm.input_size) + " floats");
    if (mc.trigger == ModelTrigger::Stream && rm.input_size != width)
      throw Error(who + ": mode \"stream\" needs " + std::to_string(width) + " features per step");
    for (int o : mc.outputs)
      if (o < 0 || static_cast<std::size_t>(o) >= plan.output_size(0))
        throw Error(who + ": outputs lists element " + std::to_string(o) + ", the model has " +
                    std::to_string(plan.output_size(0)));
    rm.out.assign(plan.output_size(0), 0.0f);
    rm.outputs = mc.outputs;
    rm.st.name = mc.name;
    rm.st.version = mc.version;
    // Routing: listed instruments (each must be in the spec), or all.
    std::vector<std::size_t> idx;
    if (mc.instruments.empty()) {
      for (std::size_t i = 0; i < m.spec.instruments.size(); ++i) idx.push_back(i);
    } else {
      for (auto id : mc.instruments) {
        const int i = m.features->instrument_index(id);
        if (i < 0) throw Error(who + ": routed instrument " + std::to_string(id) + " is not in the feature spec");
        idx.push_back(static_cast<std::size_t>(i));
      }
    }
    if (mc.trigger == ModelTrigger::Stream) {
      rm.stream.resize(m.spec.instruments.size());
      for (auto i : idx) rm.stream[i] = std::make_unique<Plan>(plan.clone());
    }
    rm.plan = std::make_unique<Plan>(std::move(plan));
    for (auto i : idx) m.routes[i].push_back(static_cast<int>(mi));
    m.models.push_back(std::move(rm));
  }

  if (cfg_.check_only) return;

  // Outputs.
  if (cfg_.udp.enabled()) {
    m.udp = feed::UdpSocket::sender(cfg_.multicast_interface);
    m.udp_to = feed::make_address(cfg_.udp.host, cfg_.udp.port);
    // Connected: send() skips the per-datagram route lookup of sendto() (about 0.5 us on loopback).
    if (::connect(m.udp.fd(), reinterpret_cast<const sockaddr*>(&m.udp_to), sizeof m.udp_to) != 0)
      throw Error("[signals] udp " + cfg_.udp.host + ":" + std::to_string(cfg_.udp.port) + ": connect failed: " +
                  std::strerror(errno));
    m.udp_on = true;
    m.batching = cfg_.udp_batch == SignalBatching::Packet;
    if (cfg_.tx_timestamps) {
      m.tx = std::make_unique<TxStampCollector>(m.udp.fd());
      if (!m.tx->enabled()) m.tx.reset();  // the kernel refused: the _tx stages stay empty
    }
  }
  if (!cfg_.shm.empty()) m.shm = std::make_unique<SignalRingWriter>(cfg_.shm, cfg_.shm_capacity);
  if (!cfg_.log_path.empty()) {
    m.log = std::make_unique<DecisionLogWriter>(cfg_.log_path, cfg_.flush, cfg_.flush_interval_ns, cfg_.fsync,
                                                cfg_.log_buffer_bytes, cfg_.log_writer_thread);
    for (std::size_t i = 0; i < m.models.size(); ++i) {
      LoggedModel lm;
      lm.index = static_cast<std::uint16_t>(i);
      lm.version = m.models[i].cfg.version;
      lm.input_size = static_cast<std::uint32_t>(m.models[i].input_size);
      lm.trigger = static_cast<std::uint8_t>(m.models[i].cfg.trigger);
      lm.center = m.models[i].cfg.center;
      lm.threshold = m.models[i].cfg.threshold;
      lm.name = m.models[i].cfg.name;
      lm.path = m.models[i].cfg.path;
      m.log->declare(lm);
    }
  }
  if (cfg_.metrics.enabled()) {
    m.metrics = std::make_unique<MetricsServer>(cfg_.metrics.host, cfg_.metrics.port);
    m.metrics_text.reserve(kMetricsTextBytes);
    format_metrics(m.metrics_text, false, nullptr, 0);
    m.metrics->set_text(m.metrics_text);
  }
  if (m.batching && m.log && cfg_.full_vectors) {
    for (const RunningModel& rm : m.models) m.pending_stride = std::max(m.pending_stride, rm.input_size);
    m.pending_inputs.assign(m.pending_stride * kMaxSignalsPerDatagram, 0.0f);
  }
  if (m.batching) {
    for (RunningModel& rm : m.models) {
      // Not a row-wise plan (a merge, a sequence layer, a TFLite file): one run per tick.
      if (rm.cfg.trigger != ModelTrigger::Tick || !rm.plan->try_reserve_rows(static_cast<int>(kMaxSignalsPerDatagram)))
        continue;
      rm.rows = true;
      rm.rows_in.assign(kMaxSignalsPerDatagram * rm.input_size, 0.0f);
      rm.rows_out.assign(kMaxSignalsPerDatagram * rm.out.size(), 0.0f);
      rm.rows_events.resize(kMaxSignalsPerDatagram);
      rm.rows_ready_ns.assign(kMaxSignalsPerDatagram, 0);
    }
  }

  // Feed last: its sockets start buffering data as soon as they are bound.
  feed::FeedConfig fc;
  fc.line_a = {cfg_.line_a.host, cfg_.line_a.port, cfg_.interface};
  fc.has_line_b = cfg_.line_b.enabled();
  if (fc.has_line_b) fc.line_b = {cfg_.line_b.host, cfg_.line_b.port, cfg_.interface};
  if (cfg_.recovery.enabled()) {
    fc.recovery_host = cfg_.recovery.host;
    fc.recovery_port = cfg_.recovery.port;
  }
  fc.session = cfg_.session;
  fc.gap_timeout_ns = cfg_.gap_timeout_ns;
  fc.recovery_timeout_ns = cfg_.recovery_timeout_ns;
  fc.recovery_attempts = cfg_.recovery_attempts;
  fc.rcvbuf_bytes = cfg_.rcvbuf_bytes;
  fc.idle = cfg_.feed_idle;
  if (cfg_.threading == ThreadingMode::Rings) {
    m.ring = std::make_unique<SpscRing<feed::FeedEvent>>(cfg_.ring_capacity);
    m.feed = std::make_unique<feed::FeedHandler>(fc, *m.ring);
  } else {
    Impl* self = &m;
    m.feed = std::make_unique<feed::FeedHandler>(fc, [self](const feed::FeedEvent& e) { self->on_event(e); });
    if (m.batching) m.feed->on_datagram_end([self] { self->flush_batches(); });
  }
  Impl* self = &m;
  m.feed->on_loss([self](std::uint64_t, std::uint64_t count, feed::LossReason) {
    self->loss_ranges.fetch_add(1, std::memory_order_relaxed);
    self->lost_messages.fetch_add(count, std::memory_order_relaxed);
    self->degraded_flag.store(true, std::memory_order_relaxed);
  });

  const double interval_s = static_cast<double>(cfg_.status_interval_ns) / 1e9;
  const double span = cfg_.seconds > 0 ? cfg_.seconds + 60 : 86400;
  m.intervals.resize(static_cast<std::size_t>(span / interval_s) + 16);
}

Pipeline::~Pipeline() = default;

const StageStats& Pipeline::stage_stats() const noexcept { return impl_->stats; }
const std::vector<IntervalSample>& Pipeline::intervals() const noexcept { return impl_->intervals; }
std::size_t Pipeline::intervals_published() const noexcept { return impl_->published.load(std::memory_order_acquire); }
const std::vector<WarmupResult>& Pipeline::warmup_results() const noexcept { return impl_->warm; }
bool Pipeline::ready() const noexcept { return impl_->ready.load(); }
bool Pipeline::polling() const noexcept { return impl_->polling.load(std::memory_order_acquire); }
std::uint16_t Pipeline::feed_port(int line) const { return impl_->feed->port(line); }
feed::FeedStats Pipeline::feed_stats() const { return impl_->feed->stats(); }

std::vector<ModelRunStats> Pipeline::model_stats() const {
  std::vector<ModelRunStats> v;
  for (const auto& m : impl_->models) v.push_back(m.st);
  return v;
}

RunTotals Pipeline::totals() const {
  const Impl& m = *impl_;
  RunTotals t;
  t.events = m.events;
  t.signals = m.signals;
  t.udp_send_failures = m.udp_failures;
  if (m.tx) {
    t.tx_stamps_on = true;
    t.tx_stamps_matched = m.tx->matched();
    t.tx_stamps_missing = m.tx->missing() + m.tx->waiting();
    t.tx_stamps_stray = m.tx->stray();
  }
  t.feed_loss_reports = m.loss_ranges.load();
  t.feed_lost_messages = m.lost_messages.load();
  t.allocations_at_ready = m.alloc_ready;
  t.allocations_at_end = m.alloc_end;
  t.seconds = m.seconds;
  t.end_of_session = m.eos.load();
  t.degraded = m.degraded;
  t.degraded_reason = m.degraded_reason;
  t.wall_clock_exchange = m.wall_clock;
  return t;
}

std::vector<WarmupResult> Pipeline::warmup() {
  Impl& m = *impl_;
  m.warm.clear();
  std::mt19937 rng(12345);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (auto& rm : m.models) {
    // Representative inputs: standardized features are ~N(0, 1); raw features get N(0, 1) too
    // (the cost of a dense model does not depend on the values, only the code and cache state do).
    std::vector<float> in(rm.input_size * 64);
    for (auto& v : in) v = nd(rng);
    Plan& plan = rm.cfg.trigger == ModelTrigger::Stream ? *rm.stream[std::find_if(rm.stream.begin(), rm.stream.end(),
                                                                                     [](const auto& p) { return p != nullptr; }) -
                                                                      rm.stream.begin()]
                                                        : *rm.plan;
    WarmupResult w;
    w.model = rm.cfg.name;
    std::vector<std::int64_t> block(static_cast<std::size_t>(cfg_.warmup_block));
    std::int64_t prev_p50 = -1;
    int stable_blocks = 0;
    while (w.iterations < cfg_.warmup_max_iterations) {
      for (int i = 0; i < cfg_.warmup_block; ++i) {
        const float* x = &in[(static_cast<std::size_t>(w.iterations + i) % 64) * rm.input_size];
        const std::int64_t t0 = stats::realtime_ns();
        plan.run(x, rm.out.data());
        block[static_cast<std::size_t>(i)] = stats::realtime_ns() - t0;
      }
      w.iterations += cfg_.warmup_block;
      std::sort(block.begin(), block.end());
      const std::int64_t p50 = block[block.size() / 2];
      w.p50_ns = p50;
      w.p99_ns = block[block.size() * 99 / 100];
      if (prev_p50 > 0 && std::abs(static_cast<double>(p50 - prev_p50)) <= cfg_.warmup_tolerance * static_cast<double>(prev_p50) + 20.0)
        ++stable_blocks;
      else
        stable_blocks = 0;
      prev_p50 = p50;
      if (stable_blocks >= cfg_.warmup_stable_blocks && w.iterations >= cfg_.warmup_min_iterations) {
        w.stable = true;
        break;
      }
    }
    if (rm.cfg.trigger == ModelTrigger::Stream)
      for (auto& p : rm.stream)
        if (p) p->reset_state();
    m.warm.push_back(w);
  }
  // Warm the signal encoder and the ring pages (not the UDP destination: no fake signals go out).
  Signal s;
  s.score_count = 1;
  encode_signal(s, m.msg);
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

void Pipeline::Impl::check_eos() noexcept {
  const feed::FeedStats s = feed->stats();
  if (s.end_of_session_next != 0 && s.next_expected >= s.end_of_session_next && s.recovery_outstanding == 0)
    eos.store(true, std::memory_order_relaxed);
}

void Pipeline::Impl::on_event(const feed::FeedEvent& fe) noexcept {
  const std::int64_t t0 = stats::realtime_ns();
  const features::FeatureUpdate& u = features->on_event(fe.event, t0);
  const std::int64_t t1 = stats::realtime_ns();
  ++events;
  ++interval_events;
  last_event_ns.store(t1, std::memory_order_relaxed);
  const std::int64_t ex = fe.event.exchange_ts_ns();
  const bool wall = std::llabs(fe.ts.kernel_rx_ns - ex) < kWallClockSkew;
  wall_clock = wall_clock || wall;
  if (wall) stats.stage[kWire].record(fe.ts.kernel_rx_ns - ex);
  stats.stage[kReceive].record(fe.ts.sequenced_ns - fe.ts.kernel_rx_ns);
  stats.stage[kQueue].record(t0 - fe.ts.sequenced_ns);
  stats.stage[kFeatures].record(t1 - t0);
  if (u.status == features::UpdateStatus::UnknownInstrument) return;
  const int idx = features->instrument_index(u.instrument);
  if (idx < 0) return;
  std::int64_t t_prev = t1;
  for (int mi : routes[static_cast<std::size_t>(idx)]) {
    RunningModel& m = models[static_cast<std::size_t>(mi)];
    const float* input = nullptr;
    switch (m.cfg.trigger) {
      case ModelTrigger::Tick:
        if (u.status == features::UpdateStatus::Applied && u.has_values && u.all_warm && u.params_ready)
          input = u.model_input;
        break;
      case ModelTrigger::Window:
        if (u.rows_emitted > 0 && u.window_ready) input = features->window(static_cast<std::size_t>(idx)).view();
        break;
      case ModelTrigger::Stream:
        if (u.rows_emitted > 0 && u.window_ready) input = features->window(static_cast<std::size_t>(idx)).last();
        break;
    }
    if (!input) continue;
    if (m.rows) {
      const auto k = static_cast<std::size_t>(m.rows_pending++);
      std::memcpy(m.rows_in.data() + k * m.input_size, input, m.input_size * sizeof(float));
      m.rows_events[k] = fe;
      m.rows_ready_ns[k] = t_prev;
      if (m.rows_pending == static_cast<int>(kMaxSignalsPerDatagram)) run_rows(m);
      continue;
    }
    Plan& plan = m.cfg.trigger == ModelTrigger::Stream ? *m.stream[static_cast<std::size_t>(idx)] : *m.plan;
    plan.run(input, m.out.data());
    const std::int64_t t_model = stats::realtime_ns();
    stats.stage[kModel].record(t_model - t_prev);
    emit(m, input, fe, t_model);
    t_prev = stats::realtime_ns();
  }
}

void Pipeline::Impl::emit(RunningModel& m, const float* input, const feed::FeedEvent& fe, std::int64_t t_model) noexcept {
  PendingSignal& p = pending[pending_count++];
  Signal& s = p.s;
  s = Signal{};
  s.signal_seq = ++signal_seq;
  s.tick_seq = fe.seq;
  s.instrument = fe.event.instrument();
  s.model_version = m.cfg.version;
  std::memcpy(s.model_name, m.cfg.name.c_str(), std::min<std::size_t>(m.cfg.name.size(), kModelNameBytes - 1));
  s.exchange_ts_ns = fe.event.exchange_ts_ns();
  s.kernel_rx_ns = fe.ts.kernel_rx_ns;
  s.score_count = static_cast<std::uint8_t>(m.outputs.size());
  for (std::size_t i = 0; i < m.outputs.size(); ++i) s.scores[i] = m.out[static_cast<std::size_t>(m.outputs[i])];
  const double score = s.scores[0];
  s.decision = score > m.cfg.center + m.cfg.threshold ? 1 : (score < m.cfg.center - m.cfg.threshold ? -1 : 0);
  if (degraded_flag.exchange(false, std::memory_order_relaxed)) s.flags |= kSignalDegraded;
  p.model = &m;
  p.model_done_ns = t_model;
  p.input = input;
  if (log) {
    p.input_fingerprint = fingerprint(input, m.input_size);
    if (batching && cfg.full_vectors) {
      float* copy = pending_inputs.data() + (pending_count - 1) * pending_stride;
      std::memcpy(copy, input, m.input_size * sizeof(float));
      p.input = copy;
    }
  }
  ++m.st.runs;
  if (s.decision > 0) ++m.st.long_signals;
  else if (s.decision < 0) ++m.st.short_signals;
  else ++m.st.flat_signals;
  if (m.st.runs == 1) m.st.score_min = m.st.score_max = score;
  m.st.score_min = std::min(m.st.score_min, score);
  m.st.score_max = std::max(m.st.score_max, score);
  m.st.score_sum += score;
  if (!batching || pending_count == kMaxSignalsPerDatagram) flush_signals();
}

// The ticks waiting for a row-wise model, in one call; then their signals, in arrival order.
void Pipeline::Impl::run_rows(RunningModel& m) noexcept {
  const int n = m.rows_pending;
  if (n == 0) return;
  m.rows_pending = 0;
  m.plan->run_rows(m.rows_in.data(), n, m.rows_out.data());
  const std::int64_t t_model = stats::realtime_ns();
  ++m.st.row_calls;
  const std::size_t out = m.out.size();
  for (int k = 0; k < n; ++k) {
    const auto r = static_cast<std::size_t>(k);
    stats.stage[kModel].record(t_model - m.rows_ready_ns[r]);
    std::memcpy(m.out.data(), m.rows_out.data() + r * out, out * sizeof(float));
    emit(m, m.rows_in.data() + r * m.input_size, m.rows_events[r], t_model);
  }
}

// End of an inbound datagram (or of a drained ring): the waiting model rows, then the signals.
void Pipeline::Impl::flush_batches() noexcept {
  for (RunningModel& m : models)
    if (m.rows_pending > 0) run_rows(m);
  flush_signals();
}

// Stamps, encodes and sends the pending signals (one datagram), publishes them to the shm ring,
// then records their latency and logs them: "signal sent" is when all of that returned.
void Pipeline::Impl::flush_signals() noexcept {
  if (pending_count == 0) return;
  const std::int64_t sent = stats::realtime_ns();
  for (std::size_t i = 0; i < pending_count; ++i) {
    Signal& s = pending[i].s;
    s.sent_ns = sent;
    s.rx_to_signal_ns = static_cast<std::uint32_t>(std::clamp<std::int64_t>(sent - s.kernel_rx_ns, 0, 0xFFFFFFFFll));
    encode_signal(s, msg + i * kSignalBytes);
  }
  const std::size_t bytes = pending_count * kSignalBytes;
  // A refused send (no listener yet: ECONNREFUSED from the ICMP answer) is counted, never retried.
  bool udp_sent = false;
  if (udp_on) {
    udp_sent = ::send(udp.fd(), msg, bytes, MSG_DONTWAIT) == static_cast<ssize_t>(bytes);
    if (!udp_sent) {
      udp_failures += pending_count;
      if (tx) tx->send_failed();
    }
  }
  if (shm)
    for (std::size_t i = 0; i < pending_count; ++i) shm->publish(msg + i * kSignalBytes);
  const std::int64_t t_sent = stats::realtime_ns();
  if (tx && udp_sent) {
    // The kernel stamped the datagram as it left; the stamp is read back in an idle round.
    for (std::size_t i = 0; i < pending_count; ++i) {
      tx_exchange_ns[i] = pending[i].s.exchange_ts_ns;
      tx_rx_ns[i] = pending[i].s.kernel_rx_ns;
    }
    tx->sent(sent, t_sent, tx_exchange_ns, tx_rx_ns, pending_count);
  }
  for (std::size_t i = 0; i < pending_count; ++i) {
    const PendingSignal& p = pending[i];
    const Signal& s = p.s;
    stats.stage[kSignal].record(t_sent - p.model_done_ns);
    stats.stage[kRxToSignal].record(t_sent - s.kernel_rx_ns);
    stats.interval_rx.record(t_sent - s.kernel_rx_ns);
    if (std::llabs(s.kernel_rx_ns - s.exchange_ts_ns) < kWallClockSkew) {
      stats.stage[kEndToEnd].record(t_sent - s.exchange_ts_ns);
      stats.interval_e2e.record(t_sent - s.exchange_ts_ns);
    }
    ++signals;
    ++interval_signals;
    if (log) {
      DecisionRecord r;
      r.model = static_cast<std::uint16_t>(p.model - models.data());
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
      log->append(r, cfg.full_vectors ? p.input : nullptr, static_cast<std::uint32_t>(p.model->input_size), t_sent);
    }
  }
  pending_count = 0;
}

// Reads the kernel's transmit stamps back and records rx_to_tx and end_to_end_tx. A syscall, so
// normally in idle rounds only, once a few datagrams or a millisecond's worth wait (one recvmmsg
// reads several). While a backlog keeps the loop busy, it still reads once many wait: the error
// queue counts against the socket's receive buffer, and a full one drops stamps.
// `all`: at the end of a run, everything queued.
void Pipeline::Impl::read_tx_stamps(std::int64_t now, bool idle, bool all) noexcept {
  constexpr std::size_t kMinWaiting = 4;
  constexpr std::size_t kBusyWaiting = 64;
  constexpr std::int64_t kMaxWaitNs = 1'000'000;
  if (!tx || tx->waiting() == 0) return;
  if (!all && !idle && tx->waiting() < kBusyWaiting) return;
  if (!all && tx->waiting() < kMinWaiting && now - tx->oldest_sent_ns() < kMaxWaitNs) return;
  auto record = [this](std::int64_t tx_ns, std::int64_t exchange_ns, std::int64_t rx_ns) {
    stats.stage[kRxToTx].record(tx_ns - rx_ns);
    if (std::llabs(rx_ns - exchange_ns) < kWallClockSkew) {
      stats.stage[kEndToEndTx].record(tx_ns - exchange_ns);
      stats.interval_e2e_tx.record(tx_ns - exchange_ns);
    }
  };
  while (tx->drain(record) > 0 && all) {
  }
}

void Pipeline::Impl::housekeeping(std::int64_t now) noexcept {
  if (log) log->maybe_flush(now);
  if (now < next_interval) return;
  const std::size_t k = published.load(std::memory_order_relaxed);
  if (k < intervals.size()) {
    IntervalSample& s = intervals[k];
    s.t_s = static_cast<double>(now - run_start) / 1e9;
    s.ticks = interval_events;
    s.signals = interval_signals;
    s.rx_p50_ns = stats.interval_rx.value_at_percentile(50);
    s.rx_p99_ns = stats.interval_rx.value_at_percentile(99);
    s.rx_max_ns = stats.interval_rx.max();
    s.e2e_p50_ns = stats.interval_e2e.value_at_percentile(50);
    s.e2e_p99_ns = stats.interval_e2e.value_at_percentile(99);
    s.e2e_max_ns = stats.interval_e2e.max();
    s.e2e_tx_p99_ns = stats.interval_e2e_tx.value_at_percentile(99);
    s.allocations = allocation_count();
    s.feed_lost = lost_messages.load(std::memory_order_relaxed);
    published.store(k + 1, std::memory_order_release);
  }
  stats.interval_rx.reset();
  stats.interval_e2e.reset();
  stats.interval_e2e_tx.reset();
  interval_events = interval_signals = 0;
  next_interval += cfg.status_interval_ns;
  if (next_interval <= now) next_interval = now + cfg.status_interval_ns;
}

void Pipeline::run(const std::atomic<bool>& stop) {
  Impl& m = *impl_;
  m.run_start = stats::realtime_ns();
  m.next_interval = m.run_start + cfg_.status_interval_ns;
  m.last_event_ns.store(m.run_start);
  const std::int64_t eos_check_ns = 1'000'000;

  std::vector<std::thread> threads;
  threads.reserve(3);
  if (cfg_.threading == ThreadingMode::Inline) {
    threads.emplace_back([&m, this, eos_check_ns] {
      stats::pin_current_thread(cfg_.compute_cpu);
      feed::IdleStrategy idle(feed::parse_idle_kind(cfg_.feed_idle));
      std::int64_t next_eos = 0;
      m.polling.store(true, std::memory_order_release);
      while (!m.halt.load(std::memory_order_relaxed)) {
        const int work = m.feed->poll();
        const std::int64_t now = stats::realtime_ns();
        m.read_tx_stamps(now, work == 0, false);
        m.housekeeping(now);
        if (now >= next_eos) {
          m.check_eos();
          next_eos = now + eos_check_ns;
        }
        idle.idle(work);
      }
      m.flush_batches();
      m.read_tx_stamps(0, true, true);
    });
  } else {
    threads.emplace_back([&m, this, eos_check_ns] {
      stats::pin_current_thread(cfg_.feed_cpu);
      feed::IdleStrategy idle(feed::parse_idle_kind(cfg_.feed_idle));
      std::int64_t next_eos = 0;
      m.polling.store(true, std::memory_order_release);  // the feed side reads the sockets
      while (!m.halt.load(std::memory_order_relaxed)) {
        const int work = m.feed->poll();
        const std::int64_t now = stats::realtime_ns();
        if (now >= next_eos) {
          m.check_eos();
          next_eos = now + eos_check_ns;
        }
        idle.idle(work);
      }
    });
    threads.emplace_back([&m, this] {
      stats::pin_current_thread(cfg_.compute_cpu);
      feed::IdleStrategy idle(feed::parse_idle_kind(cfg_.compute_idle));
      feed::FeedEvent e;
      while (!m.halt.load(std::memory_order_relaxed)) {
        int work = 0;
        while (work < 256 && m.ring->try_pop(e)) {
          m.on_event(e);
          ++work;
        }
        m.flush_batches();  // rings: a batch ends when the ring is drained (datagram bounds are not seen here)
        const std::int64_t now = stats::realtime_ns();
        m.read_tx_stamps(now, work == 0, false);
        m.housekeeping(now);
        idle.idle(work);
      }
      while (m.ring->try_pop(e)) m.on_event(e);  // drain what the feed already delivered
      m.flush_batches();
      m.read_tx_stamps(0, true, true);
    });
  }

  if (m.spec.standardize.mode == features::StandardizeMode::Rolling) {
    // Rolling standardization refits on its own thread (docs/features.md); never the hot path.
    threads.emplace_back([&m] {
      feed::IdleStrategy idle(feed::IdleKind::BackOff);
      while (!m.halt.load(std::memory_order_relaxed)) idle.idle(m.features->refit_step());
    });
  }
  // Steady state starts here: every thread exists (creating one allocates its state).
  m.alloc_ready = allocation_count();
  // Supervisor: status lines, metrics, stop conditions. Never on the hot path.
  std::size_t printed = 0;
  bool warned_silent = false;
  const auto silence_ns = static_cast<std::int64_t>(cfg_.feed_silence_s * 1e9);
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::int64_t now = stats::realtime_ns();
    const std::size_t k = m.published.load(std::memory_order_acquire);
    for (; printed < k; ++printed) {
      const IntervalSample& s = m.intervals[printed];
      const double secs = static_cast<double>(cfg_.status_interval_ns) / 1e9;
      if (!cfg_.quiet) {
        std::printf("[%6.1fs] %8.0f ticks/s %8.0f signals/s  rx->signal p50 %6.1f us p99 %7.1f us max %8.1f us",
                    s.t_s, static_cast<double>(s.ticks) / secs, static_cast<double>(s.signals) / secs,
                    static_cast<double>(s.rx_p50_ns) / 1e3, static_cast<double>(s.rx_p99_ns) / 1e3,
                    static_cast<double>(s.rx_max_ns) / 1e3);
        if (s.e2e_p99_ns > 0) std::printf("  e2e p99 %7.1f us", static_cast<double>(s.e2e_p99_ns) / 1e3);
        if (s.e2e_tx_p99_ns > 0) std::printf(" (to kernel TX %7.1f us)", static_cast<double>(s.e2e_tx_p99_ns) / 1e3);
        std::printf("  lost %llu  allocs %llu\n", static_cast<unsigned long long>(s.feed_lost),
                    static_cast<unsigned long long>(s.allocations - m.alloc_ready));
        std::fflush(stdout);
      }
      if (m.metrics) {
        format_metrics(m.metrics_text, m.ready.load(), &s, s.allocations - m.alloc_ready);
        m.metrics->set_text(m.metrics_text);
      }
    }
    if (stop.load()) break;
    if (cfg_.seconds > 0 && static_cast<double>(now - m.run_start) >= cfg_.seconds * 1e9) break;
    if (m.eos.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let the compute side drain
      break;
    }
    const std::int64_t quiet = now - m.last_event_ns.load(std::memory_order_relaxed);
    if (quiet > silence_ns && !warned_silent) {
      warned_silent = true;
      m.degraded = true;
      m.degraded_reason = "feed silent for " + std::to_string(quiet / 1'000'000) + " ms";
      std::fprintf(stderr, "tickinfer run: degraded: no market data for %.1f s\n", static_cast<double>(quiet) / 1e9);
    }
    if (quiet > 2 * silence_ns) {
      m.degraded_reason = "feed silent for " + std::to_string(quiet / 1'000'000) + " ms: stopped";
      break;
    }
  }
  m.halt.store(true);
  for (auto& t : threads) t.join();
  // Close the per-line loss accounting at the session's end (End of Session's next sequence), so
  // a line's misses at the tail count as well as the ones its later packets revealed.
  if (m.eos.load()) m.feed->finish(0);
  m.seconds = static_cast<double>(stats::realtime_ns() - m.run_start) / 1e9;
  m.alloc_end = allocation_count();
  if (m.lost_messages.load() > 0 && !m.degraded) {
    m.degraded = true;
    m.degraded_reason = std::to_string(m.lost_messages.load()) + " messages lost by the feed";
  }
  if (m.log) m.log->flush();
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
