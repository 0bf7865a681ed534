#include "formats/keras/keras_v3_file.hpp"

#include <optional>

#include "formats/keras/hdf5_image.hpp"
#include "formats/keras/keras_config.hpp"
#include "formats/keras/keras_json.hpp"
#include "formats/keras/keras_pruning.hpp"
#include "formats/keras/zip_archive.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

constexpr uint64_t kMaxConfigBytes = uint64_t{64} << 20;
constexpr uint64_t kMaxMetadataBytes = uint64_t{1} << 20;
constexpr int kMaxVarsPerLayer = 64;

// Weights of model.weights.h5: "<list>/<snake_case(class)>[_n]/vars/<i>" (RNNs: ".../cell/vars/<i>").
class Keras3WeightSource : public WeightSource {
 public:
  Keras3WeightSource(Hdf5Image& h5, std::string list_group, std::string label)
      : h5_(h5), list_group_(std::move(list_group)), label_(std::move(label)) {}

  std::vector<Weight> layer_weights(const KerasLayerRef& layer) override {
    const std::string ctx = label_ + ": layer '" + layer.name + "' (" + layer.keras_class + ")";
    // keras3_path is "layers/<child>"; Keras 2.13 archives name the list differently.
    std::string path = layer.keras3_path;
    if (path.rfind("layers/", 0) == 0) path = list_group_ + path.substr(6);
    // Keras >= 3.6 records the owning layer's name: a mismatch means our path numbering is wrong
    // for this file, and loading would silently swap weights between layers.
    if (auto owner = h5_.string_attribute(path + "/vars", "name"); owner && owner->size() == 1) {
      if ((*owner)[0] != layer.name) {
        throw Error(ctx + ": weights group '" + path + "/vars' belongs to layer '" + (*owner)[0] + "'");
      }
    }
    const std::string layer_path = layer.pruning_wrapper || layer.time_distributed ? path + "/layer" : path;
    if (!layer.sublayers.empty()) {
      if (!read_vars(layer_path + "/vars", ctx).empty()) {
        throw Error(ctx + ": variables in '" + layer_path + "/vars', expected them on its sublayers only");
      }
      std::vector<Weight> out;
      for (const std::string& sub : layer.sublayers) {
        for (Weight& w : read_vars(layer_path + "/" + sub + "/vars", ctx)) out.push_back(std::move(w));
      }
      return out;
    }
    std::vector<Weight> out = read_vars(layer_path + (layer.weights_in_cell ? "/cell/vars" : "/vars"), ctx);
    if (layer.pruning_wrapper) apply_pruning_masks(out, wrapper_masks(path + "/vars", ctx), layer.keras_class, ctx);
    return out;
  }

 private:
  int count_vars(const std::string& vars, const std::string& ctx) {
    int n = 0;
    while (h5_.has_object(vars + "/" + std::to_string(n))) {
      if (++n > kMaxVarsPerLayer) throw Error(ctx + ": too many variables in '" + vars + "'");
    }
    return n;
  }

  std::vector<Weight> read_vars(const std::string& vars, const std::string& ctx) {
    std::vector<Weight> out;
    if (!h5_.has_object(vars)) return out;
    const int n = count_vars(vars, ctx);
    for (int i = 0; i < n; ++i) out.push_back(h5_.read_float_dataset(vars + "/" + std::to_string(i), ctx));
    return out;
  }

  // A PruneLowMagnitude's own variables: P prunable weights (tracked again), then mask and
  // threshold per prunable weight, then pruning_step: 3P + 1 (formats/keras/keras_pruning.hpp).
  std::vector<Weight> wrapper_masks(const std::string& vars, const std::string& ctx) {
    const int n = h5_.has_object(vars) ? count_vars(vars, ctx) : 0;
    if (n % 3 != 1) {
      throw Error(ctx + ": PruneLowMagnitude variables '" + vars + "' hold " + std::to_string(n) +
                  " entries, not 3 per prunable weight plus pruning_step");
    }
    std::vector<Weight> masks;
    const int p = (n - 1) / 3;
    for (int i = 0; i < p; ++i) masks.push_back(h5_.read_float_dataset(vars + "/" + std::to_string(p + 2 * i), ctx));
    return masks;
  }

  Hdf5Image& h5_;
  std::string list_group_;
  std::string label_;
};

// Keras 2.x also wrote .keras archives; hard_sigmoid differs, so the writer's version matters.
KerasDialect dialect_from_metadata(const std::optional<std::string>& metadata, const std::string& label) {
  if (!metadata) return KerasDialect::Keras3;
  nlohmann::json meta = parse_json_bounded(*metadata, label + ": metadata.json");
  std::string version = json_string(meta, "keras_version", "3", label + ": metadata.json");
  return version.rfind("2.", 0) == 0 || version.rfind("1.", 0) == 0 ? KerasDialect::Keras2
                                                                   : KerasDialect::Keras3;
}

}  // namespace

Graph load_keras3_archive(const void* data, size_t size, const std::string& label) {
  ZipArchive zip(data, size, label);
  std::optional<std::string> config_text = zip.read("config.json", kMaxConfigBytes);
  if (!config_text) throw Error(label + ": archive has no config.json (not a Keras 3 model file)");
  KerasDialect dialect = dialect_from_metadata(zip.read("metadata.json", kMaxMetadataBytes), label);
  nlohmann::json config = parse_json_bounded(*config_text, label + ": config.json");
  config_text.reset();

  std::optional<std::string> weights = zip.read("model.weights.h5", kMaxZipEntryBytes);
  if (!weights) {
    if (zip.has("model.weights.npz")) {
      throw Error(label + ": model.weights.npz is not supported (save with the HDF5 weights store)");
    }
    throw Error(label + ": archive has no model.weights.h5");
  }
  Hdf5Image h5(weights->data(), weights->size(), label + ": model.weights.h5");
  weights.reset();  // libhdf5 holds its own copy of the image
  std::string list_group = "layers";
  if (!h5.has_object("layers") && h5.has_object("_layer_checkpoint_dependencies")) {
    list_group = "_layer_checkpoint_dependencies";
  }
  Keras3WeightSource source(h5, list_group, label);
  Graph g = graph_from_keras_config(config, source, dialect, label);
  g.source_format = "keras3";
  return g;
}

}  // namespace tickinfer::formats
