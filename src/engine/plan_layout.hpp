#pragma once
// The compiled form of a Keras graph: a flat list of steps over one arena. Everything here is
// decided at compile time (engine/graph_compiler.cpp: shapes, offsets, packed weights, kernel
// function pointers); GraphPlan::run (engine/graph_plan_run.cpp) only walks the list.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/aligned_buffer.hpp"
#include "kernels/kernel_set.hpp"
#include "kernels/sparse_panels.hpp"
#include "model/graph.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer::engine {

// Where a tensor lives: buffer 0 is the plan's arena, buffer 1 + i is the caller's input i.
// offset is in floats.
struct TensorRef {
  uint32_t buf = 0;
  uint32_t offset = 0;
};

enum class StepKind : uint8_t {
  Dense,         // rows x gemv(in[r], in_width, kernel, out_width, bias) -> out[r], clamped
  Activation,    // elementwise act over out_width floats, in -> out
  Softmax,       // rows x softmax over out_width
  Affine,        // rows x (in * scale + shift) over out_width (unfolded BatchNorm)
  LayerNorm,     // rows x layer_norm over out_width
  Lstm,          // stream mode: one step over [x | h] with stacked [W; U], see run_lstm
  LstmWindow,    // window mode: input projection for all steps, then h U per step
  Gru,           // reset_after = true
  GruClassic,    // reset_after = false
  Conv1D,
  MaxPool,
  AvgPool,
  GlobalAvgPool,
  GlobalMaxPool,
  Add,
  Sub,
  Mul,
  Concat,
};

// Output positions of one Conv1D kernel call (KernelSet::gemm_chain rows); the step's scratch
// holds that many rows of gathered taps.
inline constexpr int kConvBlockRows = 8;

struct Step {
  StepKind kind{};
  std::string label;            // layer name, for describe()
  TensorRef in, out;
  TensorRef rhs;                // Add/Sub/Mul: the second operand (in is the first)
  std::vector<TensorRef> extra_inputs;  // Concat: all inputs; Add/Sub/Mul: inputs beyond two
  std::vector<int> concat_widths;       // Concat: per-input chunk width (floats)
  int rows = 1;                 // rows the step repeats over (Dense, Softmax, Affine, LayerNorm,
                                // Concat's outer blocks)
  int in_width = 0;             // floats per input row: Dense K; Lstm/Gru: input features per step
  // Floats per output row: Dense N, Lstm/Gru units (per time step), Conv1D filters,
  // Softmax/Affine/LayerNorm row width; Activation/Add/Sub/Mul: every element (one row).
  int out_width = 0;
  int steps = 1;                        // Lstm/Gru: time steps; Conv/Pool: output length
  int in_len = 0, in_ch = 0;            // Conv/Pool: input length and channels
  int window = 1, stride = 1, dilation = 1, pad_left = 0;
  // Weights: shared, read-only, owned by PackedWeights; "packed" = the kernels' gemv layout.
  const float* kernel = nullptr;        // packed: Dense/Conv1D kernel (BatchNorm folded), LSTM/GRU
                                        // input kernel W, stream-mode LSTM's stacked [W; U]
  const float* bias = nullptr;          // of `kernel` (GRU reset_after=true: the input bias)
  const float* recurrent_kernel = nullptr;    // packed U: LstmWindow, Gru; GruClassic: U's z|r columns
  const float* recurrent_kernel_h = nullptr;  // GruClassic: U's h columns, packed
  const float* recurrent_bias = nullptr;      // Gru: the recurrent bias
  const float* scale = nullptr;         // Affine: BatchNorm's per-channel scale; LayerNorm: gamma
  const float* shift = nullptr;         // Affine: BatchNorm's per-channel shift; LayerNorm: beta
  float clamp_lo = 0, clamp_hi = 0;     // Dense/Conv1D: the gemv clamp (a fused relu, or +-inf)
  float epsilon = 0;
  float cell_clip = 0;                 // Lstm/LstmWindow: clip c to +-cell_clip per step (0 = none)
  bool return_sequences = false;
  bool zero_state = true;               // window mode: recurrent state starts at zero each run
  ActivationSpec act, rec;
  uint32_t scratch = 0;                 // arena offset of step scratch
  uint32_t state = 0;                   // arena offset of recurrent state
  // The block-sparse forms the compiler chose for `kernel` / `recurrent_kernel` (sparse_choice.hpp);
  // nullptr: dense. The dense packed forms stay set (the rows path of a sparse step runs per row).
  const struct SparseWeights* sparse_kernel = nullptr;
  const struct SparseWeights* sparse_recurrent = nullptr;
  std::string sparse_note;              // describe(): each matrix's sparsity, form and why
};

// A matrix in the block-sparse form with the kernel chosen for the plan's ISA.
struct SparseWeights {
  kernels::SparsePanels panels;
  kernels::SparsePanelsView view;
  kernels::SparseGemvFn gemv = nullptr;
};

struct PackedWeights {
  std::vector<AlignedBuffer> buffers;
  std::vector<std::unique_ptr<SparseWeights>> sparse;
  const float* add(AlignedBuffer b) {
    buffers.push_back(std::move(b));
    return buffers.back().data();
  }
};

struct PlanLayout {
  std::vector<Step> steps;
  std::vector<TensorRef> outputs;
  std::vector<Shape> input_shapes, output_shapes;
  std::vector<std::pair<uint32_t, uint32_t>> state_ranges;  // arena (offset, floats) zeroed by reset
  size_t arena_floats = 0;
  int64_t flops = 0;         // per run(), see Plan::flops()
  int64_t weight_bytes = 0;  // per run(), see Plan::weight_bytes()
  RecurrentMode mode = RecurrentMode::Window;
  const kernels::KernelSet* kernels = nullptr;
};

}  // namespace tickinfer::engine
