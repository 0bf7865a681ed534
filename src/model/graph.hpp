#pragma once
// The model representation shared by every importer (Keras 3, Keras 2 .h5, later TFLite) and the
// compiler. A Graph is a DAG of Nodes in topological order; every node has exactly one output
// tensor. Shapes exclude the batch dimension (batch is always 1 at run time).
//
// Importers normalise Keras' many spellings into this form, so the compiler never sees a
// Keras-version difference. Weights keep Keras' own layouts (documented per op below); packing
// into kernel layouts is the compiler's job.
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "kernels/activation_spec.hpp"

namespace tickinfer {

using Shape = std::vector<int>;  // without the batch dimension, e.g. {10} or {32, 10}

enum class OpKind : uint8_t {
  Input,          // a model input; shape in Node::shape
  Dense,          // w[0] kernel (in, units), w[1] bias (units). Applies to the last axis.
  Activation,     // elementwise (or softmax over the last axis) by Node::activation
  BatchNorm,      // w = gamma, beta, moving_mean, moving_variance (each (C,)); epsilon. Last axis.
  LayerNorm,      // w = gamma, beta (each (C,)); epsilon. Normalises over the last axis.
  Identity,       // Dropout, GaussianNoise, ... : inference no-ops
  LSTM,           // w = kernel (in, 4u), recurrent (u, 4u), bias (4u); gate order i, f, c, o.
                  // Inputs: x [T, in], and optionally the initial state h0 [u], c0 [u] (Keras'
                  // initial_state; absent: zeros). return_state: the output carries the final
                  // cell state as one more row after the h rows (SliceRows takes them apart)
  GRU,            // w = kernel (in, 3u), recurrent (u, 3u), bias (2, 3u) if reset_after else (3u);
                  // gate order z, r, h
  Conv1D,         // w = kernel (k, in, filters), bias (filters)
  MaxPool1D,
  AvgPool1D,
  GlobalAvgPool1D,
  GlobalMaxPool1D,
  Flatten,
  Reshape,        // target_shape
  Add,
  Subtract,       // exactly two inputs: in0 - in1
  Multiply,
  Concatenate,    // along Node::axis
  Conv2D,         // w = kernel (kh, kw, in, filters), bias (filters); input [H, W, C] (channels
                  // last); kernel_size/stride/dilation are the height axis', *_w the width's
  MaxPool2D,      // [H, W, C] -> [H', W', C]: pool_size/pool_stride are the height axis',
  AvgPool2D,      // pool_w/pool_stride_w the width's
  // Keras MultiHeadAttention over [T, d] queries and [S, *] values (and keys): inputs query,
  // value(, key; absent: the value). w = query kernel (d, h, k), query bias (h, k), key kernel
  // (d_key, h, k), key bias (h, k), value kernel (d_value, h, v), value bias (h, v), output
  // kernel (h, v, units), output bias (units); h = num_heads, k = key_dim, v = value_dim.
  // Scores scaled by 1 / sqrt(k); causal_mask: query row i sees value rows j <= i.
  MultiHeadAttention,
  Constant,       // no inputs; w[0] = the value (its shape is the output's): a Keras 3 operation's
                  // array argument (`x + table`), broadcast to the other operand's shape
  Pad,            // zeros around the input: pads = before, after per un-batched axis
  Permute,        // output axis i = input axis permutation[i] (un-batched, 0-based)
  // Per input channel c, depth_multiplier outputs c * m + j over the (kh x kw) window, as Conv2D
  // slides it: w = kernel (kh, kw, C, m), bias (C * m).
  DepthwiseConv2D,
  // The depthwise step without a bias, then a 1 x 1 convolution: w = depthwise kernel
  // (kh, kw, C, m), pointwise kernel (1, 1, C * m, units), bias (units).
  SeparableConv2D,
  // A product of two computed tensors, [..., M, K] x [..., K, N] -> [..., M, N] over the same
  // leading axes (TF BatchMatMul, ONNX MatMul, TFLite BATCH_MATMUL, an attention Einsum). The
  // importers write attention in these terms; formats/attention_fusion.hpp folds the pattern
  // into a MultiHeadAttention node; a MatMul left outside it (Keras' Dot, a Luong attention's
  // scores and context) runs as a product step of its own.
  MatMul,
  // Rows [slice_begin, slice_end) of the input's first axis, Python-style: a negative begin
  // counts from the end, an end <= 0 is that many rows before the end (0: the end), so a slice
  // holds for any sequence length. With keepdims false and one row, that axis is dropped. How one
  // output of a multi-output layer is taken from the node that computes them together (LSTM
  // return_state: the sequence, state_h, state_c).
  SliceRows,
  // The input's first (time) axis in reverse order, the rest as they are: how a recurrent layer
  // that goes backwards (Keras go_backwards, Bidirectional's backward layer) is written, the
  // layer's own node running forwards between two of these. Needs the whole window.
  ReverseTime,
};

enum class Padding : uint8_t { Valid, Same, Causal };

struct Weight {
  Shape shape;              // Keras' shape, row-major
  std::vector<float> data;  // size == product(shape)
};

struct Node {
  std::string name;          // the Keras layer name; a shared layer called k > 0 more times
                             // adds nodes named "<name>#<k>" (unique in the graph)
  std::string keras_class;   // e.g. "Dense", for error messages and `inspect`
  // For importers of non-Keras formats (SavedModel, ONNX): the source ops this node was lowered
  // from, e.g. "MatMul+BiasAdd 'sequential/dense/MatMul'", shown by `inspect`. Empty for Keras.
  std::string origin;
  OpKind kind = OpKind::Identity;
  std::vector<int> inputs;   // indices of producer nodes (earlier in Graph::nodes)
  // Output shape. Importers set it for Input nodes (-1 marks an unknown dimension such as a
  // variable sequence length: the compiler substitutes the window length); infer_shapes sets
  // the rest.
  Shape shape;

  ActivationSpec activation;            // fused output activation (Dense, Conv1D, LSTM/GRU "activation")
  ActivationSpec recurrent_activation;  // LSTM/GRU gate activation
  int units = 0;                        // Dense, LSTM, GRU
  bool return_sequences = false;        // LSTM, GRU
  bool reset_after = true;              // GRU
  bool return_state = false;            // LSTM: the final cell state follows as one more row
  // LSTM: the cell state is clipped to [-cell_clip, cell_clip] after each update, as TFLite's
  // fused LSTM does (tf_keras conversions write 10); 0 = no clipping (every Keras LSTM).
  float cell_clip = 0.0f;
  int kernel_size = 1, stride = 1, dilation = 1;  // Conv1D; Conv2D's height axis
  int kernel_w = 1, stride_w = 1, dilation_w = 1; // Conv2D's width axis
  int pool_size = 1, pool_stride = 1;             // pooling; 2-D pooling's height axis
  int pool_w = 1, pool_stride_w = 1;              // 2-D pooling's width axis
  int num_heads = 0, key_dim = 0, value_dim = 0;  // MultiHeadAttention (output width: units)
  bool causal_mask = false;                       // MultiHeadAttention called with use_causal_mask
  // MultiHeadAttention's sliding_window: query row i sees key rows j with |i - j| < span (with
  // causal_mask: the last span rows up to i); 0 = every row.
  int attention_span = 0;
  std::vector<int> pads;                          // Pad: before, after per un-batched axis
  std::vector<int> permutation;                   // Permute
  int depth_multiplier = 1;                       // DepthwiseConv2D, SeparableConv2D
  Padding padding = Padding::Valid;               // Conv1D, pooling
  bool keepdims = false;                          // global pooling, SliceRows
  int slice_begin = 0, slice_end = 0;             // SliceRows
  // Concatenate axis as Keras writes it: counting the batch axis (1 = first un-batched axis),
  // negative from the end. infer_shapes rewrites a negative one to that positive form.
  int axis = -1;
  float epsilon = 1e-3f;                          // BatchNorm, LayerNorm
  Shape target_shape;                             // Reshape (may contain one -1)
  std::vector<Weight> weights;                    // see OpKind
};

// A SliceRows node's [begin, end) in an input of `rows` rows (negative bounds resolved; not
// checked: infer_shapes does that).
inline std::pair<int64_t, int64_t> slice_rows_bounds(const Node& n, int rows) {
  return {n.slice_begin < 0 ? int64_t{rows} + n.slice_begin : n.slice_begin,
          n.slice_end > 0 ? n.slice_end : int64_t{rows} + n.slice_end};
}

// The outputs an LSTM with return_state computes together, as the node's rows [h rows | c]: the
// layer's output (every step's h with return_sequences, else the last), state_h, state_c.
enum class LstmOutput : uint8_t { Output, StateH, StateC };

// A SliceRows node taking `which` out of such an LSTM node (kind, bounds and keepdims set; the
// caller names and wires it). `sequences`: the LSTM returns every step's h.
inline Node lstm_output_slice(LstmOutput which, bool sequences) {
  Node s;
  s.kind = OpKind::SliceRows;
  const bool all_h = which == LstmOutput::Output && sequences;
  s.keepdims = all_h;
  s.slice_begin = all_h ? 0 : which == LstmOutput::StateC ? -1 : -2;
  s.slice_end = which == LstmOutput::StateC ? 0 : -1;
  return s;
}

struct Graph {
  std::string name;
  std::string source_format;   // "keras3", "keras2-h5", "savedmodel", "onnx", "tflite" (lifted)
  // Served names of the model outputs, parallel to `outputs`, where the format names them apart
  // from the producing node (a SavedModel signature's "output_0", an ONNX graph output). Empty:
  // the output nodes' names.
  std::vector<std::string> output_names;
  std::vector<Node> nodes;     // topological order
  std::vector<int> inputs;     // node indices of OpKind::Input nodes, in model input order
  std::vector<int> outputs;    // node indices whose outputs are the model outputs, in order
  // Notices of the importer about a file it loaded but that was probably not saved as meant
  // (e.g. tfmot pruning wrappers left in): one sentence each, without the file name. The model
  // loads and runs as the framework would run it; front ends print these (`tickinfer: warning:`).
  std::vector<std::string> warnings;
};

// Fills Node::shape for every non-Input node and validates each op's parameters and weight
// shapes against its input shapes. Throws tickinfer::Error naming the layer on any mismatch.
void infer_shapes(Graph& graph);

const char* op_name(OpKind kind);
const char* activation_name(ActKind kind);
int64_t shape_size(const Shape& shape);
std::string shape_str(const Shape& shape);

}  // namespace tickinfer
