#pragma once
// Lowering of an ONNX graph into the engine's Graph (model/graph.hpp).
//
// Every ONNX value is either a constant (an initializer, a Constant node, or folded from them) or
// a view of an engine node's output. The engine works channels-last without a batch axis; ONNX
// tensors carry the batch and, from both exporters, NCW layouts, unit axes and transposes. A
// runtime value therefore records, per ONNX axis, which engine axis it is (or kUnit: an axis of
// size 1 the engine tensor does not have). Transpose, Squeeze and Unsqueeze only rewrite that
// map, so the transposes exporters put around convolutions and recurrent layers cancel at import
// without any engine op; an op that needs its operand in a layout the map cannot give (e.g. a
// channels-first convolution input straight from a model input) is refused by name.
//
// Invariant of a runtime value: every engine axis whose size is not 1 appears in `axes` exactly
// once (engine axes of size 1 may be absent). With a batch of 1 the batch axis is a unit axis.
//
// Lowering is on demand from the graph outputs (memoised per value), so nodes that only compute
// what the engine gets from elsewhere (Shape/Expand chains building zero initial states, the
// pieces of a decomposed LayerNormalization) are never lowered on their own.
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "formats/onnx/onnx_tensor.hpp"
#include "model/graph.hpp"
#include "onnx/onnx.pb.h"

namespace tickinfer::formats::onnx_import {

constexpr int kUnit = -1;

struct Value {
  bool is_const = false;
  Tensor c;               // is_const
  int node = -1;          // engine node index otherwise
  std::vector<int> axes;  // per ONNX axis: engine axis or kUnit
  // Zero padding of engine axis 0 (time) a Pad added and a Conv will absorb: only the layout
  // ops and Conv accept a padded operand (Lowerer::runtime refuses it elsewhere).
  int pad_begin = 0, pad_end = 0;
  bool padded() const { return pad_begin != 0 || pad_end != 0; }
};

class Lowerer {
 public:
  Lowerer(const onnx::GraphProto& graph, std::map<std::string, Tensor> initializers, int64_t opset,
          TensorSource src);
  Graph run();

  // --- used by the op lowerings (onnx_ops_*.cpp) ---
  const Value& value(const std::string& name);         // lowers on first use
  const Value& runtime(const onnx::NodeProto& n, int input);  // input `input`, must not be a constant
  void require_unpadded(const onnx::NodeProto& n, const Value& v) const;
  const Tensor& constant(const onnx::NodeProto& n, int input);  // must be a constant
  double scalar(const onnx::NodeProto& n, int input);            // a constant of one element
  bool has_input(const onnx::NodeProto& n, int input) const;
  const onnx::NodeProto* producer(const std::string& name) const;  // nullptr: initializer / graph input
  int uses(const std::string& name) const;  // consumers plus graph outputs
  bool is_initializer(const std::string& name) const { return inits_.count(name) != 0; }
  int64_t opset() const { return opset_; }

  const Shape& eshape(int node) const { return graph_.nodes[node].shape; }
  const Node& node(int index) const { return graph_.nodes[index]; }
  std::vector<int> dims(const Value& v) const;  // ONNX dims with batch 1 (-1: unknown length)
  bool in_order(const Value& v) const;          // engine axes appear in increasing order
  // The engine axis of ONNX axis `axis` (negative counts from the end) or kUnit; fails if out of range.
  int engine_axis(const onnx::NodeProto& n, const Value& v, int64_t axis) const;
  int norm_axis(const onnx::NodeProto& n, int64_t axis, size_t rank) const;

  // Appends an engine node (name from `src`, then "/" and `node.name` when that is set; `src`
  // appended to its origin, shape computed) and returns its index.
  int add(Node node, const onnx::NodeProto& src, const std::vector<int>& inputs);
  // The engine node several outputs of ONNX node `n` are taken from (an LSTM computing Y, Y_h
  // and Y_c together; `slot` tells apart several such nodes of one ONNX node, as the reversed
  // input both directions' outputs read), once made: -1 before.
  int shared_node(const onnx::NodeProto& n, int slot = 0) const {
    auto it = shared_.find({&n, slot});
    return it == shared_.end() ? -1 : it->second;
  }
  void set_shared_node(const onnx::NodeProto& n, int node, int slot = 0) { shared_[{&n, slot}] = node; }
  // A bidirectional recurrent output (Y [T, 2, batch, H], Y_h [2, batch, H]) is one engine node
  // joining the two directions' nodes along engine axis `axis`; a Slice or Gather of one
  // direction takes that direction's node instead of slicing the joined tensor.
  struct DirectionParts {
    int axis = 0;
    int parts[2] = {-1, -1};  // forward, backward
  };
  void set_direction_parts(int node, const DirectionParts& p) { directions_[node] = p; }
  const DirectionParts* direction_parts(int node) const {
    auto it = directions_.find(node);
    return it == directions_.end() ? nullptr : &it->second;
  }
  // A value viewing engine node `node` with its axes in order after `leading_units` unit axes.
  Value view(int node, int leading_units = 0) const;
  // A node reinterpreting `v` as `target` (no batch), after a Permute into the view's order when
  // the view transposes the data; `v`'s node when the shapes are equal.
  int reshape(const onnx::NodeProto& n, const Value& v, const Shape& target);

  [[noreturn]] void fail(const onnx::NodeProto& n, const std::string& why) const;
  std::string where(const onnx::NodeProto& n) const;  // "node 'name' (Op)"

  // Attributes (ONNX defaults when absent).
  int64_t attr_i(const onnx::NodeProto& n, const char* name, int64_t def) const;
  float attr_f(const onnx::NodeProto& n, const char* name, float def) const;
  std::string attr_s(const onnx::NodeProto& n, const char* name, const std::string& def) const;
  std::vector<int64_t> attr_ints(const onnx::NodeProto& n, const char* name) const;
  std::vector<std::string> attr_strings(const onnx::NodeProto& n, const char* name) const;
  bool has_attr(const onnx::NodeProto& n, const char* name) const;
  const onnx::AttributeProto* attr(const onnx::NodeProto& n, const char* name) const;
  const TensorSource& source() const { return src_; }

 private:
  Value lower_output(const onnx::NodeProto& n, int output);
  Value make_input(const onnx::ValueInfoProto& vi);
  void check_declared_shape(const onnx::ValueInfoProto& o, const Value& v) const;

  const onnx::GraphProto& proto_;
  std::map<std::string, Tensor> inits_;
  int64_t opset_;
  TensorSource src_;
  Graph graph_;
  std::unordered_map<std::string, std::pair<const onnx::NodeProto*, int>> producers_;
  std::unordered_map<std::string, int> uses_;
  std::unordered_map<std::string, Value> memo_;
  std::unordered_map<std::string, int> name_count_;
  std::vector<std::string> active_;  // values being lowered (cycle and depth guard)
  std::map<std::pair<const onnx::NodeProto*, int>, int> shared_;
  std::unordered_map<int, DirectionParts> directions_;
};

// The op lowerings, by group. Each returns output `out` of node `n`, or fails naming it.
// Returns false when the op type is not one of the group's.
bool lower_math_op(Lowerer& L, const onnx::NodeProto& n, int out, Value& result);     // onnx_ops_math.cpp
bool lower_layout_op(Lowerer& L, const onnx::NodeProto& n, int out, Value& result);   // onnx_ops_layout.cpp
bool lower_conv_op(Lowerer& L, const onnx::NodeProto& n, int out, Value& result);     // onnx_ops_conv.cpp
bool lower_rnn_op(Lowerer& L, const onnx::NodeProto& n, int out, Value& result);      // onnx_ops_rnn.cpp
// Whether `x` is an NCHW view of a channels-last [H, W, C] engine tensor (a 2-D Conv or pool
// input), and the 2-D Conv / MaxPool / AveragePool over one.                       // onnx_ops_conv2d.cpp
bool is_nchw_view(Lowerer& L, const Value& x);
Value lower_conv2d_op(Lowerer& L, const onnx::NodeProto& n, const Value& x);
// Zero `pads` (ONNX order: begins, then ends) around such a view: an engine Pad node.
Value pad_nchw_view(Lowerer& L, const onnx::NodeProto& n, const Value& x, const std::vector<int64_t>& pads);
// A decomposed LayerNormalization ending at Add node `n` (tf2onnx's form); false if not one.
bool match_layer_norm(Lowerer& L, const onnx::NodeProto& n, Value& result);         // onnx_layernorm.cpp
// Constant folding of integer shape arithmetic (Shape of a known value, Cast, Concat, ...);
// false when `n` is not foldable.
bool fold_constant(Lowerer& L, const onnx::NodeProto& n, int out, Value& result);    // onnx_fold.cpp
// Elementwise ops (arithmetic, comparisons, logic, Where, Expand; and Trilu) whose inputs are
// all constants, broadcast as ONNX does; false when `n` is not one or an input is computed.
bool fold_elementwise(Lowerer& L, const onnx::NodeProto& n, int out, Value& result);  // onnx_fold_elementwise.cpp
// `v` with its engine tensor's data in the view's axis order: through an engine Permute when the
// view transposes it, else `v` itself (a transpose only of axes of size 1 moves no data).
Value in_engine_order(Lowerer& L, const onnx::NodeProto& n, const Value& v);         // onnx_ops_layout.cpp
// The ops attention is written in (onnx_ops_attention.cpp): MatMul of two computed tensors as an
// engine MatMul; Add / Sub / Mul / Div by a constant that varies along more than the channel axis
// as the op with an engine Constant node (the constant laid out over x's engine shape); zero
// padding of axes other than the time axis a Conv absorbs, as an engine Pad node.
Value lower_matmul_computed(Lowerer& L, const onnx::NodeProto& n);
bool varies_per_channel_only(Lowerer& L, const Value& x, const Tensor& c);
Value lower_binary_table(Lowerer& L, const onnx::NodeProto& n, const Value& x, const Tensor& c, bool const_first);
Value pad_node(Lowerer& L, const onnx::NodeProto& n, const Value& x, const std::vector<int64_t>& pads);
// torch's nn.MultiheadAttention projects q, k and v with one stacked weight, reshapes the result
// to [T, B, 3, E] and Gathers each part: such a Gather becomes a Dense of its own (that part's
// kernel and bias columns), so attention sees three projections. False when `n` is not one.
bool split_projection(Lowerer& L, const onnx::NodeProto& n, Value& result);
// True when `name` is known to be all zeros whatever the batch (zero initial states).
bool known_zero(Lowerer& L, const std::string& name);                               // onnx_ops_rnn.cpp
bool known_fill(Lowerer& L, const std::string& name, double fill);                  // onnx_ops_rnn.cpp
// tf_keras' LayerNormalization as tf2onnx writes it: a BatchNormalization whose mean and
// variance are computed from its own input reshaped to [1, batch, features, 1] (ones and
// zeros for scale and B). False when `n` is not that form.
bool match_batch_stats_norm(Lowerer& L, const onnx::NodeProto& n, Value& result);    // onnx_layernorm.cpp
// Slice / Gather along one axis (onnx_time_slices.cpp): one direction of a bidirectional
// recurrent output (that direction's node); the last time step of a recurrent layer's sequence
// output, or the first of a reversed one (the same layer without return_sequences); other rows
// of the engine tensor's first axis (an engine SliceRows); an element of an axis of size 1.
// Anything else is refused.
Value take_last_step(Lowerer& L, const onnx::NodeProto& n);
// LSTM / GRU with direction "reverse" or "bidirectional" (onnx_rnn_directions.cpp): `cells` holds
// one engine node per direction (forward first), its weights set, not yet added; `x` is the
// [T, I] sequence. The reverse direction runs forwards between two ReverseTime nodes.
Value directed_rnn_output(Lowerer& L, const onnx::NodeProto& n, std::vector<Node> cells, const Value& x, int out,
                          int layout);
// ReverseSequence over the whole window (every sequence_lens value the time axis' length): an
// engine ReverseTime node.
Value lower_reverse_sequence(Lowerer& L, const onnx::NodeProto& n);                 // onnx_rnn_directions.cpp

// X ([T, batch, I] for layout 0, [batch, T, I] for layout 1) as the engine's [T, I] sequence a
// recurrent layer takes; fails naming `n` when X is not in that layout.
Value rnn_sequence(Lowerer& L, const onnx::NodeProto& n, const Value& x, int layout, int I);  // onnx_ops_rnn.cpp
// Output `out` of a Loop that is tf2onnx's form of a Keras GRU or LSTM, else fails saying why.
Value lower_rnn_loop(Lowerer& L, const onnx::NodeProto& n, int out);                 // onnx_loop_rnn.cpp

// Merges bias adds and scalings into their producers, fuses activations, drops dead nodes.
void simplify_graph(Graph& g);  // onnx_simplify.cpp

}  // namespace tickinfer::formats::onnx_import
