#pragma once
// The CUDA backend behind tickinfer::Plan (CompileOptions::device "cuda" or "cuda:N"): a Keras
// graph that is an LSTM stack with a Dense head runs on a resident kernel (cuda/resident_lstm.hpp)
// launched at compile time; run() hands it one request through mapped pinned memory and spins for
// the reply. Every other graph runs as the CUDA graph form (engine/cuda_graph_plan.hpp).
#include <memory>
#include <string>

#include "engine/device_options.hpp"
#include "engine/plan_backend.hpp"
#include "model/graph.hpp"
#include "tflite/program.hpp"

namespace tickinfer::engine {

// Compiles `graph` onto CUDA device `device`. Throws tickinfer::Error naming the reason: a build
// without CUDA, no such device, a layer the backend does not run, weights that fit no cluster.
std::unique_ptr<PlanBackend> compile_cuda(const Graph& graph, const CompileOptions& options, int device);

// Compiles a full-integer TFLite / .tkq program onto CUDA device `device`: its int8 ops as the
// integer program (cuda/integer_program.hpp) in one CUDA graph, TFLite's bits (docs/gpu.md,
// "int8 programs"). Throws tickinfer::Error naming the reason (as compile_cuda, or the first op
// without an integer form). cuda_form and cuda_precision must be left at their defaults.
std::unique_ptr<PlanBackend> compile_cuda_integer(std::shared_ptr<const tfl::Program> program,
                                                  const CompileOptions& options, int device);
// The same integer program on the host executor (items forwards or backwards; with `tiled_fc`,
// a batch's FULLY_CONNECTED steps as the GPU's tiles): slow, for checking it against TFLite where
// no GPU is.
std::unique_ptr<PlanBackend> compile_cuda_integer_on_host(std::shared_ptr<const tfl::Program> program,
                                                          const CompileOptions& options, bool backwards,
                                                          bool tiled_fc = false);

}  // namespace tickinfer::engine
