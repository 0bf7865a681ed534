#pragma once
// One feature plan for every model of a run: the union of the features the models declare
// (each model's `features.toml` signature), computed once per tick by one FeaturePipeline, and a
// view per model that reads its own vector order out of it.
//
// plan_features(pipeline, models): the plan's spec is the pipeline spec ([features] spec: the
// instruments, bars, gaps, policies, window and its features) with every feature a model declares
// and the spec lacks appended (kind and parameters decide identity, as in the signature check;
// names do not). Each model gets a FeatureView: its columns in the plan's vector, and how its
// input is scaled:
//   Pipeline: the model standardizes every one of its features exactly as the plan does (same
//             fixed mean and scale, or the same rolling parameters, or neither): its input is a
//             gather of the plan's model-input floats, so window and stream models work too;
//   Own:      a tick-mode model whose own fixed parameters (or none) differ: its input is computed
//             from the raw doubles with its own mean and scale (exact, never via a float round
//             trip). A window or stream model that would need this is refused: its rows come from
//             the plan's window ring, already standardized the plan's way.
//   prefix:   Pipeline scaling over the plan's first columns in order: the model reads the
//             plan's current vector (and a ring row) in place, no copy;
//   identity: a prefix that is all the plan's columns: its window too (the single-model case
//             costs nothing).
// Views that are equal (same columns, scaling, parameters) share a group: one buffer, built once
// per tick however many models read it (view builds and reuses are counted by the router).
//
// Errors (tickinfer::Error naming the model): a plan over kMaxFeatures columns, a window or
// stream model whose standardization differs from the plan's, a rolling standardization other
// than the plan's.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "features/feature_pipeline.hpp"
#include "features/feature_spec.hpp"

namespace tickinfer::features {

enum class ViewScaling : std::uint8_t { Pipeline, Own };

struct FeatureView {
  std::vector<std::uint16_t> columns;  // model column j -> plan column
  ViewScaling scaling = ViewScaling::Pipeline;
  bool standardize = false;            // Own: apply mean/scale (else the raw value)
  std::vector<double> mean, scale;     // Own: per model column
  bool prefix = false;
  bool identity = false;
  int group = 0;                       // equal views share a group (0-based, dense)

  std::size_t width() const noexcept { return columns.size(); }
  // Hot path (noexcept, no allocation): the model's current vector from an update of the plan's
  // pipeline (Pipeline: gathered model_input; Own: from the raw values).
  void gather_current(const FeatureUpdate& u, float* out) const noexcept;
  // Hot path: `rows` rows of the plan's ring (plan_width floats each) into rows x width().
  // Pipeline scaling only.
  void gather_rows(const float* rows, std::size_t n_rows, std::size_t plan_width, float* out) const noexcept;
};

struct ModelFeatures {
  std::string who;                  // for messages: "model 'x' (path)"
  const FeatureSpec* signature = nullptr;  // nullptr: the model takes the pipeline spec as it is
  bool sequence = false;            // window or stream mode: rows come from the ring
};

struct FeaturePlan {
  FeatureSpec spec;                 // what the one FeaturePipeline computes
  std::vector<FeatureView> views;   // one per model, in order
  std::size_t groups = 0;           // distinct views
  std::size_t pipeline_columns = 0; // columns of the pipeline spec before models added theirs
  // Columns the models' own pipelines would compute without sharing: the sum of their widths.
  std::size_t requested_columns = 0;
  // Every instrument of the [features] spec; spec.instruments is this process's shard of it
  // (all of it unless [shard] says otherwise). Set by the pipeline, not by plan_features.
  std::vector<std::uint32_t> universe;
};

FeaturePlan plan_features(const FeatureSpec& pipeline, const std::vector<ModelFeatures>& models);

}  // namespace tickinfer::features
