#pragma once
// One Keras layer config -> one Graph Node (op, parameters, weights). Wiring (Node::inputs) is
// the caller's job (keras_config.cpp).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/keras/keras_config.hpp"
#include "model/graph.hpp"

namespace tickinfer::formats {

// Largest single dimension accepted from a config (units, filters, input dims, ...).
inline constexpr int kMaxKerasDim = 1 << 24;

// True for the layer classes this importer converts (InputLayer excluded).
bool is_supported_layer_class(const std::string& keras_class);
// Dropout, GaussianNoise, ...: layers that are the identity at inference.
bool is_inference_noop_class(const std::string& keras_class);

// RNN layers keep their variables on the cell object ("<path>/cell/vars" in .keras files).
bool layer_weights_in_cell(const std::string& keras_class);
// Keras 3 keeps some layers' variables on sublayers ("<path>/<sublayer>/vars", MultiHeadAttention's
// query_dense, ...): their names in weight order; empty for the rest.
std::vector<std::string> layer_weight_sublayers(const std::string& keras_class);
// MultiHeadAttention: value and key may arrive as call keywords (tf_keras always writes them so).
bool layer_takes_keyword_inputs(const std::string& keras_class);

// Throws unless the layer config's `dtype` (a plain string in Keras <= 3.3 and Keras 2, a
// DTypePolicy object since Keras 3.4, a Policy object in tf.keras mixed precision) is float32
// or absent.
void check_float32_policy(const nlohmann::json& layer_config, const std::string& ctx);

// Converts a supported layer. `input_ranks` are the un-batched ranks of the layer's inputs (in
// call order) and are used only to resolve Keras axis arguments. Weights are fetched through
// `weights`, checked for count and rank, and normalised (missing bias -> zeros, BatchNorm without
// center/scale -> beta 0 / gamma 1; a LayerNormalization with neither is returned with no weights
// for the caller to fill once the channel count is known). Throws Error "<ctx>: <problem>".
Node node_from_keras_layer(const KerasLayerRef& ref, const nlohmann::json& layer_config,
                           const std::vector<int>& input_ranks, WeightSource& weights,
                           KerasDialect dialect, const std::string& ctx);

// The un-batched rank of `node`'s output given its inputs' ranks (needed before infer_shapes runs
// to resolve positive Keras axes in later layers).
int output_rank(const Node& node, const std::vector<int>& input_ranks);

}  // namespace tickinfer::formats
