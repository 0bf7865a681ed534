// What runs an IntegerProgram: the CUDA graph on a GPU (integer_graph.cu), or the same step
// bodies on the host, one item at a time (integer_program_host.cpp), which is how the integer
// program is held to TFLite's bits on machines without a GPU.
#pragma once

#include <memory>
#include <string>

#include "cuda/integer_program.hpp"

namespace tickinfer::cuda {

class IntegerRunner {
 public:
  virtual ~IntegerRunner() = default;
  // Copies each int8 input in (program.inputs[i].bytes each), runs every step, copies each output
  // out. False when the device failed (the outputs are then not written).
  virtual bool run(const int8_t* const* inputs, int8_t* const* outputs) noexcept = 0;
  // One line: where and how it runs.
  virtual std::string describe() const = 0;
};

// The program on CUDA device `device` as one captured CUDA graph: the inputs copied from pinned
// memory, one kernel per step, the outputs copied back. Its run path: a copy into pinned memory,
// one cudaGraphLaunch, one cudaStreamSynchronize, a copy out; no allocation, no lock of its own.
// Throws std::runtime_error naming what failed.
std::unique_ptr<IntegerRunner> start_integer_graph(std::shared_ptr<const IntegerProgram> program, int device);

// The program on the host: every step body with a serial executor, items forwards or, with
// `backwards`, in reverse. Allocates its arena here; run() allocates nothing.
std::unique_ptr<IntegerRunner> host_integer_runner(std::shared_ptr<const IntegerProgram> program, bool backwards);

}  // namespace tickinfer::cuda
