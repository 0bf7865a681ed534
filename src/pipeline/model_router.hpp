#pragma once
// The models of a run and the routing table instrument -> models.
//
// Load (construction): every [[model]] is loaded, checked (file, feature signature, one input
// and one output, input width for its mode, `outputs` elements, routed instruments) and compiled;
// any problem throws tickinfer::Error naming the model and the problem, before a socket exists.
// Warm up: warm_up() runs each model on representative inputs until its latency is stable.
// Route (hot path, noexcept, no allocation): route() runs the models routed to the tick's
// instrument whose trigger fired (tick: the current vector; window: the [window, width] view;
// stream: the newest row through the instrument's own stateful plan) and hands each output to the
// SignalPublisher (claim/commit). Each model reads its own features through its view of the one
// feature plan (features/feature_plan.hpp): in place when the view is the plan itself, else from
// its view group's buffer, gathered at most once per tick for all the models that share it. Tick-mode models on a row-wise plan may queue their ticks
// instead (enable_row_batches) and run them in one Plan::run_rows call at the batch's end
// (flush_rows).
//
// Threading: one compute thread calls route()/flush_rows(); the rest is set-up or after the run.
#include <cstdint>
#include <memory>
#include <vector>

#include "features/feature_pipeline.hpp"
#include "features/feature_plan.hpp"
#include "pipeline/config.hpp"
#include "pipeline/decision_log.hpp"
#include "pipeline/run_stats.hpp"
#include "pipeline/stage_stats.hpp"
#include "tickinfer/feed.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer::pipeline {

class SignalPublisher;

struct RunningModel {
  ModelConfig cfg;
  std::uint16_t index = 0;                     // in the configuration and the decision log
  std::unique_ptr<Plan> plan;                  // Tick / Window
  // Stream, and incremental Window: one plan per routed instrument index (its state, or its last window)
  std::vector<std::unique_ptr<Plan>> stream;
  std::size_t input_size = 0;                  // floats per run
  std::size_t routed = 0;                      // instruments of this router routed to it
  const features::FeatureView* view = nullptr;  // its columns of the feature plan
  std::vector<float> out;                      // the plan's output
  std::vector<int> outputs;                    // out elements that become the signal's scores
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

// The run's one feature plan: the [features] spec plus what each model's features.toml declares
// (features/feature_plan.hpp). Throws tickinfer::Error for a missing model file, a missing or bad
// signature, or a view the plan cannot serve.
features::FeaturePlan plan_run_features(const PipelineConfig& cfg);

// How the views of the feature plan were read: a build gathers a group's buffer for a tick, a
// reuse is a model served from a buffer another model of the group built for the same tick.
// saved_ns: what the reuses would have cost as builds, at each view's gather time measured
// during warm-up.
struct ViewCounts {
  std::uint64_t builds = 0, reuses = 0;
  double saved_ns = 0;
};

class ModelRouter {
 public:
  // plan: the run's feature plan (features.spec() is plan.spec); it must outlive the router.
  // prototype: a compute agent's router (the plan restricted to its instruments) clones the
  // prototype's compiled plans, sharing their weights, instead of loading the models again.
  ModelRouter(const PipelineConfig& cfg, const features::FeaturePlan& plan, const features::FeaturePipeline& features,
              const ModelRouter* prototype = nullptr);

  // Set-up: queue the ticks of row-wise tick-mode plans (udp_batch = packet). A plan that is not
  // row-wise (a merge, a sequence layer, a TFLite file) keeps one run per tick.
  void enable_row_batches();
  // Set-up: every model on representative inputs until its block-p50 latency is stable.
  // A model routed to none of this router's instruments is skipped.
  std::vector<WarmupResult> warm_up(const PipelineConfig& cfg);

  // Hot path. u: the feature update of fe; idx: its instrument's index in the spec;
  // features_done_ns: when the features were updated (the first model stage starts there).
  void route(const feed::FeedEvent& fe, const features::FeatureUpdate& u, int idx, std::int64_t features_done_ns,
             features::FeaturePipeline& features, SignalPublisher& out, StageStats& stats) noexcept;
  // End of a batch: the queued rows of every model, in one run_rows call each.
  void flush_rows(SignalPublisher& out, StageStats& stats) noexcept;

  std::vector<LoggedModel> logged_models() const;  // the decision log's model declarations
  std::size_t widest_input() const noexcept;
  std::vector<ModelRunStats> run_stats() const;
  ViewCounts view_counts() const noexcept { return counts_; }

 private:
  // A view group's buffers, each stamped with the route() call that last built it.
  struct ViewBuffers {
    std::vector<float> current, window, last;
    std::uint64_t current_at = 0, window_at = 0, last_at = 0;
    double current_ns = 0, window_ns = 0;  // one gather, measured in warm_up
  };
  const float* current_input(const RunningModel& m, const features::FeatureUpdate& u) noexcept;
  const float* row_input(const RunningModel& m, const features::WindowRing& ring, bool whole_window) noexcept;
  void time_view_gathers();

  void run_rows(RunningModel& m, SignalPublisher& out, StageStats& stats) noexcept;
  void emit(RunningModel& m, const float* input, const feed::FeedEvent& fe, std::int64_t t_model,
            SignalPublisher& out) noexcept;

  std::vector<RunningModel> models_;
  std::vector<std::vector<int>> routes_;  // instrument index -> model indices
  std::vector<ViewBuffers> groups_;       // per view group
  std::size_t plan_width_ = 0, window_rows_ = 0;
  std::uint64_t route_calls_ = 0;
  ViewCounts counts_;
};

}  // namespace tickinfer::pipeline
