#pragma once
// The CUDA backend behind tickinfer::Plan (CompileOptions::device "cuda" or "cuda:N"): a Keras
// graph that is an LSTM stack with a Dense head runs on a resident kernel (cuda/resident_lstm.hpp)
// launched at compile time; run() hands it one request through mapped pinned memory and spins for
// the reply. Every other graph runs as the CUDA graph form (engine/cuda_graph_plan.hpp).
#include <memory>
#include <string>

#include "engine/plan_backend.hpp"
#include "model/graph.hpp"

namespace tickinfer::engine {

// "" and "cpu" -> -1 (the CPU plans); "cuda" -> 0; "cuda:N" -> N. Throws tickinfer::Error for
// anything else.
int cuda_device_index(const std::string& device);

// "" when CompileOptions::cuda_form and cuda_precision are well formed, else what is wrong (checked
// for every device, so a typo is caught on the machine it was made on).
std::string cuda_options_error(const CompileOptions& options);

// Compiles `graph` onto CUDA device `device`. Throws tickinfer::Error naming the reason: a build
// without CUDA, no such device, a layer the backend does not run, weights that fit no cluster.
std::unique_ptr<PlanBackend> compile_cuda(const Graph& graph, const CompileOptions& options, int device);

}  // namespace tickinfer::engine
