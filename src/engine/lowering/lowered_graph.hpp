#pragma once
// The device-neutral half of compiling a Keras graph: the graph resolved for one recurrent mode
// and rewritten into the op forms every backend runs (engine/lowering/lower_for_plan.cpp):
//   - BatchNormalization folded into the Dense/Conv1D it follows (W' = W * scale, b' = b * scale +
//     shift) when that producer is linear and has no other consumer;
//   - a relu a clamp expresses exactly fused into its Dense/Conv1D (clamp_lo/hi), any other
//     activation kept as an in-place Activation op (in == out) right after it;
//   - LSTM: stream mode stacks [W; U] so one matrix product over [x | h] does both; window mode
//     keeps W (all steps at once) and U (the serial part) apart;
//   - GRU with reset_after = false: U split into its z|r columns and its h columns;
//   - Identity, Flatten, Reshape and linear Activation are no ops: their output is their input;
//   - a Constant is no op either: Add/Subtract/Multiply with a constant operand become an Affine
//     op (x * 1 + table, x * -1 + table, x * table + 0) holding it; MultiHeadAttention becomes Dense
//     projections around an Attention op.
// Weights stay float and row-major (K x N); packing, kernel and sparse choices, scratch and the
// arena are a backend's (the CPU one: engine/graph_plan_compile.cpp). Each op knows its tensors
// by id, and each tensor its lifetime in op indices, so a backend can reuse dead tensors' memory.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "model/graph.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer::engine {

// The op forms a lowered graph is made of, and the steps a backend runs (one step per op).
enum class StepKind : uint8_t {
  Dense,         // rows x (in[r] (in_width) . kernel (in_width x out_width) + bias) -> out[r], clamped
  Activation,    // elementwise act over out_width floats, in -> out
  Softmax,       // rows x softmax over out_width
  Affine,        // rows x (in * scale + shift) over out_width (unfolded BatchNorm)
  LayerNorm,     // rows x layer_norm over out_width
  Lstm,          // stream mode: one step over [x | h] with stacked [W; U]
  LstmWindow,    // window mode: input projection for all steps (or read, `projected`), then h U per step
  Gru,           // reset_after = true
  GruClassic,    // reset_after = false
  Conv1D,
  Conv2D,        // per output pixel: its (kh x kw x C) patch . kernel + bias, clamped
  MaxPool,
  AvgPool,
  GlobalAvgPool,
  GlobalMaxPool,
  MaxPool2D,     // [H, W, C]: the height axis in the 1-D fields, the width in the *_w ones
  AvgPool2D,
  Add,
  Sub,
  Mul,
  Concat,
  Attention,     // softmax(q k^T / sqrt(key_dim)) v per head (MultiHeadAttention's core; its four
                 // projections are Dense ops around it)
  Pad,           // zeros around an in_shape tensor: pads = before, after per axis
  Transpose,     // output axis i = in_shape axis permutation[i]
  DepthwiseConv2D,  // per output pixel and channel c*m + j: the window of input channel c . its
                    // taps (depthwise: (kh*kw) x (C*m), row-major) + bias, clamped; Conv2D's fields
  Slice,         // out_width floats from in + slice_offset (rows of a row-major tensor)
  MatMul,        // steps x (in [rows, in_width] . rhs [in_width, out_width]), both computed
  ReverseRows,   // rows x in_width floats, the rows in reverse order (a time axis read backwards)
};

// Where an Attention op finds each head's q, k and v: column col + head * width of row r at
// r * ld floats (q rows are the queries, k and v rows the keys and values), so the projections
// may share one tensor (self-attention: one Dense computes [q | k | v]).
struct AttentionOperand {
  int col = 0, ld = 0;
};
struct AttentionParams {
  int heads = 0, key_dim = 0, value_dim = 0;
  int keys = 0;                 // S: key and value rows (the query rows are OpParams::steps)
  bool causal = false;          // query row i sees key rows j <= i
  int span = 0;                 // and only those with |i - j| < span (sliding_window; 0: all)
  // Stream mode (one query row per run, causal, span > 0): the key and value rows of the last
  // span runs are kept in the step's state, a ring; the step attends over them.
  bool stream = false;
  AttentionOperand q, k, v;     // output: [steps, heads * value_dim], head after head
};

// What an op is, apart from where its tensors and weights live: shared by the lowered op and the
// CPU plan's Step, so the backend copies it whole instead of field by field.
struct OpParams {
  StepKind kind{};
  std::string label;            // layer name, for describe() and errors
  std::vector<int> concat_widths;  // Concat: per-input chunk width (floats)
  int rows = 1;                 // rows the op repeats over (Dense, Softmax, Affine, LayerNorm,
                                // Concat's outer blocks)
  int in_width = 0;             // floats per input row: Dense K; Lstm/Gru: input features per step
  // Floats per output row: Dense N, Lstm/Gru units (per time step), Conv1D filters,
  // Softmax/Affine/LayerNorm row width; Activation/Add/Sub/Mul: every element (one row).
  int out_width = 0;
  int steps = 1;                        // Lstm/Gru: time steps; Conv/Pool: output length
  int in_len = 0, in_ch = 0;            // Conv/Pool: input length and channels
  int window = 1, stride = 1, dilation = 1, pad_left = 0;
  // Conv2D: the fields above are its height axis (in_len = H, steps = output height, pad_left =
  // the top padding); these its width axis.
  int in_w = 0, window_w = 1, stride_w = 1, dilation_w = 1, pad_w = 0, out_w = 0;
  float clamp_lo = -std::numeric_limits<float>::infinity();  // Dense/Conv1D: a fused relu, or +-inf
  float clamp_hi = std::numeric_limits<float>::infinity();
  float epsilon = 0;
  float cell_clip = 0;                  // Lstm/LstmWindow: clip c to +-cell_clip per step (0 = none)
  bool return_sequences = false;
  bool zero_state = true;               // window mode: recurrent state starts at zero each run
  bool projected = false;               // LstmWindow: `in` holds x W + b per step ([T, 4n]), no kernel
  // LstmWindow: extra_inputs = {h0, c0} start the state instead of zeros; return_state: the final
  // c follows the h rows in `out` as one more row.
  bool initial_state = false, return_state = false;
  int slice_offset = 0;                 // Slice: floats into `in`
  ActivationSpec act, rec;
  AttentionParams attention;            // Attention only
  Shape in_shape;                       // Pad, Transpose: the input's shape
  std::vector<int> pads;                // Pad: before, after per axis
  std::vector<int> permutation;         // Transpose
  std::vector<float> depthwise;         // DepthwiseConv2D: the taps, (kh * kw) x (C * m)
};

// A row-major float matrix (rows x cols); empty when the op has none.
struct Matrix {
  int rows = 0, cols = 0;
  std::vector<float> data;
  bool empty() const { return data.empty(); }
};

struct LoweredOp : OpParams {
  int in = -1, out = -1;   // tensor ids
  int rhs = -1;            // Add/Sub/Mul: the second operand
  std::vector<int> extra_inputs;  // Concat: all inputs; Add/Sub/Mul: inputs beyond two; LstmWindow: h0, c0
  // Dense/Conv1D: kernel (BatchNorm folded; Conv1D as (taps x channels) x filters); LSTM/GRU: W,
  // or stream-mode LSTM's stacked [W; U]. recurrent_kernel: U (LstmWindow, Gru), U's z|r columns
  // (GruClassic); recurrent_kernel_h: GruClassic's h columns of U.
  Matrix kernel, recurrent_kernel, recurrent_kernel_h;
  std::string kernel_name;  // how describe() and sparse notes name `kernel` ("kernel", "[kernel; recurrent_kernel]")
  std::vector<float> bias;            // of `kernel` (Gru: the input bias)
  std::vector<float> recurrent_bias;  // Gru: the recurrent bias
  std::vector<float> scale, shift;    // Affine: BatchNorm's per-channel scale and shift; LayerNorm: gamma, beta
};

struct LoweredTensor {
  Shape shape;
  int64_t floats = 0;
  int input = -1;   // >= 0: the caller's input with this index (not the backend's memory)
  // Lifetime in op indices, [first, last]: first = the producing op, last = the last op reading
  // it; a graph output lives to the end (ops.size()).
  int first = -1, last = -1;
};

struct LoweredGraph {
  RecurrentMode mode = RecurrentMode::Window;
  std::vector<LoweredOp> ops;  // in run order
  std::vector<LoweredTensor> tensors;
  std::vector<int> outputs;              // tensor ids, in the graph's output order
  std::vector<Shape> input_shapes;       // as the caller feeds them (stream mode: one step, [F])
  std::vector<Shape> output_shapes;
};

// `src` with unknown sequence lengths set to options.window_length and, in stream mode, every
// sequence input one step long; shapes inferred (and, in stream mode, checked streamable). In
// window mode recurrent twins share one recurrence (share_recurrent_twins).
Graph resolve_for_mode(const Graph& src, const CompileOptions& opt);

// Window mode: a recurrent node that runs the same layer (kind, input, weights and options) as an
// earlier node becomes an Identity of it where both return the same, or a SliceRows of its last
// row where the earlier one returns the sequence and this one the last step, so the recurrence
// runs once. Returns how many were shared. (Stream mode keeps them: a time-axis slice does not
// stream.)
int share_recurrent_twins(Graph& g);

// Resolves `graph` for options.mode (unknown sequence lengths become options.window_length;
// stream mode feeds one step) and lowers it. Throws tickinfer::Error (an unknown length without a
// window length, stream mode on a model that is not streamable).
LoweredGraph lower_for_plan(const Graph& graph, const CompileOptions& options);

}  // namespace tickinfer::engine
