#pragma once
// Every field of a Node, a Weight and a Graph, listed once. The wire form (graph_wire.cpp) and
// its round-trip test visit these lists, so a field added here travels across the isolated
// loader's process boundary and is compared, and a field added to the structs but not here
// stops the build (the size checks below) instead of being dropped silently, as Node::origin
// and Graph::output_names once were.
#include "model/graph.hpp"

namespace tickinfer {

// Field by field, not as raw bytes: the struct has padding after `kind`, and raw bytes would
// carry whatever memory held there (two encodings of one graph would differ).
template <class A, class F>
void visit_activation_fields(A& a, F&& f) {
  f(a.kind), f(a.alpha), f(a.beta), f(a.max_value), f(a.threshold);
}

template <class W, class F>
void visit_weight_fields(W& w, F&& f) {
  f(w.shape), f(w.data);
}

template <class N, class F>
void visit_node_fields(N& n, F&& f) {
  f(n.name), f(n.keras_class), f(n.origin), f(n.kind), f(n.inputs), f(n.shape);
  f(n.activation), f(n.recurrent_activation), f(n.units), f(n.return_sequences), f(n.reset_after);
  f(n.cell_clip), f(n.kernel_size), f(n.stride), f(n.dilation), f(n.pool_size), f(n.pool_stride);
  f(n.kernel_w), f(n.stride_w), f(n.dilation_w), f(n.pool_w), f(n.pool_stride_w);
  f(n.num_heads), f(n.key_dim), f(n.value_dim), f(n.causal_mask), f(n.pads), f(n.permutation);
  f(n.depth_multiplier), f(n.attention_span), f(n.return_state), f(n.slice_begin), f(n.slice_end);
  f(n.padding), f(n.keepdims), f(n.axis), f(n.epsilon), f(n.target_shape), f(n.weights);
}

template <class G, class F>
void visit_graph_fields(G& g, F&& f) {
  f(g.name), f(g.source_format), f(g.output_names), f(g.nodes), f(g.inputs), f(g.outputs), f(g.warnings);
}

// The layouts the lists above were written against (libstdc++, 64-bit). A new field changes the
// size: add it to its list, then update the number.
#if defined(__GLIBCXX__) && defined(__LP64__)
static_assert(sizeof(Node) == 384, "Node changed: add the new field to visit_node_fields, then update this size");
static_assert(sizeof(Graph) == 184, "Graph changed: add the new field to visit_graph_fields, then update this size");
static_assert(sizeof(Weight) == 48, "Weight changed: add the new field to visit_weight_fields, then update this size");
static_assert(sizeof(ActivationSpec) == 20,
              "ActivationSpec changed: add the new field to visit_activation_fields, then update this size");
#endif

}  // namespace tickinfer
