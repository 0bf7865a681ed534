#pragma once
// The compiled CPU form of a Keras graph: a flat list of steps over one arena. Everything here is
// decided at compile time (engine/graph_plan_compile.cpp, from the lowered graph: offsets planned
// by tensor lifetimes, packed weights, kernel function pointers); GraphPlan::run
// (engine/graph_plan_run.cpp) only walks the list.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/aligned_buffer.hpp"
#include "kernels/kernel_set.hpp"
#include "kernels/sparse_panels.hpp"
#include "engine/lowering/lowered_graph.hpp"
#include "model/graph.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer::engine {

// Where a tensor lives: buffer 0 is the plan's arena, buffer 1 + i is the caller's input i, and
// in incremental plans each kept tensor has a slot after those (KeptTensor). offset is in floats.
struct TensorRef {
  uint32_t buf = 0;
  uint32_t offset = 0;
};

// Output positions of one Conv1D kernel call (KernelSet::gemm_chain rows); the step's scratch
// holds that many rows of gathered taps.
inline constexpr int kConvBlockRows = 8;

// One step of the plan: a lowered op (its OpParams, engine/lowering/lowered_graph.hpp) with its
// tensors placed and its weights packed.
struct Step : OpParams {
  const struct StepOps* ops = nullptr;  // how this kind runs, costs and describes itself (engine/steps/)
  TensorRef in, out;
  TensorRef rhs;                        // Add/Sub/Mul: the second operand (in is the first)
  std::vector<TensorRef> extra_inputs;  // Concat: all inputs; Add/Sub/Mul: inputs beyond two; LstmWindow: h0, c0
  // Weights: shared, read-only, owned by PackedWeights; "packed" = the kernels' gemv layout.
  const float* kernel = nullptr;        // packed: Dense/Conv1D kernel (BatchNorm folded), LSTM/GRU
                                        // input kernel W, stream-mode LSTM's stacked [W; U]
  const float* bias = nullptr;          // of `kernel` (GRU reset_after=true: the input bias)
  const float* recurrent_kernel = nullptr;    // packed U: LstmWindow, Gru; GruClassic: U's z|r columns
  const float* recurrent_kernel_h = nullptr;  // GruClassic: U's h columns, packed
  const float* recurrent_bias = nullptr;      // Gru: the recurrent bias
  const float* scale = nullptr;         // Affine: BatchNorm's per-channel scale; LayerNorm: gamma
  const float* shift = nullptr;         // Affine: BatchNorm's per-channel shift; LayerNorm: beta
  const float* depthwise = nullptr;     // DepthwiseConv2D: its taps as lowered (not packed)
  uint32_t scratch = 0;                 // arena offset of step scratch (live during this step only)
  uint32_t state = 0;                   // arena offset of recurrent state (never shared)
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

// Incremental window updates (CompileOptions::incremental, engine/lowering/incremental_rows.hpp):
// what a step does when the window slid by one row since the last run.
struct IncrementalStep {
  bool on = false;           // else: step runs whole; `why` says why
  std::string why;
  int rows = 0, front = 0, back = 0;
  Step front_step, back_step;  // the step restricted to its first `front` / last `back` rows
};

// A tensor an incremental plan keeps between runs. It has its own buffer slot (after the
// caller's inputs) in 2 x rows of room: a slide moves the slot's start down one row, so row t
// is where row t + 1 was, and only when the room runs out are the rows copied back to the top
// (one copy per `rows` slides).
struct KeptTensor {
  uint32_t offset = 0;        // arena offset of its room (floats)
  uint32_t row_floats = 0, rows = 0, room_rows = 0;
};

// A caller input's previous window, kept to recognise a slide.
struct InputHistory {
  uint32_t input = 0;        // caller input index
  uint32_t prev = 0;         // arena offset of its copy
  uint32_t row_floats = 0, rows = 0;
};

struct PlanLayout {
  std::vector<Step> steps;
  bool incremental = false;
  std::vector<IncrementalStep> increments;  // parallel to steps when incremental
  std::vector<KeptTensor> kept;             // buffer slot 1 + inputs + i
  std::vector<InputHistory> histories;
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
