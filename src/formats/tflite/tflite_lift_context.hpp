#pragma once
// Internal to the TFLite -> Graph lift (formats/tflite/tflite_graph_lift.hpp): the state shared by the
// per-op-family lift functions (tflite_lift_*.cpp).
//
// Invariant: every float activation tensor the lift has reached maps to a Value, a graph node
// whose output holds the tensor's elements in the same row-major order (element counts agree;
// the node's own shape may differ in unit axes, and layout-only ops such as RESHAPE map their
// output to their input's node). The one exception is a PAD on the time axis, kept pending in
// the Value until the CONV_2D that consumes it turns it into causal or same padding.
#include <string>
#include <vector>

#include "model/graph.hpp"
#include "tflite/program.hpp"

namespace tickinfer::formats::lift {

// Thrown inside the lift for a form the graph cannot represent exactly; caught by
// lift_tflite_program and returned as the refusal.
struct NotLiftable {
  std::string why;
};

struct Value {
  int node = -1;
  // TFLite layout ops folded into this value that no node has recorded yet (for Node::origin).
  std::string pending_origin;
  // A PAD of the time axis not yet applied: zeros before / after the node's [steps, channels].
  int pad_before = 0, pad_after = 0;
  // The node was made for this tensor by the op that wrote it (not reached through a layout op),
  // so a following activation or constant bias/scale may fold into it.
  bool own_output = false;
  bool padded() const { return pad_before != 0 || pad_after != 0; }
};

// The Value of a node made for the op's output (own_output) or reached otherwise.
inline Value own_value(int node) {
  Value v;
  v.node = node;
  v.own_output = true;
  return v;
}
inline Value node_value(int node) {
  Value v;
  v.node = node;
  return v;
}

class Lifter {
 public:
  explicit Lifter(const tfl::Program& p);

  Graph run();

  // --- used by the op families ---
  const tfl::Program& program() const { return p_; }
  const tfl::Op& op() const { return p_.ops[static_cast<size_t>(op_index_)]; }
  // Refuses a left-out optional operand (-1) where the op needs one.
  const tfl::Tensor& tensor(int t) const {
    if (t < 0) refuse("a required operand is missing");
    return p_.tensors[static_cast<size_t>(t)];
  }
  [[noreturn]] void refuse(const std::string& why) const;
  std::string op_origin() const;  // "CONV_2D #4"

  // The Value of an activation input (refuses for a constant or a tensor no op produced).
  const Value& value(int tensor) const;
  Value& value(int tensor);
  Node& node(int index) { return g_.nodes[static_cast<size_t>(index)]; }
  int consumers(int tensor) const { return consumers_[static_cast<size_t>(tensor)]; }
  bool is_output(int tensor) const;

  // A node reading `tensor` with exactly `shape` (a Reshape node is added when the tensor's node
  // has another shape with the same element count). Refuses a pending PAD.
  int as_shape(int tensor, const Shape& shape);
  // Same from a node index (for a padded value's un-padded producer).
  int node_as_shape(int node, const Shape& shape, const std::string& origin);

  // Appends a node (origin: the pending origins of `input_tensors` + this op) with `shape` as
  // its expected output shape (checked against infer_shapes at the end); returns its index.
  int add_node(Node n, const std::vector<int>& input_tensors);
  // Maps the op's output `t` to `v`.
  void set_value(int t, Value v);
  // Constant float data of an operand, refusing a missing, non-constant or non-float32 one.
  std::vector<float> constant_f32(int tensor, const char* what) const;
  // TFLite's fused activation as an ActivationSpec (refuses RELU_N1_TO_1 and SIGN_BIT).
  ActivationSpec fused(tfl::FusedActivation a) const;
  // Adds an Activation node after the op's output when `a` is not linear; returns the node.
  int apply_activation(int node, const ActivationSpec& a);
  // A node name for the op's output `t`: the first ';'-separated part of its tensor name, made
  // unique.
  std::string node_name(int t);
  std::string unique_name(const std::string& base);
  // Marks a later op as lifted already (its outputs mapped by a pattern that spans it).
  void mark_lifted(int op) { lifted_[static_cast<size_t>(op)] = true; }
  int op_index() const { return op_index_; }

 private:
  void lift_op();
  void add_inputs();
  void add_outputs();
  void check_shapes() const;

  const tfl::Program& p_;
  Graph g_;
  std::vector<Value> values_;  // by tensor index; node -1 = not an activation reached yet
  std::vector<int> consumers_; // ops (and program outputs) reading each tensor
  std::vector<std::string> used_names_;
  std::vector<bool> lifted_;   // by op index: mapped by a pattern lifted at an earlier op
  int op_index_ = -1;
};

// The Graph shape of a program tensor: without the leading batch dimension of 1.
Shape unbatched(const tfl::Shape& s);
// NumPy broadcasting of a constant operand (tflite_lift_attention.cpp): whether `from` stretches
// to `to` (right-aligned, unit axes stretched), and the row-major index into `from` of each
// element of `to`.
bool broadcasts(const tfl::Shape& from, const tfl::Shape& to);
std::vector<size_t> broadcast_index(const tfl::Shape& from, const tfl::Shape& to);
// The values of an int32 constant operand (refuses a missing or non-constant one).
std::vector<int32_t> int_constant(Lifter& l, int t, const char* what);

// Per op family; each reads lifter.op() and maps its outputs.
void lift_fully_connected(Lifter& l);
void lift_activation(Lifter& l);
void lift_binary(Lifter& l);
void lift_concatenation(Lifter& l);
void lift_layout(Lifter& l);        // RESHAPE, EXPAND_DIMS, SQUEEZE
void lift_pad(Lifter& l);
void lift_conv2d(Lifter& l);
void lift_pool2d(Lifter& l);
void lift_mean(Lifter& l);
void lift_sequence_lstm(Lifter& l);
void lift_loop(Lifter& l);  // WHILE: a Keras LSTM loop the interpreter's rewrite lowered, or a GRU loop
void lift_reverse(Lifter& l);  // REVERSE_V2 of a sequence's time axis
void lift_strided_slice(Lifter& l);
// Attention's ops (tflite_lift_attention.cpp): TRANSPOSE, BATCH_MATMUL of two activations,
// SELECT_V2 with a constant condition; formats/attention_fusion.hpp folds them afterwards.
void lift_transpose(Lifter& l);
void lift_batch_matmul(Lifter& l);
void lift_select(Lifter& l);
// LayerNormalization as the converter spells it from a MEAN over the channels (MEAN, NEG,
// SQUARED_DIFFERENCE, MEAN, ADD eps, RSQRT, MUL gamma, MUL, MUL, ADD beta, ADD): one LayerNorm
// node, its ops marked lifted. Returns false when the MEAN does not start that pattern.
bool lift_layer_norm(Lifter& l);

}  // namespace tickinfer::formats::lift
