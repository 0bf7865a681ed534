// A whole model as the CUDA graph form runs it: one step per lowered op, each a plain-old-data
// record (kernels take it by value), every tensor, state and scratch an offset into one float
// arena, every weight an offset into one float buffer. The engine fills it from its
// device-neutral lowering (engine/cuda_graph_plan.cpp); this module knows nothing of graphs or
// files, so the same program runs on a GPU (device_graph.cu) and, step body for step body, on
// the host (device_program_host.cpp), which is how machines without a GPU test it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tickinfer::cuda {

// The step kinds, one per lowered op kind the graph form runs (engine's StepKind).
enum class DevKind : int32_t {
  Dense,
  Activation,
  Softmax,
  Affine,
  LayerNorm,
  Lstm,        // stream mode: one step over [x | h] with the stacked [W; U]
  LstmWindow,  // every step's x W + b, then h U per step
  Gru,         // reset_after = true
  GruClassic,  // reset_after = false
  Conv1D,
  Conv2D,
  DepthwiseConv2D,
  MaxPool,
  AvgPool,
  GlobalAvgPool,
  GlobalMaxPool,
  MaxPool2D,
  AvgPool2D,
  Add,
  Sub,
  Mul,
  Concat,
  Attention,
  Pad,
  Transpose,
  Slice,
  MatMul,
  ReverseRows,  // rows x in_width floats, the rows last to first
  Count,
};

// ActKind's values (kernels/activation_spec.hpp), as the device compares them.
struct DevAct {
  int32_t kind = 0;
  float alpha = 0, beta = 0, max_value = 0, threshold = 0;
};

constexpr int kDevMaxInputs = 16;  // Concat inputs; Add/Sub/Mul operands beyond two
constexpr int kDevMaxRank = 8;     // Pad, Transpose

// Where an attention operand's head h, row r starts: col + h * width + r * ld.
struct DevOperand {
  int32_t col = 0, ld = 0;
};

struct DeviceStep {
  DevKind kind = DevKind::Dense;
  // Arena offsets (floats; a 16-bit tensor's count 16-bit units, cuda/tensor_view.hpp); -1: none.
  // State and scratch are always fp32.
  int64_t in = -1, out = -1, rhs = -1, state = -1, scratch = -1;
  int64_t extra[kDevMaxInputs] = {};
  int32_t n_extra = 0;
  // How each tensor the step reads or writes is stored (WeightFormat's values); any but fp32
  // makes the step run its Mixed instantiation (step_has_16bit_tensors).
  int32_t in_format = 0, rhs_format = 0, out_format = 0;
  int8_t extra_format[kDevMaxInputs] = {};
  // Weight-buffer offsets (floats); -1: none (a missing bias adds zero). The matrices (kernel,
  // recurrent, recurrent_h, depthwise) are stored in weight_format (cuda/half_bits.hpp's
  // WeightFormat): for fp16/bf16 their offsets count 16-bit units of the same buffer.
  int64_t kernel = -1, recurrent = -1, recurrent_h = -1, bias = -1, recurrent_bias = -1, scale = -1, shift = -1,
          depthwise = -1;
  int32_t weight_format = 0;
  // The op's sizes, as the lowering's OpParams names them.
  int32_t rows = 1, in_width = 0, out_width = 0, steps = 1, in_len = 0, in_ch = 0;
  int32_t window = 1, stride = 1, dilation = 1, pad_left = 0;
  int32_t in_w = 0, window_w = 1, stride_w = 1, dilation_w = 1, pad_w = 0, out_w = 0;
  float clamp_lo = 0, clamp_hi = 0, epsilon = 0, cell_clip = 0;
  // projected: LstmWindow's `in` holds x W + b per step ([T][4n]), or Gru/GruClassic's ([T][3n]),
  // computed by a Dense step before it over the whole grid (no kernel or bias then).
  bool return_sequences = false, zero_state = true, projected = false, initial_state = false, return_state = false;
  int32_t slice_offset = 0;
  DevAct act, rec;
  // Dense and the convolutions: an activation applied to each output after the clamp (an
  // in-place Activation op folded into its producer, one kernel fewer).
  DevAct epilogue;
  int32_t concat_widths[kDevMaxInputs] = {};
  // Attention.
  int32_t heads = 0, key_dim = 0, value_dim = 0, keys = 0, span = 0;
  bool causal = false, attention_stream = false;
  DevOperand q, k, v;
  // Pad and Transpose: the input's shape; Pad's before/after per axis; Transpose's permutation.
  int32_t rank = 0;
  int32_t in_shape[kDevMaxRank] = {};
  int32_t pads[2 * kDevMaxRank] = {};
  int32_t permutation[kDevMaxRank] = {};
};

struct DeviceRegion {
  int64_t offset = 0, floats = 0;
};

// A tensor of the arena: its region (in floats, whatever its format: a 16-bit tensor uses the
// first half), how it is stored, and the layer whose output it holds (its last writer: an
// activation folded into its product or written over its input names the tensor's layer).
struct DeviceTensor {
  int64_t offset = 0, floats = 0;
  int32_t format = 0;   // WeightFormat
  bool fp32_only = false;  // an input, an output, or a tensor a step accumulates into (attention)
  std::string layer;
};

struct DeviceProgram {
  std::string name;                    // the model, for messages
  std::vector<DeviceStep> steps;       // in run order
  std::vector<std::string> labels;     // per step: the layer's name
  std::vector<float> weights;          // every step's weights, one buffer
  int64_t arena_floats = 0;
  std::vector<DeviceRegion> inputs;    // where each caller input is copied before the steps
  std::vector<DeviceRegion> outputs;   // where each output is read after them
  std::vector<DeviceRegion> state;     // recurrent state kept between runs: zeroed on a reset
  std::vector<DeviceTensor> tensors;   // every tensor, in the order the arena holds them
};

// Whether any tensor the step reads or writes is stored in 16 bits.
bool step_has_16bit_tensors(const DeviceStep& s);

// Whether a step runs as one thread block that walks its time steps with block barriers
// (the recurrent steps, stream attention), or as independent items spread over a grid.
bool runs_as_one_block(const DeviceStep& s);
// The grid's work items of a step that does not run as one block.
int64_t step_items(const DeviceStep& s);
// Empty when every step's offsets lie inside the arena and the weights; else what is wrong.
std::string program_error(const DeviceProgram& p);

// Batched runs (several independent rows per launch): row b's tensors and scratch are the
// one-row arena's offsets from arena + b * row_stride_floats(p), a stride that keeps every row's
// arena 256-byte aligned. A step body never knows which row it runs: the GPU kernel and the host
// executor hand it its row's arena.
int64_t row_stride_floats(const DeviceProgram& p);
// Empty when the program can run rows side by side: one input, one output, no state carried from
// one run to the next (a stream plan's state belongs to one sequence). Else why not, as a sentence.
std::string why_not_batched(const DeviceProgram& p);

}  // namespace tickinfer::cuda
