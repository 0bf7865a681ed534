#pragma once
// tickinfer's C++ API: load a Keras model, compile it into a plan, run the plan on
// caller-provided buffers.
//
//   auto model = tickinfer::Model::load("mlp_small.keras");   // throws tickinfer::Error
//   auto plan  = tickinfer::compile(model);                     // packs weights, sizes the arena
//   float x[10] = {...}, y[1];
//   plan.run(x, y);                                             // noexcept, allocation-free
//
// Thread safety: a Model is immutable and may be shared by any number of threads. A Plan owns
// mutable scratch (its arena and, in stream mode, the recurrent state), so each thread runs its
// own Plan; Plan::clone() makes another plan that shares the packed weights read-only and has its
// own arena. Loading and compiling may allocate and throw; Plan::run never does either.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tickinfer/error.hpp"

namespace tickinfer {

struct Graph;
namespace tfl {
struct Program;
}
namespace engine {
class ModelSource;
}
class Plan;
struct CompileOptions;
using Shape = std::vector<int>;

struct TensorInfo {
  std::string name;  // Keras input layer / output layer name
  Shape shape;       // without the batch dimension
};

// Static cost of one inference (batch 1, window mode), per layer and in total.
struct LayerStats {
  std::string name, keras_class;
  Shape output_shape;
  int64_t params = 0;        // weights and biases as stored in the model
  int64_t flops = 0;         // 2 per multiply-add, plus elementwise work counted as 1 per op
  int64_t weight_bytes = 0;  // bytes of weights read per inference (fp32)
  int64_t zero_weights = 0;  // params that are exactly zero (a pruned layer's share; dense: ~0)
};
struct ModelStats {
  std::vector<LayerStats> layers;
  int64_t params = 0, flops = 0, weight_bytes = 0, zero_weights = 0;
};

// Which engine runs a float TFLite file: Auto (the graph engine when the program lifts to a layer
// graph, else the TFLite interpreter), Interpreter (always; the escape hatch) or Graph (the
// graph engine, or a load error naming why the program does not lift).
enum class TfliteEngine { Auto, Interpreter, Graph };
// "auto", "interpreter" or "graph" (the CLI's --tflite-engine); anything else is an Error naming it.
TfliteEngine parse_tflite_engine(const std::string& name);

struct LoadOptions {
  TfliteEngine tflite_engine = TfliteEngine::Auto;
};

class Model {
 public:
  // Loads a Keras 3 `.keras` archive, a legacy Keras 2 `.h5` file, a TFLite `.tflite` file
  // (float, dynamic-range or full-integer) or a tickinfer quantized `.tkq` file, detected from
  // the content, not the extension. Throws tickinfer::Error naming the file, and the layer (op)
  // and option where relevant, for anything unreadable or unsupported.
  static Model load(const std::string& path, const LoadOptions& options = {});
  // Wraps an already-built graph (importers, tests). Validates it (shapes, weights).
  static Model from_graph(Graph graph);
  // Wraps a tensor program (TFLite and quantized models; see src/tflite/program.hpp).
  static Model from_program(std::shared_ptr<const tfl::Program> program);

  // Keras models: the layer graph. TFLite and quantized models have an empty graph that only
  // carries the name and source_format; their ops are in program().
  const Graph& graph() const { return *graph_; }
  // The tensor program of a TFLite or quantized model; nullptr for Keras models.
  const tfl::Program* program() const { return program_.get(); }
  std::shared_ptr<const tfl::Program> shared_program() const { return program_; }
  std::vector<TensorInfo> inputs() const;
  std::vector<TensorInfo> outputs() const;
  ModelStats stats() const;

 private:
  friend Plan compile(const Model& model, const CompileOptions& options);
  std::shared_ptr<const engine::ModelSource> source_;  // what inputs(), stats(), compile() ask
  std::shared_ptr<const Graph> graph_;                 // = source_->graph(), for graph()
  std::shared_ptr<const tfl::Program> program_;      // = source_->program(), for program()
};

enum class RecurrentMode : uint8_t {
  // Exactly what Keras computes: each run() takes the whole [T, features] window and starts
  // the recurrent state from zero.
  Window,
  // One time step per run(): inputs are [features] (the last axis of a sequence input); the
  // recurrent state carries over between calls until reset_state(). O(1) work per tick.
  // Only for models whose sequence part is recurrent layers and per-step ops; see
  // docs/streaming.md for when it equals the trained model.
  Stream,
};

// Whether pruned weights run in the block-sparse form (docs/pruning.md).
enum class SparseMode {
  Auto,    // a layer whose 1x16 weight blocks are at least a quarter zero is timed both ways at
           // compile time on this machine; the sparse form is kept only when >= 3% faster
  Dense,   // never: every layer runs dense
  Sparse,  // every Dense/LSTM matrix with an all-zero block runs sparse, unmeasured (tests, studies)
};

// How a TFLite or quantized model's int8 requantization rounds (docs/quantization.md): TFLite
// builds differ, and tickinfer reproduces each bit for bit.
enum class RoundingMode {
  Tflite,  // as the TFLite interpreters on PyPI (ai-edge-litert, TensorFlow) do, per op family
  Double,  // every op as a default TFLite source build: MultiplyByQuantizedMultiplier rounding twice
  Single,  // every op as a TFLITE_SINGLE_ROUNDING build
};

struct CompileOptions {
  // Kernel set: "" picks the fastest the CPU supports (or $TICKINFER_ISA when set);
  // "scalar", "portable", "avx2" or "avx512" force one (an Error if the CPU lacks it).
  std::string isa;
  SparseMode sparse = SparseMode::Auto;
  RoundingMode rounding = RoundingMode::Tflite;  // TFLite and quantized models only
  RecurrentMode mode = RecurrentMode::Window;
  // Window mode only: the sequence length to use for an input saved with an unknown (None)
  // time dimension. 0 means the model must fix it.
  int window_length = 0;
  // Window mode only: incremental window updates. When a run's window is the previous run's moved
  // by one time step (its rows 0..T-2 equal the previous rows 1..T-1, compared bit for bit; the
  // caller passes the whole window as always), the layers with a bounded receptive field in time
  // (convolutions and pooling along time, per-row layers) recompute only the rows the move
  // changes and reuse the rest; what follows (a recurrent layer, attention, a Flatten) runs
  // whole. Any other window runs whole. Outputs equal the whole run's to float rounding
  // (docs/incremental.md). The plan keeps those layers' outputs between runs (a larger arena).
  bool incremental = false;
  // Where the plan runs: "" or "cpu" (the CPU plans), "cuda" or "cuda:N" (that GPU: a resident
  // kernel for a Keras-graph LSTM stack with a Dense head, the CUDA graph or program form for
  // any other Keras graph; docs/gpu.md). Anything the device cannot run is an Error at compile time, never
  // a silent CPU fallback.
  std::string device;
  // On a GPU: "" or "auto" (the resident kernel where the model is an LSTM stack, else the graph
  // or the program form, each timed on the card at compile and the faster kept), "graph" (the CUDA graph form for every model: the form that runs batched rows,
  // reserve_rows, which the resident kernels refuse), or "program" (any model on one
  // never-exiting kernel, a thread-block cluster that polls for requests; docs/gpu.md).
  std::string cuda_form;
  // On a GPU, the graph and program forms: how the weight matrices and the tensors holding each
  // layer's outputs are stored (arithmetic stays fp32): "" or FORMAT, then ",LAYER=FORMAT" per
  // layer; FORMAT is "fp32", "fp16" or "bf16" for the matrices (outputs fp32), or "W/A" for the
  // matrices and the outputs ("fp16,lstm=fp32", "bf16/bf16,dense=fp32/fp32"). Model inputs and
  // outputs stay fp32. `tickinfer cuda-precision` measures each layer's error in each and writes
  // the spec.
  std::string cuda_precision;
};

class Plan {
 public:
  Plan(Plan&&) noexcept;
  Plan& operator=(Plan&&) noexcept;
  ~Plan();

  // inputs[i] points at input_size(i) floats, outputs[i] at output_size(i) floats, row-major
  // in the shapes below. Never allocates, locks, throws or makes a syscall. Input and output
  // buffers may not overlap the plan's arena (they cannot: it is private).
  void run(const float* const* inputs, float* const* outputs) noexcept;
  // Convenience for plans with exactly one input and one output (others must use the form
  // above: this one passes only one pointer each way).
  void run(const float* input, float* output) noexcept;
  // Stream mode: zero the recurrent state (start of a new sequence). Window mode: no-op.
  void reset_state() noexcept;

  // Several independent inputs in one call, for feed-forward plans that work row by row (Dense,
  // activations, BatchNormalization, LayerNormalization, Softmax, no-ops; one input, one
  // output; Keras models, not TFLite/.tkq ones), and for any window-mode plan of the CUDA graph
  // form with one input and one output (each launch runs every row side by side). reserve_rows(n) checks the plan and allocates
  // room for n rows: it throws tickinfer::Error naming the first step that is not row-wise.
  // run_rows then runs `rows` inputs, x [rows][input_size] -> y [rows][output_size]: each output
  // row bit-identical to run() on that row, each layer's weights read once per n rows. More rows
  // than reserved run in slices of n; with none reserved (a clone starts with none) it is one
  // run() per row. Like run(), it never allocates, locks, throws or makes a syscall.
  void reserve_rows(int max_rows);
  // The same without the reason: false (and nothing reserved) where reserve_rows would throw.
  bool try_reserve_rows(int max_rows);
  int reserved_rows() const noexcept;
  void run_rows(const float* x, int rows, float* y) noexcept;

  size_t num_inputs() const;
  size_t num_outputs() const;
  const Shape& input_shape(size_t i) const;   // per call: [features] in stream mode
  const Shape& output_shape(size_t i) const;
  size_t input_size(size_t i) const;
  size_t output_size(size_t i) const;

  RecurrentMode mode() const;
  const char* isa() const;       // kernel set in use
  size_t arena_bytes() const;    // activation + state scratch owned by this plan
  // Cost of one run() of this plan (per tick in stream mode): FLOPs counted as 2 per
  // multiply-accumulate of its matmuls, and the bytes of fp32 weights it must read (packing pad
  // excluded; recurrent weights once per time step, since each step depends on the previous
  // one; other weights once). FLOPs / peak and weight_bytes / cache bandwidth are its floors.
  int64_t flops() const;
  int64_t weight_bytes() const;
  // Bytes of packed weights the plan keeps resident (shared by clones): what must fit in cache.
  int64_t weight_footprint_bytes() const;
  std::string describe() const;  // one line per step, for `tickinfer inspect --plan`

  // Where a run's time goes, step by step (a graph plan's steps, a TFLite/.tkq program's ops).
  // Off the hot path: it allocates, and reads the clock between steps. Runs `runs` times on
  // `inputs` (one pointer per model input, as run() takes; window mode runs whole windows, no
  // incremental update) after `runs` / 10 + 1 untimed runs, and returns one entry per step in
  // run order with the median of its times. The steps' medians sum to about one run().
  struct StepProfile {
    std::string step;   // the step's kind and layer (graph plan) or op and tensor (program plan)
    int64_t flops = 0;  // per run, 2 per multiply-accumulate (graph plans; 0 where not counted)
    double p50_ns = 0;  // median over the runs
  };
  std::vector<StepProfile> profile(const std::vector<const float*>& inputs, int runs);

  // A new plan sharing this plan's packed weights, with its own arena and state.
  Plan clone() const;

  struct Impl;
  explicit Plan(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

// Builds a plan: resolves shapes, folds BatchNormalization into the preceding layer where
// possible, packs weights for the chosen kernels and sizes one arena. Throws tickinfer::Error
// (e.g. stream mode on a model with a Flatten over time, an ISA the CPU lacks).
Plan compile(const Model& model, const CompileOptions& options = {});

}  // namespace tickinfer
