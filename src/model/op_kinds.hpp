#pragma once
// One place per op kind of the graph IR (model/op_kinds.cpp): its name, its shape rule (with
// the checks of its attributes and weights, each naming the layer) and its work in
// multiply-accumulates. infer_shapes, op_name and the model statistics read this table and
// nothing else switches on OpKind in src/model/. The other per-kind places are one each, by
// layer: the lowering to the plans' op forms (engine/lowering/lower_for_plan.cpp), the Keras
// class table (formats/keras/keras_layers.cpp) and the quantizer's tensor-program form
// (quantizer/lower_graph.cpp).
#include <cstdint>
#include <string>

#include "model/graph.hpp"

namespace tickinfer {

struct OpKindInfo {
  OpKind kind;
  const char* name;
  // The node's output shape from its inputs' (already inferred); throws tickinfer::Error naming
  // the layer when an attribute or a weight does not fit. May normalise attributes (Concatenate's
  // axis) in a form a second run accepts.
  Shape (*infer_shape)(const Graph& g, Node& node);
  // Multiply-accumulates of one inference (the matrix products only: elementwise work, bias and
  // gates are not counted), from the inferred node and its first input's shape.
  int64_t (*macs)(const Node& node, const Shape& in);
};

const OpKindInfo& op_kind_info(OpKind kind);

// "layer '<name>' (<class>): <msg>", the form every graph check throws.
[[noreturn]] void fail_layer(const Node& node, const std::string& msg);

}  // namespace tickinfer
