#pragma once
// The tensor-program representation of quantized and TFLite models: typed tensors (float32,
// int8, int16, int32, bf16 ...) with quantization parameters, and a list of ops in execution
// order. TFLite files load into it one to one (formats/tflite/tflite_*); `tickinfer quantize` builds
// one from a float model with a precision per layer; the tickinfer model file (.tkq) stores
// one. The interpreter (tflite/interpreter.hpp) prepares it into an allocation-free plan.
//
// Unlike Graph (model/graph.hpp), shapes here include the batch dimension exactly as the file
// gives it (TFLite keeps [1, ...]); the interpreter runs batch 1 only.
#include <cstdint>
#include <string>
#include <vector>

namespace tickinfer::tfl {

using Shape = std::vector<int>;

// Numbering follows TFLite's TensorType so loader and saver need no table.
enum class DType : uint8_t {
  F32 = 0,
  F16 = 1,
  I32 = 2,
  U8 = 3,
  I64 = 4,
  Bool = 6,
  I16 = 7,
  I8 = 9,
  Resource = 13,  // a resource-variable handle (VAR_HANDLE's output, shape []): no data of its own
  BF16 = 18,
};
const char* dtype_name(DType t);
size_t dtype_size(DType t);  // bytes per element

// real = scale * (q - zero_point). One entry: per-tensor; several: per-axis along `axis`.
struct QuantParams {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  int axis = 0;
  bool empty() const { return scale.empty(); }
  bool per_axis() const { return scale.size() > 1; }
};

struct Tensor {
  std::string name;
  DType type = DType::F32;
  Shape shape;
  QuantParams quant;
  // Constant data (weights, biases, shape operands), little-endian, size == elements * dtype_size.
  // Empty for activations.
  std::vector<uint8_t> data;
  bool is_variable = false;  // recurrent state (TFLite is_variable): zeroed by reset, kept between steps
  // The file stored this constant with TFLite sparsity metadata (Tensor.sparsity), decoded to the
  // dense `data` at load. TFLite then runs FULLY_CONNECTED on its sparse kernels, whose
  // requantization rounds differently from the dense one (ops/op_support.hpp, rounding()).
  bool sparse_in_file = false;
  bool is_constant() const { return !data.empty(); }
};

// The ops the interpreter runs. Names and operand orders are TFLite's builtin ops, so a TFLite
// file maps one to one; comments give what differs.
enum class OpCode : uint16_t {
  FullyConnected,   // in, filter [units, in], bias (opt) -> out
  SequenceLstm,     // UNIDIRECTIONAL_SEQUENCE_LSTM: 24 inputs (TFLite order), intermediates for int8
  Conv2D,           // in NHWC, filter [oc, kh, kw, ic], bias
  DepthwiseConv2D,  // filter [1, kh, kw, oc]
  MaxPool2D,
  AveragePool2D,
  Quantize,         // float -> int8, or int8 -> int8 requantize
  Dequantize,       // int8/int16/f16 -> float
  Logistic,
  Tanh,
  Relu,
  Relu6,
  LeakyRelu,
  Softmax,
  Add,
  Sub,
  Mul,
  SquaredDifference,
  Rsqrt,
  Mean,             // in, axes (int32 const) -> out
  Sum,
  Concatenation,
  Reshape,          // in, shape (opt) -> out: a copy (layouts are row-major)
  ExpandDims,
  Squeeze,
  StridedSlice,     // in, begin, end, strides (int32 const)
  Pad,              // in, paddings (int32 const [rank, 2])
  Transpose,
  Gather,
  Split,
  Pack,
  Unpack,
  SpaceToBatchNd,
  BatchToSpaceNd,
  Gelu,
  HardSwish,
  Elu,
  Exp,
  Neg,
  Abs,
  Maximum,
  Minimum,
  Div,
  Sqrt,
  Log,
  Square,
  BatchMatMul,      // a, b (either may be runtime); adj_x/adj_y transpose the last two dims; batch dims broadcast
  // Control flow and resource variables (the converter's output for Keras 3 recurrent and
  // stateful layers). Subgraph indices are the file's (1.. = Program::subgraphs[index - 1]).
  While,            // loop vars in = out; options cond_subgraph / body_subgraph
  CallOnce,         // no operands; runs init_subgraph on the first invoke after a reset
  VarHandle,        // -> resource handle; options container + shared_name name the variable
  ReadVariable,     // handle -> value
  AssignVariable,   // handle, value (no outputs)
  Less,             // a, b (broadcasting) -> bool
  LogicalAnd,       // bool a, bool b (broadcasting) -> bool
  Shape,            // in -> its shape as int32 (or int64: options.out_type)
  Slice,            // in, begin (may be runtime), size (-1 = to the end)
  DynamicUpdateSlice,  // operand, update, start indices (runtime, clamped) -> operand with update written at start
  ReduceProd,       // in (float, int32), axes (int32 const) -> product; keep_dims
  SelectV2,         // bool cond, x, y (broadcasting) -> cond ? x : y (the converter's attention mask)
  ReverseV2,        // in, axes (int32 const) -> in with those axes reversed (go_backwards, Bidirectional)
  // tickinfer's own, no TFLite builtin: a Keras GRU layer over the window as the converter's loop
  // body computes it (x, W, U, b_in, b_rec, h state -> every h_t; ops/sequence_gru.cpp).
  SequenceGru,
  SplitV,           // in, size_splits (int32 const, at most one -1), axis (int32 scalar) -> the parts
};
constexpr OpCode kLastOpCode = OpCode::SplitV;
const char* op_name(OpCode code);

enum class FusedActivation : uint8_t { None = 0, Relu = 1, ReluN1To1 = 2, Relu6 = 3, Tanh = 4, SignBit = 5 };
enum class PaddingMode : uint8_t { Same = 0, Valid = 1 };

// Per-layer precision chosen by the quantizer (or implied by a TFLite file's tensor types);
// shown by `tickinfer inspect`.
enum class Precision : uint8_t { F32, BF16, Int8Dynamic, Int8 };
const char* precision_name(Precision p);

// Every builtin option any supported op uses; an op reads only its own.
struct OpOptions {
  FusedActivation activation = FusedActivation::None;
  PaddingMode padding = PaddingMode::Valid;
  int stride_w = 1, stride_h = 1;
  int dilation_w = 1, dilation_h = 1;
  int filter_w = 1, filter_h = 1;  // pooling
  int depth_multiplier = 1;
  bool keep_num_dims = false;       // FULLY_CONNECTED
  bool asymmetric_quantize_inputs = false;  // hybrid FC / LSTM / conv
  bool keep_dims = false;           // MEAN, SUM
  bool time_major = false;          // SequenceLstm, SequenceGru
  bool reset_after = true;          // SequenceGru: Keras' reset_after (false: r multiplies h before U_h)
  // SequenceGru: tickinfer's own arithmetic (ops/sequence_gru_own.cpp: the graph engine's vector
  // sigmoid and tanh, the recurrent product's int8 sums scaled in one pass), not the converter
  // loop's op-by-op rounding; what `tickinfer quantize --mode int8|auto` writes, never a TFLite file.
  bool own_arithmetic = false;
  // SequenceLstm with int8 weights made from a dynamic-range Keras 3 LSTM loop (tflite/rewrite/
  // lstm_loop.cpp): computed as the loop body's ops compute it, not as TFLite's fused hybrid LSTM.
  bool keras_cell = false;
  // CONV_2D with a float output: the float LEAKY_RELU that alone read it was fused into it by the
  // interpreter (tflite/rewrite/program_fuse_leaky.cpp), alpha in `alpha` below.
  bool fused_leaky_relu = false;
  float cell_clip = 0.0f, proj_clip = 0.0f;  // SequenceLstm: 0 = no clipping
  float beta = 1.0f;                // SOFTMAX
  float alpha = 0.2f;               // LEAKY_RELU
  int axis = 0;                     // CONCATENATION, GATHER, PACK, UNPACK
  int num = 0;                      // SPLIT num_splits, PACK/UNPACK values_count
  int begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_axis_mask = 0;
  bool offset = false;              // STRIDED_SLICE
  std::vector<int> new_shape;       // RESHAPE (old files), SQUEEZE squeeze_dims
  bool adj_x = false, adj_y = false;  // BATCH_MATMUL
  bool approximate = false;         // GELU
  bool pot_scale_int16 = true;      // ADD/SUB int16
  int cond_subgraph = 0, body_subgraph = 0;  // WHILE; CALL_ONCE uses body_subgraph for its init subgraph
  // WHILE recognised as a whole recurrent layer by the interpreter (tflite/rewrite/lstm_loop.hpp): the
  // subgraph holding the fused op it runs instead of the loop; 0 = run the loop.
  int lowered_subgraph = 0;
  std::string container, shared_name;        // VAR_HANDLE
  DType out_type = DType::I32;               // SHAPE
};

struct Op {
  OpCode code{};
  std::vector<int> inputs;         // tensor indices; -1 = an optional input left out
  std::vector<int> outputs;
  std::vector<int> intermediates;  // int8 LSTM gate scales (TFLite Operator.intermediates)
  OpOptions options;
  std::string label;               // layer name it came from (for inspect / error tables)
  Precision precision = Precision::F32;
};

// A subgraph other than the main one: the cond and body of a WHILE, the init of a CALL_ONCE.
// Its ops and operands index Program::tensors like the main graph's (a TFLite file's
// per-subgraph tensors are appended one subgraph after the other).
struct Subgraph {
  std::string name;
  std::vector<Op> ops;               // execution order
  std::vector<int> inputs, outputs;  // tensor indices
};

struct Program {
  std::string name;
  std::string source_format;  // "tflite", "tickinfer"
  std::vector<Tensor> tensors;
  std::vector<Op> ops;        // execution order (the main graph, TFLite subgraph 0)
  std::vector<int> inputs, outputs;  // tensor indices
  // Lowered one tick per call (`tickinfer quantize --stream`): each sequence input is one time
  // step and the state tensors carry the recurrence from call to call, so the program means what
  // its source model means only in stream mode; a window-mode plan refuses it (a window of one
  // tick from a zero state would answer something else without a word). TFLite files: false.
  bool stream_only = false;
  // TFLite subgraphs 1.. (subgraphs[k - 1] is the file's subgraph k); empty for a single graph.
  std::vector<Subgraph> subgraphs;
  // The subgraph a WHILE / CALL_ONCE names (k >= 1), or nullptr when there is none.
  const Subgraph* subgraph(int k) const {
    return k >= 1 && static_cast<size_t>(k) <= subgraphs.size() ? &subgraphs[static_cast<size_t>(k) - 1] : nullptr;
  }
};

// Checks indices, shapes of constants against their data and per-op operand counts; throws
// tickinfer::Error naming the op (index, code, label) and the problem.
void validate(const Program& program);
int64_t element_count(const Shape& shape);

}  // namespace tickinfer::tfl
