#include "formats/keras/keras_pruning.hpp"

#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

// tfmot's prune_registry: the prunable variables of each layer class this importer converts.
size_t prunable_weight_count(const std::string& cls) {
  if (cls == "Dense" || cls == "Conv1D") return 1;
  if (cls == "LSTM" || cls == "GRU" || cls == "SimpleRNN") return 2;
  return 0;
}

// "prune_low_magnitude_d1/mask_1:0" -> "mask_1"
std::string base_name(const std::string& weight_name) {
  std::string s = weight_name.substr(weight_name.rfind('/') == std::string::npos ? 0 : weight_name.rfind('/') + 1);
  if (const size_t colon = s.find(':'); colon != std::string::npos) s.resize(colon);
  return s;
}

bool is_name_with_counter(const std::string& s, const std::string& stem) {
  if (s == stem) return true;
  if (s.size() <= stem.size() + 1 || s.compare(0, stem.size() + 1, stem + "_") != 0) return false;
  for (size_t i = stem.size() + 1; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

}  // namespace

const nlohmann::json& pruning_wrapped_layer(const nlohmann::json& wrapper_config, const std::string& ctx) {
  auto it = wrapper_config.find("layer");
  if (it == wrapper_config.end() || !it->is_object() || !it->contains("class_name") ||
      !(*it)["class_name"].is_string() || !it->contains("config") || !(*it)["config"].is_object()) {
    throw Error(ctx + ": PruneLowMagnitude wrapper has no wrapped 'layer' {class_name, config}");
  }
  if ((*it)["class_name"] == kPruningWrapperClass) throw Error(ctx + ": PruneLowMagnitude wraps another PruneLowMagnitude");
  return *it;
}

PruningVar classify_pruning_weight_name(const std::string& weight_name) {
  // The wrapper's own variables are created in its name scope; the wrapped layer's in the
  // layer's ("d1/kernel:0"), so only the wrapper's prefix can mark a mask (a wrapped layer could
  // itself have a weight named "mask").
  const std::string b = base_name(weight_name);
  const size_t slash = weight_name.find('/');
  const bool wrapper_scope = slash != std::string::npos && weight_name.rfind("prune_low_magnitude", 0) == 0;
  if (!wrapper_scope) return PruningVar::Wrapped;
  if (is_name_with_counter(b, "mask")) return PruningVar::Mask;
  if (is_name_with_counter(b, "threshold") || is_name_with_counter(b, "pruning_step")) return PruningVar::Ignored;
  return PruningVar::Wrapped;
}

void apply_pruning_masks(std::vector<Weight>& weights, const std::vector<Weight>& masks, const std::string& wrapped_class,
                         const std::string& ctx) {
  const size_t want = prunable_weight_count(wrapped_class);
  if (masks.empty() && want == 0) return;
  if (masks.size() != want) {
    throw Error(ctx + ": PruneLowMagnitude wrapper stores " + std::to_string(masks.size()) + " masks, but a " + wrapped_class +
                " has " + std::to_string(want) + " prunable weights");
  }
  if (weights.size() < masks.size()) {
    throw Error(ctx + ": PruneLowMagnitude wrapper has " + std::to_string(masks.size()) + " masks for " +
                std::to_string(weights.size()) + " weights");
  }
  for (size_t i = 0; i < masks.size(); ++i) {
    Weight& w = weights[i];
    const Weight& m = masks[i];
    if (m.shape != w.shape || m.data.size() != w.data.size()) {
      throw Error(ctx + ": pruning mask " + std::to_string(i) + " has shape " + shape_str(m.shape) + " but the weight it prunes " +
                  shape_str(w.shape));
    }
    for (size_t j = 0; j < m.data.size(); ++j) {
      if (m.data[j] == 0.0f) {
        w.data[j] = 0.0f;
      } else if (m.data[j] != 1.0f) {
        throw Error(ctx + ": pruning mask " + std::to_string(i) + " holds " + std::to_string(m.data[j]) + " (a mask is 0 or 1)");
      }
    }
  }
}

std::string pruning_wrapper_warning(const std::vector<std::string>& wrapper_names) {
  std::string list;
  for (size_t i = 0; i < wrapper_names.size() && i < 8; ++i) list += (i ? ", '" : "'") + wrapper_names[i] + "'";
  if (wrapper_names.size() > 8) list += ", ...";
  return "the model was saved with tfmot PruneLowMagnitude wrappers still in (" + std::to_string(wrapper_names.size()) +
         " layers: " + list + "): tfmot.sparsity.keras.strip_pruning was skipped before saving; the wrappers were "
         "removed and their stored masks applied to the weights (their threshold and pruning_step ignored)";
}

}  // namespace tickinfer::formats
