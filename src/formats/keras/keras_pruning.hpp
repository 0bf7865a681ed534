#pragma once
// tfmot's PruneLowMagnitude wrapper in Keras files saved without
// tfmot.sparsity.keras.strip_pruning. The wrapper is unwrapped to the layer inside it, the
// stored masks are multiplied into the weights they prune (what the wrapper's call does before
// every use), and its threshold and pruning_step variables are ignored, so the loaded model is
// the one strip_pruning would have produced and no wrapper work remains at run time.
//
// Stored layouts (tf_keras 2.x with tfmot 0.8):
//  - legacy .h5 `model_weights/<wrapper name>` weight_names: the wrapped layer's weights
//    ("d1/kernel:0", "d1/bias:0"), then per prunable weight "<wrapper>/mask:0" and
//    "<wrapper>/threshold:0", then "<wrapper>/pruning_step:0" (int64);
//  - .keras `layers/prune_low_magnitude[_n]/layer[/cell]/vars/<i>`: the wrapped layer's weights;
//    `.../vars/<i>`: the P prunable weights again, then mask and threshold per prunable weight,
//    then pruning_step (3P + 1 variables).
// The prunable weights are the first P of the wrapped layer, in its creation order: Dense and
// Conv1D `kernel`; LSTM, GRU and SimpleRNN `kernel`, `recurrent_kernel` (tfmot prune_registry).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/graph.hpp"

namespace tickinfer::formats {

inline constexpr const char* kPruningWrapperClass = "PruneLowMagnitude";

// The wrapped layer's {"class_name", "config"} object of a PruneLowMagnitude layer entry's
// config; throws Error "<ctx>: ..." if it is missing or is itself a wrapper.
const nlohmann::json& pruning_wrapped_layer(const nlohmann::json& wrapper_config, const std::string& ctx);

// How the names of a legacy .h5 wrapper group's weight_names divide up.
enum class PruningVar { Wrapped, Mask, Ignored };
PruningVar classify_pruning_weight_name(const std::string& weight_name);

// Multiplies masks[i] into weights[i] (every mask value must be exactly 0 or 1, shapes equal).
// `wrapped_class` is the inner layer's class; the mask count must be its prunable weight count
// (or 0 for a wrapper around a layer with nothing to prune). Throws Error "<ctx>: ...".
void apply_pruning_masks(std::vector<Weight>& weights, const std::vector<Weight>& masks,
                         const std::string& wrapped_class, const std::string& ctx);

// The Graph warning for the wrappers found (names of the wrapper layers, in order).
std::string pruning_wrapper_warning(const std::vector<std::string>& wrapper_names);

}  // namespace tickinfer::formats
