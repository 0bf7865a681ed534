#pragma once
// The CUDA graph form behind tickinfer::Plan: any Keras graph the CPU graph plans run, lowered
// (engine/lowering/), made a DeviceProgram (cuda_program_lowering.hpp) and run by a
// cuda::ProgramRunner: on a GPU as a captured CUDA graph, or, for the tests of machines without
// one, the same step bodies on the host.
#include <memory>

#include "engine/plan_backend.hpp"
#include "model/graph.hpp"

namespace tickinfer::engine {

// On CUDA device `device`. Throws tickinfer::Error naming what failed.
std::unique_ptr<PlanBackend> compile_cuda_graph(const Graph& graph, const CompileOptions& options, int device);

// The resident program form (cuda/resident_program.cu): one never-exiting kernel on one cluster of
// `cluster` blocks (0: each of 16, 8, 4, 2 and 1 timed over 200 requests, the fastest kept).
// One row per request. Not yet run on a GPU, so only CompileOptions::cuda_form = "program" picks it.
std::unique_ptr<PlanBackend> compile_cuda_program(const Graph& graph, const CompileOptions& options, int device,
                                                  int cluster);

// The same program on the host, items forwards or backwards (cuda/device_runner.hpp): slow, for
// checking the graph form against the frameworks where no GPU is.
std::unique_ptr<PlanBackend> compile_cuda_graph_on_host(const Graph& graph, const CompileOptions& options,
                                                        bool backwards);

}  // namespace tickinfer::engine
