#pragma once
// The compiled form of a model: a flat list of steps over one arena. Everything here is decided
// at compile time (shapes, offsets, packed weights, kernel function pointers); Plan::run only
// walks the list.
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "engine/aligned_buffer.hpp"
#include "engine/program_plan.hpp"
#include "kernels/kernel_set.hpp"
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
  Dense,         // rows x gemv(in[r], k, w, n, bias) -> out[r], clamp lo..hi
  Activation,    // elementwise act over n floats, in -> out
  Softmax,       // rows x softmax over n
  Affine,        // rows x (in * scale + shift) over n (unfolded BatchNorm)
  LayerNorm,     // rows x layer_norm over n
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

struct Step {
  StepKind kind{};
  std::string label;            // layer name, for describe()
  TensorRef in, in2, out;
  std::vector<TensorRef> extra_inputs;  // Concat: all inputs; Add/Mul: inputs beyond two
  std::vector<int> concat_widths;       // Concat: per-input chunk width (floats)
  int rows = 1, k = 0, n = 0;           // meaning per kind (see compiler)
  int steps = 1;                        // Lstm/Gru: time steps; Conv/Pool: output length
  int in_len = 0, in_ch = 0;            // Conv/Pool: input length and channels
  int window = 1, stride = 1, dilation = 1, pad_left = 0;
  const float* w0 = nullptr;            // packed weights (shared, read-only)
  const float* w1 = nullptr;            // bias / second packed matrix
  const float* w2 = nullptr;
  const float* w3 = nullptr;
  float lo = 0, hi = 0;                 // gemv clamp
  float epsilon = 0;
  bool return_sequences = false;
  bool zero_state = true;               // window mode: recurrent state starts at zero each run
  ActivationSpec act, rec;
  uint32_t scratch = 0;                 // arena offset of step scratch
  uint32_t state = 0;                   // arena offset of recurrent state
};

struct PackedWeights {
  std::vector<AlignedBuffer> buffers;
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

namespace tickinfer {
struct Plan::Impl {
  // Set for TFLite and tickinfer-quantized models (a tfl::Program); the float step list
  // below is then unused.
  std::unique_ptr<engine::ProgramPlan> program;
  std::shared_ptr<const engine::PackedWeights> weights;
  std::shared_ptr<const engine::PlanLayout> layout;
  engine::AlignedBuffer arena;
  std::vector<float*> bufs;  // [arena, input 0, input 1, ...]; sized at compile time
  // run_rows: two ping-pong buffers of max_rows x the widest step output (reserve_rows).
  engine::AlignedBuffer rows_buf[2];
  int max_rows = 0;
};
}  // namespace tickinfer
