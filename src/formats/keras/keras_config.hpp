#pragma once
// Keras model config (the JSON of config.json / the `model_config` attribute) -> tickinfer Graph.
//
// This layer knows the Keras config schema (Sequential and Functional, Keras 2 and Keras 3
// spellings) but nothing about files: weights come through a WeightSource, so the same code serves
// the .keras reader, the legacy .h5 reader and the config fuzzer.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/graph.hpp"

namespace tickinfer::formats {

// Which Keras wrote the config. It decides the few meanings that changed between versions
// (hard_sigmoid's slope). Taken from the writer's keras_version, not from the container: Keras 3
// also writes legacy .h5 files.
enum class KerasDialect { Keras2, Keras3 };

// Identifies one layer for a WeightSource.
struct KerasLayerRef {
  std::string name;         // the layer's `name` (Keras 2 .h5 looks weights up by it)
  std::string keras_class;  // config class_name, e.g. "LSTM"
  // Keras 3 weights path of the layer object: "layers/<snake_case(class)>[_<n>]", with the
  // per-class counter over the model's layer list (Functional models count InputLayers,
  // Sequential models do not).
  std::string keras3_path;
  bool weights_in_cell = false;  // RNN layers: variables live under "<path>/cell/vars"
  // Wrapped in a tfmot PruneLowMagnitude (formats/keras/keras_pruning.hpp): `name` and `keras3_path`
  // are the wrapper's, `keras_class` the wrapped layer's. The source returns the wrapped layer's
  // weights with the stored masks applied.
  bool pruning_wrapper = false;
  // Wrapped in TimeDistributed: `keras_class` is the wrapped layer's, its variables under
  // "<path>/layer/vars" as a pruning wrapper's.
  bool time_distributed = false;
  // The layer's config object (units, use_bias, ...); valid only during layer_weights(). Lets a
  // synthetic source (the config fuzzer) produce weights of the configured shapes.
  const nlohmann::json* config = nullptr;
  // Keras 3 sublayers holding the variables, in weight order (layer_weight_sublayers); empty: the
  // layer's own vars.
  std::vector<std::string> sublayers;
  // The keyword arguments of this call of the layer (use_causal_mask, ...), or nullptr; valid only
  // while the layer is converted.
  const nlohmann::json* call_kwargs = nullptr;
};

// Supplies a layer's saved variables in Keras' creation order (e.g. kernel, bias). Implementations
// must return only float32 data with shape/data consistent (data.size() == product(shape)) and
// throw tickinfer::Error naming the file and layer on any problem (missing group, wrong dtype).
class WeightSource {
 public:
  virtual ~WeightSource() = default;
  virtual std::vector<Weight> layer_weights(const KerasLayerRef& layer) = 0;
};

// Largest total of weight values accepted in one model (1 GiB of float32).
inline constexpr int64_t kMaxTotalWeightValues = (int64_t{1} << 30) / 4;

// Builds the graph described by `model_config` ({"class_name": "Sequential"|"Functional"|"Model",
// "config": {...}}, optionally with Keras 3's top-level "build_config"). `label` prefixes every
// error ("model.keras"). Node::shape is set for Input nodes only; call infer_shapes() next.
// Throws tickinfer::Error "<label>: layer '<name>' (<Class>): <problem>" for anything unsupported
// or malformed; never crashes on hostile input. A shared layer (one called several times) becomes
// one node per call, named "<name>", "<name>#1", "<name>#2", ... with copies of its weights.
Graph graph_from_keras_config(const nlohmann::json& model_config, WeightSource& weights,
                              KerasDialect dialect, const std::string& label);

// Keras' naming.to_snake_case, used for weight paths: "Conv1D" -> "conv1d",
// "BatchNormalization" -> "batch_normalization", "LeakyReLU" -> "leaky_re_lu".
std::string keras_snake_case(const std::string& class_name);

}  // namespace tickinfer::formats
