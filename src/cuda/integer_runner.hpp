// What runs an IntegerProgram: the CUDA graph on a GPU (integer_graph.cu), or the same step
// bodies on the host, one item at a time (integer_program_host.cpp), which is how the integer
// program is held to TFLite's bits on machines without a GPU.
#pragma once

#include <memory>
#include <string>

#include "cuda/device_runner.hpp"
#include "cuda/integer_program.hpp"

namespace tickinfer::cuda {

class IntegerRunner {
 public:
  virtual ~IntegerRunner() = default;
  // Copies each int8 input in (program.inputs[i].bytes each), runs every step, copies each output
  // out. False when the device failed (the outputs are then not written).
  virtual bool run(const int8_t* const* inputs, int8_t* const* outputs) noexcept = 0;
  // Room for up to max_rows rows per run_rows call (off the hot path: allocates): "" or why not
  // (integer_why_not_batched, or what the device refused).
  virtual std::string reserve_rows(int max_rows) = 0;
  // `rows` (1 .. the reservation) independent rows, x [rows][input bytes] -> y [rows][output
  // bytes], in one pass over the steps; each row bit-identical to run() on it (integer
  // arithmetic, every item computing its element alone). False when the device failed.
  virtual bool run_rows(const int8_t* x, int rows, int8_t* y) noexcept = 0;
  // One line: where and how it runs.
  virtual std::string describe() const = 0;
};

// The program on CUDA device `device` as one captured CUDA graph: the inputs copied from pinned
// memory, one kernel per step, the outputs copied back; after reserve_rows(n), one graph per
// batch size 2, 4, ... n, the rows as the grid's second dimension, each row's arena (constants
// copied in) integer_row_stride apart. Its run paths: a copy into pinned memory, one
// cudaGraphLaunch, one cudaStreamSynchronize, a copy out; no allocation, no lock of its own.
// Throws std::runtime_error naming what failed.
// `choices` (cuda/device_runner.hpp), shared with clones, keeps the batch sizes' timed variants.
std::unique_ptr<IntegerRunner> start_integer_graph(std::shared_ptr<const IntegerProgram> program, int device,
                                                   std::shared_ptr<GraphChoices> choices = nullptr);

// The program on the host: every step body with a serial executor, items forwards or, with
// `backwards`, in reverse; with `tiled_fc`, a batch's FULLY_CONNECTED steps run as the GPU's
// tiles (integer_fc_tiles.cuh). Allocates its arena here; run() allocates nothing.
std::unique_ptr<IntegerRunner> host_integer_runner(std::shared_ptr<const IntegerProgram> program, bool backwards,
                                                   bool tiled_fc = false);

}  // namespace tickinfer::cuda
