#include "features/feature_plan.hpp"

#include <sstream>

#include "tickinfer/error.hpp"

namespace tickinfer::features {
namespace {

// One line of FeatureSpec::canonical_features(): kind and every parameter.
std::string canonical(const FeatureDef& f) {
  FeatureSpec one;
  one.features.push_back(f);
  return one.canonical_features();
}

// How a spec scales its column i, comparable across specs.
struct ColumnScaling {
  StandardizeMode mode = StandardizeMode::None;
  double mean = 0, scale = 1;
  bool operator==(const ColumnScaling& o) const {
    return mode == o.mode && (mode != StandardizeMode::Fixed || (mean == o.mean && scale == o.scale));
  }
};

ColumnScaling column_scaling(const FeatureSpec& s, std::size_t i) {
  ColumnScaling c;
  c.mode = s.standardize.mode;
  if (c.mode == StandardizeMode::Fixed) {
    c.mean = s.standardize.mean[i];
    c.scale = s.standardize.scale[i];
  }
  return c;
}

bool same_rolling(const StandardizeSpec& a, const StandardizeSpec& b) {
  return a.window == b.window && a.refit_every == b.refit_every && a.drift_threshold == b.drift_threshold;
}

bool same_view(const FeatureView& a, const FeatureView& b) {
  return a.columns == b.columns && a.scaling == b.scaling && a.standardize == b.standardize && a.mean == b.mean &&
         a.scale == b.scale;
}

const char* mode_name(StandardizeMode m) {
  switch (m) {
    case StandardizeMode::None: return "none";
    case StandardizeMode::Fixed: return "fixed";
    case StandardizeMode::Rolling: return "rolling";
  }
  return "?";
}

}  // namespace

void FeatureView::gather_current(const FeatureUpdate& u, float* out) const noexcept {
  const std::size_t w = columns.size();
  if (scaling == ViewScaling::Pipeline) {
    for (std::size_t j = 0; j < w; ++j) out[j] = u.model_input[columns[j]];
  } else if (standardize) {
    for (std::size_t j = 0; j < w; ++j) out[j] = static_cast<float>((u.values[columns[j]] - mean[j]) / scale[j]);
  } else {
    for (std::size_t j = 0; j < w; ++j) out[j] = static_cast<float>(u.values[columns[j]]);
  }
}

void FeatureView::gather_rows(const float* rows, std::size_t n_rows, std::size_t plan_width, float* out) const noexcept {
  const std::size_t w = columns.size();
  for (std::size_t r = 0; r < n_rows; ++r, rows += plan_width, out += w)
    for (std::size_t j = 0; j < w; ++j) out[j] = rows[columns[j]];
}

FeaturePlan plan_features(const FeatureSpec& pipeline, const std::vector<ModelFeatures>& models) {
  FeaturePlan plan;
  plan.spec = pipeline;
  plan.pipeline_columns = pipeline.width();
  std::vector<std::string> keys;
  for (const auto& f : pipeline.features) keys.push_back(canonical(f));
  FeatureSpec& spec = plan.spec;
  const bool fixed = spec.standardize.mode == StandardizeMode::Fixed;

  // The union: features the spec lacks, appended in the order models declare them. A fixed-scaled
  // plan takes the new column's parameters from the first model that declares it (that model then
  // reads it the plan's way); a model without standardization leaves it unscaled (mean 0, scale 1).
  for (const ModelFeatures& m : models) {
    if (!m.signature) continue;
    const FeatureSpec& sig = *m.signature;
    for (std::size_t i = 0; i < sig.width(); ++i) {
      const std::string key = canonical(sig.features[i]);
      bool have = false;
      for (const auto& k : keys) have = have || k == key;
      if (have) continue;
      if (spec.features.size() >= kMaxFeatures)
        throw Error(m.who + ": the models of this run need more than " + std::to_string(kMaxFeatures) +
                    " distinct features in all (" + key.substr(0, key.size() - 1) + " would be one more)");
      keys.push_back(key);
      spec.features.push_back(sig.features[i]);
      if (fixed) {
        const ColumnScaling c = column_scaling(sig, i);
        spec.standardize.mean.push_back(c.mode == StandardizeMode::Fixed ? c.mean : 0.0);
        spec.standardize.scale.push_back(c.mode == StandardizeMode::Fixed ? c.scale : 1.0);
      }
    }
  }

  for (const ModelFeatures& m : models) {
    FeatureView v;
    if (!m.signature) {
      for (std::size_t i = 0; i < pipeline.width(); ++i) v.columns.push_back(static_cast<std::uint16_t>(i));
      v.prefix = true;
      v.identity = v.columns.size() == spec.width();
      plan.requested_columns += pipeline.width();
    } else {
      const FeatureSpec& sig = *m.signature;
      bool as_plan = true;
      for (std::size_t i = 0; i < sig.width(); ++i) {
        const std::string key = canonical(sig.features[i]);
        std::size_t c = 0;
        while (keys[c] != key) ++c;
        v.columns.push_back(static_cast<std::uint16_t>(c));
        as_plan = as_plan && column_scaling(sig, i) == column_scaling(spec, c);
      }
      if (sig.standardize.mode == StandardizeMode::Rolling &&
          (spec.standardize.mode != StandardizeMode::Rolling || !same_rolling(sig.standardize, spec.standardize)))
        throw Error(m.who + ": its features.toml standardizes by a rolling window other than the pipeline's "
                            "(window, refit_every, drift_threshold must equal [standardize] of the pipeline spec)");
      if (!as_plan) {
        if (m.sequence)
          throw Error(m.who + ": a window or stream model reads standardized rows from the pipeline's window, but "
                              "its features.toml standardizes them differently (" +
                      mode_name(sig.standardize.mode) + " vs the pipeline's " + mode_name(spec.standardize.mode) +
                      ", or other fixed mean/scale values); give the pipeline spec the model's [standardize]");
        v.scaling = ViewScaling::Own;
        v.standardize = sig.standardize.mode == StandardizeMode::Fixed;
        if (v.standardize) {
          v.mean = sig.standardize.mean;
          v.scale = sig.standardize.scale;
        }
      }
      bool in_order = true;
      for (std::size_t j = 0; in_order && j < v.columns.size(); ++j) in_order = v.columns[j] == j;
      v.prefix = in_order && v.scaling == ViewScaling::Pipeline;
      v.identity = v.prefix && v.columns.size() == spec.width();
      plan.requested_columns += sig.width();
    }
    v.group = -1;
    for (const FeatureView& o : plan.views)
      if (same_view(o, v)) v.group = o.group;
    if (v.group < 0) v.group = static_cast<int>(plan.groups++);
    plan.views.push_back(std::move(v));
  }
  return plan;
}

}  // namespace tickinfer::features
