#pragma once
// Lowering of a SavedModel's TensorFlow functions to the engine's Graph.
//
// The signature's function is evaluated abstractly, demand-driven from its outputs (so ops that do
// not feed an output, such as the step-0 copy Keras 3 RNNs compute outside their loop, are never
// looked at). Every TF tensor gets a TfValue: a constant (folded: shapes, weight arithmetic), a
// variable (its checkpoint value), or a value computed by a Graph node. Ops on node values become
// Graph nodes; patterns that span several ops (MatMul + BiasAdd, LayerNorm's moments, the
// ExpandDims / Conv2D / Squeeze of a Conv1D, a While loop running an LSTM cell) are carried by the
// value's extra fields until they complete. Anything not recognised throws an Error naming the op,
// the node and the function.
#include <array>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "formats/savedmodel/tf_tensor.hpp"
#include "model/graph.hpp"

namespace tensorflow {
class FunctionDef;
class GraphDef;
class NodeDef;
}

namespace tickinfer::formats {

// A variable-length (None) time axis is carried through the lowering as this size, so shape
// arithmetic folds to constants; Graph node shapes show it as -1 again. Models whose lowering
// computes other sizes from it (a valid Conv1D shortens it) are refused when compiled.
constexpr int64_t kUnknownDim = 9973;
inline int graph_dim(int64_t d) { return d == kUnknownDim ? -1 : static_cast<int>(d); }

// Per-row statistics of a node while a LayerNorm is being recognised (tf_lower_norm.cpp).
enum class NormStat : uint8_t { None, Mean, SquaredDev, Var, VarEps, InvStd, Sum };

// A dense feature a signature's ParseExampleV2 decodes from its serialized tf.Examples
// (tf.io.FixedLenFeature(shape, tf.float32, default_value)): one Graph input each.
struct TfDenseFeature {
  std::string key;
  std::vector<int64_t> shape;  // dense_shapes entry, without the batch dimension
  bool has_default = false;
  std::vector<double> default_value;  // element_count(shape) values when has_default
};

struct TfValue {
  // Examples: a signature's DT_STRING input of serialized tf.Examples, only read by ParseExampleV2.
  enum class Kind : uint8_t { Const, Resource, Node, Norm, List, Expr, Examples };
  Kind kind = Kind::Const;
  TfTensor tensor;               // Const, Resource (the variable's value)
  int node = -1;                 // Node: the producing Graph node; Norm: the normalised input
  std::vector<int64_t> shape;    // Node, Norm: the TF shape (batch dimension 1 first)
  bool fresh = false;            // Node: no other value uses `node`, so a bias/activation may fold in
  std::string origin;            // Node: the TF ops behind `node` so far
  // Conv1D input transforms awaiting their Conv2D (Pad, SpaceToBatchND), and a dilated conv
  // awaiting its BatchToSpaceND (conv >= 0).
  int64_t pad_left = 0, pad_right = 0, block = 1;
  int conv = -1;
  // The same for a dilated 2-D conv: SpaceToBatchND's [bh, bw] block and its paddings (top,
  // bottom, left, right) of the [batch, H, W, C] input; conv2 >= 0 awaits its BatchToSpaceND.
  std::array<int64_t, 2> block2{1, 1};
  std::array<int64_t, 4> pad2{0, 0, 0, 0};
  int64_t h = 0, w = 0;  // the input's H and W before SpaceToBatchND
  int conv2 = -1;
  // Norm: value = cx * x * inv + cm * mean(x) * inv + beta, inv = gamma / sqrt(var(x) + eps).
  NormStat stat = NormStat::None;
  double cx = 0, cm = 0, eps = 0;
  std::vector<double> gamma, beta;  // per channel; empty = 1 / 0
  // List: a TensorList. rnn >= 0: the outputs of recognised loop `rnn`; else the unstacked
  // time-major input sequence of node `node` (shape [T, 1, F]).
  // Expr: an elementwise function of node `node`, known by its values on the sample grid of
  // tf_lower_expr.cpp; fitted to an activation (or a scalar affine map) when used.
  std::shared_ptr<const std::vector<double>> samples;
  int rnn = -1;
  int rnn_output = 0;     // List of loop `rnn`: 0 the output list, 1 the final h, 2 the final c
  bool stacked = false;  // List of a loop's outputs after TensorListStack: shape [T, 1, units]
};

// A constant integer operand (paddings, block shapes, crops) or an Error naming `what`
// (tf_lower_conv.cpp).
std::vector<int64_t> const_ints(const TfValue& v, const std::string& where, const char* what);

struct TfFrame;

class TfLowering {
 public:
  TfLowering(const tensorflow::GraphDef& graph, std::string label);
  ~TfLowering();

  // Adds an Input node for a signature input (TF shape with -1 batch) and returns its value.
  TfValue add_input(const std::string& name, const std::vector<int64_t>& tf_shape);
  // A frame for library function `fn` called on `args`; its outputs are evaluated by result().
  TfFrame& call(const std::string& fn, const std::vector<TfValue>& args, int depth);
  // Output `index` of the called function (evaluated once, on first demand).
  TfValue result(TfFrame& callee, int index, int depth);
  int result_count(const TfFrame& callee) const;
  // A Graph node computing `v` with its TF shape minus the batch dimension (adding a Reshape
  // where the node's shape differs). `where` names the consumer for errors.
  int materialize(const TfValue& v, const std::string& where);

  Graph& graph() { return graph_; }
  const std::string& label() const { return label_; }
  // The features ParseExampleV2 made Graph inputs of, in Graph input order (tf_lower_example.cpp).
  const std::vector<TfDenseFeature>& dense_features() const { return dense_features_; }

  // Used by the op handlers (tf_lower_*.cpp).
  struct Op {
    TfFrame& frame;
    const tensorflow::NodeDef& def;
    std::vector<TfValue> in;  // data inputs
    std::string where;        // "<label>: function 'f': node 'n' (Op)"
    int depth;
  };
  int add_node(Node node);
  TfValue node_value(int node, std::vector<int64_t> shape, const std::string& origin);
  bool single_use(const Op& op, size_t input) const;
  bool sole_user(const Op& op, const TfValue& x) const;  // x is fresh and op its only consumer

 private:
  std::vector<TfValue> eval_node(TfFrame& frame, const std::string& name, int depth);
  TfValue value_of(TfFrame& frame, const std::string& ref, int depth);
  std::vector<TfValue> lower(Op& op);
  void assigned_before_read(const Op& read, TfTensor& value);

  std::vector<TfValue> lower_elementwise(Op& op);
  std::vector<TfValue> lower_binary(Op& op);
  std::vector<TfValue> lower_matmul(Op& op);
  // A Dense over the last axis of `x` with kernel `w` [in, units] (tf_lower_ops.cpp).
  TfValue add_dense(const Op& op, const TfValue& x, const TfTensor& w, const std::string& origin);
  // Products of two computed tensors and the other steps of an attention chain as the exporters
  // spell them (tf_lower_attention.cpp): BatchMatMul, Einsum, a Transpose that moves data, a
  // Select by a constant mask and a constant that varies along more than the last axis, each as
  // generic Graph nodes for formats::fuse_attention to fold.
  std::vector<TfValue> lower_batch_matmul(Op& op);
  std::vector<TfValue> lower_einsum(Op& op);
  std::vector<TfValue> lower_select(Op& op);
  // `x` with its TF axes reordered (output axis i = input axis perm[i]): a relabelling where only
  // unit axes move, else a Permute node (the batch axis must stay first).
  TfValue permuted(const Op& op, const TfValue& x, const std::vector<int64_t>& perm, const std::string& name);
  // x op c as an Add or Multiply node with a Constant node holding c broadcast to x's shape.
  TfValue add_constant_operand(const Op& op, const TfValue& x, const TfTensor& c, OpKind kind);
  TfValue product(const Op& op, const TfValue& a, const TfValue& b, const std::string& name);
  int add_permute(int input, const std::vector<int>& permutation, const std::string& name, const std::string& origin);
  TfValue einsum_dense(const Op& op, const std::string& equation);
  TfValue einsum_product(const Op& op, const std::string& equation);
  std::vector<TfValue> lower_shape_op(Op& op);
  std::vector<TfValue> lower_concat(Op& op);
  std::vector<TfValue> lower_reduce(Op& op);
  std::vector<TfValue> lower_conv_input(Op& op);
  TfValue add_pad(const Op& op, const TfValue& x, const std::vector<int64_t>& paddings);  // a Pad node
  std::vector<TfValue> lower_conv2d(Op& op);
  std::vector<TfValue> lower_batch_to_space(Op& op);
  std::vector<TfValue> lower_pool(Op& op);
  // 2-D convolution and pooling on [batch, H, W, C] (tf_lower_conv2d.cpp); is_conv2d_form tells
  // them from the Conv1D forms.
  bool is_conv2d_form(const Op& op) const;
  std::vector<TfValue> lower_conv2d_nhwc(Op& op);
  std::vector<TfValue> lower_pool2d_nhwc(Op& op);
  std::vector<TfValue> lower_space_to_batch2d(Op& op);
  std::vector<TfValue> lower_batch_to_space2d(Op& op);
  std::vector<TfValue> lower_fused_batch_norm(Op& op);
  std::vector<TfValue> lower_while(Op& op);
  std::vector<TfValue> lower_list_op(Op& op);
  std::vector<TfValue> lower_reverse(Op& op);        // tf_lower_rnn.cpp: ReverseV2 of the time axis
  std::vector<TfValue> lower_parse_example(Op& op);  // tf_lower_example.cpp
  std::vector<TfValue> lower_string_op(Op& op);      // tf_lower_example.cpp: ops on string constants
  bool lower_norm(Op& op, std::vector<TfValue>& out);
  bool lower_expr(Op& op, std::vector<TfValue>& out);
  TfValue fit_expr(const TfValue& e, const std::string& where);
  int look_through(int node, std::vector<double>& vals) const;
  TfValue add_channel_affine(const Op& op, const TfValue& x, const TfTensor& scale, const TfTensor& shift);
  TfValue apply_activation(const Op& op, const TfValue& x, ActivationSpec act);
  int finish_norm(const TfValue& v, const std::string& where);

  struct ConvRecord {
    int node;
    int64_t length, kernel, stride, dilation, pad_left, pad_right;
  };
  void resolve_conv_padding(ConvRecord& rec, const std::string& where);
  struct Conv2dRecord {
    int node;
    int64_t h, w;                 // input H, W
    std::array<int64_t, 4> pads;  // SpaceToBatchND's top, bottom, left, right
  };
  std::vector<Conv2dRecord> convs2_;
  struct RnnRecord;
  int rnn_node(int rnn, bool sequences, const std::string& where);
  int rnn_rows(int rnn, LstmOutput which);
  TfValue rnn_final_state(const TfValue& list, const std::string& where);

  const tensorflow::GraphDef& graph_def_;
  std::string label_;
  std::map<std::string, const tensorflow::FunctionDef*> functions_;
  Graph graph_;
  std::set<std::string> node_names_;
  std::vector<ConvRecord> convs_;
  std::vector<std::unique_ptr<RnnRecord>> rnns_;
  std::vector<std::unique_ptr<TfFrame>> frames_;
  std::vector<TfDenseFeature> dense_features_;
  std::set<std::string> pruned_layers_;  // tfmot wrappers whose mask multiply was folded
  // The LayerNorm node made for (input node, epsilon, gamma, beta): a normalisation every
  // consumer finishes on its own (attention's query, key and value projections) is one node.
  std::map<std::tuple<int, double, std::vector<double>, std::vector<double>>, int> finished_norms_;
};

}  // namespace tickinfer::formats
