#include "pipeline/model_router.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "features/signature.hpp"
#include "pipeline/signal_publisher.hpp"
#include "stats/clock.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::pipeline {

// The run's one feature plan: [features] spec, plus what each model's features.toml declares.
// A model's file is checked first, so a missing model is reported as such, not as a missing
// signature.
features::FeaturePlan plan_run_features(const PipelineConfig& cfg) {
  features::FeatureSpec pipeline_spec = features::load_feature_spec(cfg.feature_spec);
  std::vector<std::uint32_t> all = pipeline_spec.instruments;
  if (cfg.shard.enabled()) {
    // This process's part of the universe: the other shards' instruments are not computed here.
    std::vector<std::uint32_t> owned;
    for (auto id : pipeline_spec.instruments)
      if (cfg.shard.owns(id)) owned.push_back(id);
    for (auto id : cfg.shard.instruments)
      if (std::find(all.begin(), all.end(), id) == all.end())
        throw Error("[shard] instruments: " + std::to_string(id) + " is not in the feature spec");
    if (owned.empty())
      throw Error("[shard] " + (cfg.shard.instruments.empty()
                                    ? std::to_string(cfg.shard.index) + " of " + std::to_string(cfg.shard.count)
                                    : std::string("instruments")) +
                  " owns none of the feature spec's " + std::to_string(all.size()) + " instruments");
    pipeline_spec.instruments = owned;
  }
  std::vector<features::FeatureSpec> signatures(cfg.models.size());
  std::vector<features::ModelFeatures> models(cfg.models.size());
  for (std::size_t i = 0; i < cfg.models.size(); ++i) {
    const ModelConfig& mc = cfg.models[i];
    models[i].who = "model '" + mc.name + "' (" + mc.path + ")";
    models[i].sequence = mc.trigger != ModelTrigger::Tick;
    if (access(mc.path.c_str(), R_OK) != 0) throw Error(models[i].who + ": file not found or not readable");
    if (!mc.check_signature) continue;
    signatures[i] = features::load_model_signature(mc.path);
    models[i].signature = &signatures[i];
  }
  features::FeaturePlan plan = features::plan_features(pipeline_spec, models);
  plan.universe = std::move(all);
  return plan;
}

namespace {

// A model loaded, checked against its view and its mode, and compiled.
Plan compile_checked(const ModelConfig& mc, const std::string& who, std::size_t width, const features::FeatureSpec& spec) {
  LoadOptions load;
  load.tflite_engine = mc.tflite_engine;
  const Model model = Model::load(mc.path, load);
  const auto ins = model.inputs();
  if (ins.size() != 1 || ins[0].shape.empty()) throw Error(who + ": expected exactly one input with a feature axis");
  // The feature axis is the last one but for trailing unit axes: a book model's [T, 40, 1] is
  // the window's [T, 40] (DeepLOB's Keras and PyTorch ports take the book as a one-channel image).
  std::size_t axis = ins[0].shape.size() - 1;
  while (axis > 0 && ins[0].shape[axis] == 1) --axis;
  if (static_cast<std::size_t>(ins[0].shape[axis]) != width)
    throw Error(who + ": input width " + std::to_string(ins[0].shape[axis]) + " does not match the " +
                std::to_string(width) + " features of its feature signature");
  CompileOptions opt;
  if (mc.trigger == ModelTrigger::Stream) opt.mode = RecurrentMode::Stream;
  if (mc.trigger == ModelTrigger::Window) opt.window_length = mc.window > 0 ? mc.window : static_cast<int>(spec.window);
  opt.incremental = mc.incremental;
  opt.device = mc.device;
  Plan plan = [&] {
    try {
      return compile(model, opt);
    } catch (const Error& e) {
      throw Error(who + ": " + e.what());  // which model could not be compiled (a GPU not there...)
    }
  }();
  if (plan.num_inputs() != 1 || plan.num_outputs() != 1)
    throw Error(who + ": the pipeline runs models with one input and one output");
  const std::size_t in = plan.input_size(0);
  if (mc.trigger == ModelTrigger::Tick && in != width)
    throw Error(who + ": mode \"tick\" needs an input of " + std::to_string(width) + " features, the model takes " +
                std::to_string(in) + " (a sequence model needs mode \"window\" or \"stream\")");
  if (mc.trigger == ModelTrigger::Window && in != width * spec.window)
    throw Error(who + ": mode \"window\" needs [" + std::to_string(spec.window) + ", " + std::to_string(width) +
                "] inputs (the feature spec's window), the model takes " + std::to_string(in) + " floats");
  if (mc.trigger == ModelTrigger::Stream && in != width)
    throw Error(who + ": mode \"stream\" needs " + std::to_string(width) + " features per step");
  for (int o : mc.outputs)
    if (o < 0 || static_cast<std::size_t>(o) >= plan.output_size(0))
      throw Error(who + ": outputs lists element " + std::to_string(o) + ", the model has " +
                  std::to_string(plan.output_size(0)));
  return plan;
}

}  // namespace

ModelRouter::ModelRouter(const PipelineConfig& cfg, const features::FeaturePlan& fplan,
                         const features::FeaturePipeline& features, const ModelRouter* prototype)
    : groups_(fplan.groups), plan_width_(fplan.spec.width()), window_rows_(static_cast<std::size_t>(fplan.spec.window)) {
  const features::FeatureSpec& spec = fplan.spec;
  routes_.resize(spec.instruments.size());
  for (std::size_t mi = 0; mi < cfg.models.size(); ++mi) {
    const ModelConfig& mc = cfg.models[mi];
    const std::string who = "model '" + mc.name + "' (" + mc.path + ")";
    const features::FeatureView& view = fplan.views[mi];
    const std::size_t width = view.width();
    RunningModel rm;
    rm.cfg = mc;
    rm.index = static_cast<std::uint16_t>(mi);
    rm.view = &view;
    if (!view.identity) {  // (a prefix view still needs a window buffer)
      ViewBuffers& g = groups_[static_cast<std::size_t>(view.group)];
      g.current.assign(width, 0.0f);
      g.window.assign(width * window_rows_, 0.0f);
      g.last.assign(width, 0.0f);
    }
    // A compute agent's router clones the prototype's plans: the weights are shared, each clone
    // has its own activations and recurrent state.
    Plan plan = prototype ? prototype->models_[mi].plan->clone() : compile_checked(mc, who, width, spec);
    rm.input_size = plan.input_size(0);
    rm.out.assign(plan.output_size(0), 0.0f);
    rm.outputs = mc.outputs;
    rm.st.name = mc.name;
    rm.st.version = mc.version;
    // Routing: listed instruments (each must be in the spec), or all.
    std::vector<std::size_t> idx;
    if (mc.instruments.empty()) {
      for (std::size_t i = 0; i < spec.instruments.size(); ++i) idx.push_back(i);
    } else {
      for (auto id : mc.instruments) {
        const int i = features.instrument_index(id);
        if (i >= 0) {
          idx.push_back(static_cast<std::size_t>(i));
          continue;
        }
        // In the spec but not here: another process's shard (or another agent) computes it.
        if (std::find(fplan.universe.begin(), fplan.universe.end(), id) == fplan.universe.end())
          throw Error(who + ": routed instrument " + std::to_string(id) + " is not in the feature spec");
      }
    }
    if (mc.trigger == ModelTrigger::Stream || mc.incremental) {  // per-instrument state, or windows
      rm.stream.resize(spec.instruments.size());
      for (auto i : idx) rm.stream[i] = std::make_unique<Plan>(plan.clone());
    }
    rm.routed = idx.size();
    rm.plan = std::make_unique<Plan>(std::move(plan));
    for (auto i : idx) routes_[i].push_back(static_cast<int>(mi));
    models_.push_back(std::move(rm));
  }
}

void ModelRouter::enable_row_batches() {
  for (RunningModel& rm : models_) {
    if (rm.cfg.trigger != ModelTrigger::Tick || !rm.plan->try_reserve_rows(static_cast<int>(kMaxSignalsPerDatagram)))
      continue;
    rm.rows = true;
    rm.rows_in.assign(kMaxSignalsPerDatagram * rm.input_size, 0.0f);
    rm.rows_out.assign(kMaxSignalsPerDatagram * rm.out.size(), 0.0f);
    rm.rows_events.resize(kMaxSignalsPerDatagram);
    rm.rows_ready_ns.assign(kMaxSignalsPerDatagram, 0);
  }
}

// Each view group's gather, timed on representative values (mean of many): what a reuse saves.
void ModelRouter::time_view_gathers() {
  std::vector<double> raw(plan_width_, 1.25);
  std::vector<float> z(plan_width_ * std::max<std::size_t>(window_rows_, 1), 0.5f);
  features::FeatureUpdate u;
  u.values = raw.data();
  u.model_input = z.data();
  constexpr int kTimes = 4000;
  std::vector<bool> timed(groups_.size(), false);
  for (const RunningModel& m : models_) {
    const auto gi = static_cast<std::size_t>(m.view->group);
    if (m.view->prefix || timed[gi]) continue;
    timed[gi] = true;
    ViewBuffers& g = groups_[gi];
    std::int64_t t0 = stats::realtime_ns();
    for (int i = 0; i < kTimes; ++i) m.view->gather_current(u, g.current.data());
    g.current_ns = static_cast<double>(stats::realtime_ns() - t0) / kTimes;
    if (m.view->scaling == features::ViewScaling::Pipeline && window_rows_ > 0) {
      t0 = stats::realtime_ns();
      for (int i = 0; i < kTimes; ++i) m.view->gather_rows(z.data(), window_rows_, plan_width_, g.window.data());
      g.window_ns = static_cast<double>(stats::realtime_ns() - t0) / kTimes;
    }
  }
}

std::vector<WarmupResult> ModelRouter::warm_up(const PipelineConfig& cfg) {
  time_view_gathers();
  std::vector<WarmupResult> results;
  std::mt19937 rng(12345);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (auto& rm : models_) {
    if (rm.routed == 0) continue;  // an agent none of whose instruments this model serves
    // Representative inputs: standardized features are ~N(0, 1); raw features get N(0, 1) too
    // (the cost of a dense model does not depend on the values, only the code and cache state do).
    std::vector<float> in(rm.input_size * 64);
    for (auto& v : in) v = nd(rng);
    Plan& plan = !rm.stream.empty()
                     ? **std::find_if(rm.stream.begin(), rm.stream.end(), [](const auto& p) { return p != nullptr; })
                     : *rm.plan;
    WarmupResult w;
    w.model = rm.cfg.name;
    std::vector<std::int64_t> block(static_cast<std::size_t>(cfg.warmup_block));
    std::int64_t prev_p50 = -1;
    int stable_blocks = 0;
    while (w.iterations < cfg.warmup_max_iterations) {
      for (int i = 0; i < cfg.warmup_block; ++i) {
        const float* x = &in[(static_cast<std::size_t>(w.iterations + i) % 64) * rm.input_size];
        const std::int64_t t0 = stats::realtime_ns();
        plan.run(x, rm.out.data());
        block[static_cast<std::size_t>(i)] = stats::realtime_ns() - t0;
      }
      w.iterations += cfg.warmup_block;
      std::sort(block.begin(), block.end());
      const std::int64_t p50 = block[block.size() / 2];
      w.p50_ns = p50;
      w.p99_ns = block[block.size() * 99 / 100];
      if (prev_p50 > 0 && std::abs(static_cast<double>(p50 - prev_p50)) <= cfg.warmup_tolerance * static_cast<double>(prev_p50) + 20.0)
        ++stable_blocks;
      else
        stable_blocks = 0;
      prev_p50 = p50;
      if (stable_blocks >= cfg.warmup_stable_blocks && w.iterations >= cfg.warmup_min_iterations) {
        w.stable = true;
        break;
      }
    }
    for (auto& p : rm.stream)  // stream state, and incremental plans' previous windows
      if (p) p->reset_state();
    results.push_back(w);
  }
  return results;
}

void ModelRouter::route(const feed::FeedEvent& fe, const features::FeatureUpdate& u, int idx,
                        std::int64_t features_done_ns, features::FeaturePipeline& features, SignalPublisher& out,
                        StageStats& stats) noexcept {
  std::int64_t t_prev = features_done_ns;
  ++route_calls_;
  for (int mi : routes_[static_cast<std::size_t>(idx)]) {
    RunningModel& m = models_[static_cast<std::size_t>(mi)];
    const float* input = nullptr;
    switch (m.cfg.trigger) {
      case ModelTrigger::Tick:
        if (u.status == features::UpdateStatus::Applied && u.has_values && u.all_warm && u.params_ready)
          input = current_input(m, u);
        break;
      case ModelTrigger::Window:
        if (u.rows_emitted > 0 && u.window_ready) input = row_input(m, features.window(static_cast<std::size_t>(idx)), true);
        break;
      case ModelTrigger::Stream:
        if (u.rows_emitted > 0 && u.window_ready) input = row_input(m, features.window(static_cast<std::size_t>(idx)), false);
        break;
    }
    if (!input) continue;
    if (m.rows) {
      const auto k = static_cast<std::size_t>(m.rows_pending++);
      std::memcpy(m.rows_in.data() + k * m.input_size, input, m.input_size * sizeof(float));
      m.rows_events[k] = fe;
      m.rows_ready_ns[k] = t_prev;
      if (m.rows_pending == static_cast<int>(kMaxSignalsPerDatagram)) run_rows(m, out, stats);
      continue;
    }
    Plan& plan = m.stream.empty() ? *m.plan : *m.stream[static_cast<std::size_t>(idx)];
    plan.run(input, m.out.data());
    const std::int64_t t_model = stats::realtime_ns();
    stats.stage[kModel].record(t_model - t_prev);
    emit(m, input, fe, t_model, out);
    t_prev = stats::realtime_ns();
  }
}

// The model's current vector: the plan's own in place (a prefix view), or its group's buffer,
// gathered once per tick (route call) for every model of the group.
const float* ModelRouter::current_input(const RunningModel& m, const features::FeatureUpdate& u) noexcept {
  if (m.view->prefix) return u.model_input;
  ViewBuffers& g = groups_[static_cast<std::size_t>(m.view->group)];
  if (g.current_at != route_calls_) {
    m.view->gather_current(u, g.current.data());
    g.current_at = route_calls_;
    ++counts_.builds;
  } else {
    ++counts_.reuses;
    counts_.saved_ns += g.current_ns;
  }
  return g.current.data();
}

// The window (whole_window) or its newest row, the same way.
const float* ModelRouter::row_input(const RunningModel& m, const features::WindowRing& ring, bool whole_window) noexcept {
  if (whole_window ? m.view->identity : m.view->prefix) return whole_window ? ring.view() : ring.last();
  ViewBuffers& g = groups_[static_cast<std::size_t>(m.view->group)];
  std::uint64_t& at = whole_window ? g.window_at : g.last_at;
  float* buf = whole_window ? g.window.data() : g.last.data();
  if (at != route_calls_) {
    if (whole_window) m.view->gather_rows(ring.view(), window_rows_, plan_width_, buf);
    else m.view->gather_rows(ring.last(), 1, plan_width_, buf);
    at = route_calls_;
    ++counts_.builds;
  } else {
    ++counts_.reuses;
    counts_.saved_ns += whole_window ? g.window_ns : g.current_ns;
  }
  return buf;
}

void ModelRouter::flush_rows(SignalPublisher& out, StageStats& stats) noexcept {
  for (RunningModel& m : models_)
    if (m.rows_pending > 0) run_rows(m, out, stats);
}

// The ticks waiting for a row-wise model, in one call; then their signals, in arrival order.
void ModelRouter::run_rows(RunningModel& m, SignalPublisher& out, StageStats& stats) noexcept {
  const int n = m.rows_pending;
  if (n == 0) return;
  m.rows_pending = 0;
  m.plan->run_rows(m.rows_in.data(), n, m.rows_out.data());
  const std::int64_t t_model = stats::realtime_ns();
  ++m.st.row_calls;
  const std::size_t width = m.out.size();
  for (int k = 0; k < n; ++k) {
    const auto r = static_cast<std::size_t>(k);
    stats.stage[kModel].record(t_model - m.rows_ready_ns[r]);
    std::memcpy(m.out.data(), m.rows_out.data() + r * width, width * sizeof(float));
    emit(m, m.rows_in.data() + r * m.input_size, m.rows_events[r], t_model, out);
  }
}

// The model's part of the signal (name, version, scores, decision) and its statistics; the
// publisher adds the tick's part and sends it when its batch is due.
void ModelRouter::emit(RunningModel& m, const float* input, const feed::FeedEvent& fe, std::int64_t t_model,
                       SignalPublisher& out) noexcept {
  Signal& s = out.claim();
  s.model_version = m.cfg.version;
  std::memcpy(s.model_name, m.cfg.name.c_str(), std::min<std::size_t>(m.cfg.name.size(), kModelNameBytes - 1));
  s.score_count = static_cast<std::uint8_t>(m.outputs.size());
  for (std::size_t i = 0; i < m.outputs.size(); ++i) s.scores[i] = m.out[static_cast<std::size_t>(m.outputs[i])];
  const double score = s.scores[0];
  s.decision = score > m.cfg.center + m.cfg.threshold ? 1 : (score < m.cfg.center - m.cfg.threshold ? -1 : 0);
  ++m.st.runs;
  if (s.decision > 0) ++m.st.long_signals;
  else if (s.decision < 0) ++m.st.short_signals;
  else ++m.st.flat_signals;
  if (m.st.runs == 1) m.st.score_min = m.st.score_max = score;
  m.st.score_min = std::min(m.st.score_min, score);
  m.st.score_max = std::max(m.st.score_max, score);
  m.st.score_sum += score;
  out.commit(fe, m.index, input, static_cast<std::uint32_t>(m.input_size), t_model);
}

std::vector<LoggedModel> ModelRouter::logged_models() const {
  std::vector<LoggedModel> v;
  for (const RunningModel& m : models_) {
    LoggedModel lm;
    lm.index = m.index;
    lm.version = m.cfg.version;
    lm.input_size = static_cast<std::uint32_t>(m.input_size);
    lm.trigger = static_cast<std::uint8_t>(m.cfg.trigger);
    lm.center = m.cfg.center;
    lm.threshold = m.cfg.threshold;
    lm.name = m.cfg.name;
    lm.path = m.cfg.path;
    v.push_back(lm);
  }
  return v;
}

std::size_t ModelRouter::widest_input() const noexcept {
  std::size_t w = 0;
  for (const RunningModel& m : models_) w = std::max(w, m.input_size);
  return w;
}

std::vector<ModelRunStats> ModelRouter::run_stats() const {
  std::vector<ModelRunStats> v;
  for (const RunningModel& m : models_) v.push_back(m.st);
  return v;
}

}  // namespace tickinfer::pipeline
