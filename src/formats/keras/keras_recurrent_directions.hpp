#pragma once
// Recurrent layers that read their window backwards, written as nodes the engine runs forwards:
//   - LSTM/GRU(go_backwards=True): ReverseTime of the input, then the layer. Keras returns the
//     sequence in the order it computed it, last tick first, so nothing turns it back.
//   - Bidirectional(LSTM|GRU): the layer forwards and a copy backwards (go_backwards flipped, or
//     the backward_layer the config gives), the backward sequence turned back into time order
//     (return_sequences), the two merged as merge_mode says: concat (the default), sum, mul, ave,
//     or None (two outputs, forward first).
// Keras' order of operations is kept (ave is (y + y_rev) * 0.5, the same float as / 2), so the
// nodes give Keras' outputs. Used by keras_config.cpp's graph builder.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/keras/keras_config.hpp"
#include "formats/keras/keras_layer_nodes.hpp"

namespace tickinfer::formats {

// An LSTM's or GRU's config with go_backwards=true.
bool recurrent_goes_backwards(const std::string& keras_class, const nlohmann::json& config, const std::string& ctx);

// The layer `ref` (go_backwards=true in `config`) on node `input` of rank `in_rank`: its node,
// named `name`, after a ReverseTime "<name>/reverse_input".
int add_backwards_recurrent(const LayerNodeSink& sink, const KerasLayerRef& ref, const nlohmann::json& config,
                            const std::string& name, int input, int in_rank, WeightSource& weights,
                            const std::string& ctx);

// Bidirectional on node `input`: `ref` names the wrapper (its weights: the forward layer's, then
// the backward layer's) with keras_class the wrapped class; `wrapper` is the Bidirectional's
// config. Returns the layer's outputs (one, or two for merge_mode None); every node is of class
// "Bidirectional", the last named `name`.
std::vector<int> add_bidirectional(const LayerNodeSink& sink, const KerasLayerRef& ref, const nlohmann::json& wrapper,
                                   const std::string& name, int input, int in_rank, WeightSource& weights,
                                   const std::string& ctx);

}  // namespace tickinfer::formats
