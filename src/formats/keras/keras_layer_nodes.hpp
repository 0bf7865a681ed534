#pragma once
// Keras layers the importer writes as several graph nodes, and what the graph builder
// (keras_config.cpp) lends them to do it: Dot (keras_dot.cpp) and the recurrent layers that read
// their window backwards (keras_recurrent_directions.hpp).
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/keras/keras_config.hpp"
#include "model/graph.hpp"

namespace tickinfer::formats {

struct LayerNodeSink {
  // Adds a node (its name claimed unless it is the layer's own, which is claimed already; its
  // weights counted; its inputs and un-batched output rank set) and returns its index.
  std::function<int(Node node, std::vector<int> inputs, int rank)> add;
  // A layer's node from its class and config, weights from `source`.
  std::function<Node(const std::string& layer_class, const nlohmann::json& config, WeightSource& source)> convert;
  // A node's shape as far as the graph so far tells it (-1 for a window length not fixed).
  std::function<Shape(int node)> shape_of;
};

// Keras' Dot on `inputs` (un-batched ranks `ranks`, `config` the layer's) as a MatMul: batch_dot
// contracts axis i of the first input with axis j of the second and keeps the rest in order, so
// the first goes in with its contracted axis last and the second with its contracted axis first
// (a Permute where they are not). Vectors (rank 1) become [1, d] . [d, 1] and the [1, 1] product
// Keras' [1]. `matmul` is the layer's node; the last node added carries its name and is returned.
int add_dot(const LayerNodeSink& sink, Node matmul, std::vector<int> inputs, const std::vector<int>& ranks,
            const nlohmann::json& config, const std::string& ctx);

}  // namespace tickinfer::formats
