#pragma once
// The CUDA graph form behind tickinfer::Plan: any Keras graph the CPU graph plans run, lowered
// (engine/lowering/), made a DeviceProgram (cuda_program_lowering.hpp) and run by a
// cuda::ProgramRunner: on a GPU as a captured CUDA graph, or, for the tests of machines without
// one, the same step bodies on the host.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cuda/device_runner.hpp"
#include "engine/plan_backend.hpp"
#include "model/graph.hpp"

namespace tickinfer::engine {

// On CUDA device `device`. Throws tickinfer::Error naming what failed.
std::unique_ptr<PlanBackend> compile_cuda_graph(const Graph& graph, const CompileOptions& options, int device);

// The resident program form (cuda/resident_program.cu): one never-exiting kernel on one cluster of
// `cluster` blocks (0: each of 16, 8, 4, 2 and 1 timed over 200 requests, the fastest kept).
// One row per request.
std::unique_ptr<PlanBackend> compile_cuda_program(const Graph& graph, const CompileOptions& options, int device,
                                                  int cluster);

// CompileOptions::cuda_form = "auto" for a graph the resident LSTM kernel does not run: the graph
// form and the program form each started and timed on the card, one request at a time, the
// faster kept (the program form only where its replies agree with the graph form's:
// cuda/form_choice.hpp). describe() names the choice and both times; clones start the kept form.
// A plan that kept the program form refuses reserve_rows (--cuda-form graph runs batches).
std::unique_ptr<PlanBackend> compile_cuda_auto(const Graph& graph, const CompileOptions& options, int device);

// What compile_cuda_auto chooses among, for the tests of machines without a GPU (host runners in
// the forms' places): the first is the reference every other must agree with.
using ProgramStart =
    std::function<std::unique_ptr<cuda::ProgramRunner>(std::shared_ptr<const cuda::DeviceProgram>)>;
struct FormStart {
  std::string form;  // "graph", "program"
  const char* isa;   // Plan::isa() when kept
  ProgramStart start;
};
std::unique_ptr<PlanBackend> compile_cuda_choosing(const Graph& graph, const CompileOptions& options,
                                                   std::vector<FormStart> forms);

// The same program on the host, items forwards or backwards (cuda/device_runner.hpp): slow, for
// checking the graph form against the frameworks where no GPU is.
std::unique_ptr<PlanBackend> compile_cuda_graph_on_host(const Graph& graph, const CompileOptions& options,
                                                        bool backwards);

}  // namespace tickinfer::engine
