#include "formats/keras/keras_h5_file.hpp"

#include <optional>

#include "formats/keras/hdf5_image.hpp"
#include "formats/keras/keras_config.hpp"
#include "formats/keras/keras_json.hpp"
#include "formats/keras/keras_pruning.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

constexpr int kMaxAttributeChunks = 100000;

// Keras splits long string-list attributes into `<name>0`, `<name>1`, ... when one would exceed
// the HDF5 object header limit; this reads either form. nullopt if neither exists.
std::optional<std::vector<std::string>> chunked_strings(const Hdf5Image& h5, const std::string& path,
                                                        const std::string& name) {
  if (auto whole = h5.string_attribute(path, name)) return whole;
  std::optional<std::vector<std::string>> out;
  for (int i = 0; i < kMaxAttributeChunks; ++i) {
    auto chunk = h5.string_attribute(path, name + std::to_string(i));
    if (!chunk) break;
    if (!out) out.emplace();
    out->insert(out->end(), chunk->begin(), chunk->end());
  }
  return out;
}

// Weights of `model_weights/<layer name>`, loaded in the order of its weight_names attribute and
// looked up by name (a '/' in a weight name is a nested group).
class LegacyH5WeightSource : public WeightSource {
 public:
  LegacyH5WeightSource(Hdf5Image& h5, std::string weights_group, std::string label)
      : h5_(h5), group_(std::move(weights_group)), label_(std::move(label)) {}

  std::vector<Weight> layer_weights(const KerasLayerRef& layer) override {
    const std::string ctx = label_ + ": layer '" + layer.name + "' (" + layer.keras_class + ")";
    std::vector<Weight> out;
    if (layer.name.find('/') != std::string::npos) throw Error(ctx + ": layer name contains '/'");
    const std::string path = group_.empty() ? layer.name : group_ + "/" + layer.name;
    if (!h5_.has_object(path)) return out;
    auto names = chunked_strings(h5_, path, "weight_names");
    if (!names) throw Error(ctx + ": group '" + path + "' has no weight_names attribute");
    if (names->size() > 64) throw Error(ctx + ": too many weights (" + std::to_string(names->size()) + ")");
    if (!layer.pruning_wrapper) {
      for (const std::string& name : *names) out.push_back(h5_.read_float_dataset(path + "/" + name, ctx));
      return out;
    }
    // The wrapper's threshold and int64 pruning_step are never read: only the masks matter.
    std::vector<Weight> masks;
    for (const std::string& name : *names) {
      const PruningVar kind = classify_pruning_weight_name(name);
      if (kind == PruningVar::Wrapped) out.push_back(h5_.read_float_dataset(path + "/" + name, ctx));
      if (kind == PruningVar::Mask) masks.push_back(h5_.read_float_dataset(path + "/" + name, ctx));
    }
    apply_pruning_masks(out, masks, layer.keras_class, ctx);
    return out;
  }

 private:
  Hdf5Image& h5_;
  std::string group_;
  std::string label_;
};

KerasDialect dialect_from_version(const std::optional<std::vector<std::string>>& version) {
  if (version && version->size() == 1 && (*version)[0].rfind("3", 0) == 0) return KerasDialect::Keras3;
  return KerasDialect::Keras2;
}

}  // namespace

Graph load_keras_h5(const void* data, size_t size, const std::string& label) {
  Hdf5Image h5(data, size, label);
  auto config_text = h5.string_attribute("", "model_config");
  if (!config_text) {
    throw Error(label + ": HDF5 file has no model_config attribute (a weights-only file cannot be loaded)");
  }
  if (config_text->size() != 1) throw Error(label + ": model_config attribute is not a single string");
  nlohmann::json config = parse_json_bounded((*config_text)[0], label + ": model_config");
  // The writer's version decides Keras-2-vs-3 meanings: Keras 3 also writes this legacy format.
  KerasDialect dialect = dialect_from_version(h5.string_attribute("", "keras_version"));
  const std::string group = h5.has_object("model_weights") ? "model_weights" : "";
  LegacyH5WeightSource source(h5, group, label);
  Graph g = graph_from_keras_config(config, source, dialect, label);
  g.source_format = "keras2-h5";
  return g;
}

}  // namespace tickinfer::formats
