// What runs a DeviceProgram: the CUDA graph on a GPU (device_graph.cu), or the same step bodies
// on the host, one item at a time (device_program_host.cpp), which is how the graph form is
// checked against the frameworks on machines without a GPU.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/device_program.hpp"

namespace tickinfer::cuda {

class ProgramRunner {
 public:
  virtual ~ProgramRunner() = default;
  // Copies each input in, zeroes the kept state first when `reset`, runs every step, copies each
  // output out. False when the device failed (the outputs are then not written).
  virtual bool run(const float* const* inputs, float* const* outputs, bool reset) noexcept = 0;
  // Room for up to max_rows rows per run_rows call (off the hot path: allocates): "" or why not
  // (why_not_batched, or what the device refused).
  virtual std::string reserve_rows(int max_rows) = 0;
  // `rows` (1 .. the reservation) independent rows, x [rows][input] -> y [rows][output], in one
  // pass over the steps; each row's outputs bit-identical to run() on that row (every item of a
  // step computes its element alone, in the same order, whatever the batch). False when the
  // device failed (y is then not written).
  virtual bool run_rows(const float* x, int rows, float* y) noexcept = 0;
  // One line: where and how it runs.
  virtual std::string describe() const = 0;
};

// What a GPU runner timed on its card, for its clones to reuse instead of timing again (a served
// model starts a plan per thread): the launch variant run()'s graphs use (tiles, dependent
// launch: stream_graph.hpp's LaunchVariant), and per batch size 2, 4, ... reserved_rows the
// variant kept. The mutex is held while one runner times, so
// clones starting together wait for its answer (and never time side by side). Off the hot path.
struct GraphChoices {
  std::mutex mutex;
  int run_variant = -1;             // -1: not timed yet
  int reserved_rows = 0;            // the reservation batch_variants was timed for
  std::vector<int> batch_variants;  // one per batch size
};

// The program on CUDA device `device` as two captured CUDA graphs (with and without the state
// reset), and after reserve_rows(n) one graph per batch size 2, 4, 8, ... n (a call of r rows
// launches the smallest that holds r: a grid's second dimension is the row). Its run paths: a
// copy into pinned memory, one cudaGraphLaunch, one cudaStreamSynchronize, a copy out; no
// allocation, no lock of its own. `choices`, shared with clones, keeps what was timed. Throws
// std::runtime_error naming what failed (no device, out of memory, a capture the runtime refused).
std::unique_ptr<ProgramRunner> start_graph_runner(std::shared_ptr<const DeviceProgram> program, int device,
                                                  std::shared_ptr<GraphChoices> choices = nullptr);

// The program on CUDA device `device` as the resident program kernel (resident_program.cu): one
// kernel that never exits, on one cluster of `cluster` (1..16) blocks, polling mapped pinned
// memory for requests. Its run path: stores and loads to pinned memory and a spin with a 1 s
// deadline; no allocation, lock or driver call. One row per request (reserve_rows refuses).
// Throws std::runtime_error naming what failed (no device, a launch the runtime refused, no reply
// to the first request).
std::unique_ptr<ProgramRunner> start_resident_program(std::shared_ptr<const DeviceProgram> program, int device,
                                                      int cluster);

// The program on the host: every step body run with a serial executor, items forwards or, with
// `backwards`, in reverse (a body whose items depend on each other then answers differently).
// Allocates its arena here (and the batch's in reserve_rows); run() and run_rows() allocate
// nothing. Batched, the rows of a step run forwards or backwards too; with `tiled_dense`, a Dense
// step runs as the GPU's tile kernel does (device_dense_tiles.cuh), over the whole batch in
// run_rows and over the one request's rows in run().
std::unique_ptr<ProgramRunner> host_program_runner(std::shared_ptr<const DeviceProgram> program, bool backwards,
                                                   bool tiled_dense = false);

// Every output of `rows` rows run one at a time on the host (items forwards, state zeroed per
// row): inputs[i] holds rows x program.inputs[i].floats; the result is row after row, each row's
// outputs in order. For measuring a program against another (tickinfer cuda-precision, tests).
// after_step(k, arena), when given, runs after step k of every row: a test's way to change what
// the fp32 program stores (rounding a step's output as 16-bit storage would). one_sequence: the
// rows are the ticks of one stream (state zeroed before the first row only).
std::vector<float> run_rows_on_host(const DeviceProgram& program, const std::vector<const float*>& inputs, int rows,
                                    std::function<void(size_t, float*)> after_step = {}, bool one_sequence = false);

// Host buffers for one request of a program: every input filled with `fill`, room for every
// output, and the pointer arrays ProgramRunner::run takes (a start-up request, a timing).
struct ProgramIo {
  ProgramIo(const DeviceProgram& p, float fill) {
    for (const DeviceRegion& r : p.inputs) in.emplace_back(size_t(r.floats), fill);
    for (const DeviceRegion& r : p.outputs) out.emplace_back(size_t(r.floats), 0.0f);
    for (const std::vector<float>& v : in) in_ptrs.push_back(v.data());
    for (std::vector<float>& v : out) out_ptrs.push_back(v.data());
  }
  std::vector<std::vector<float>> in, out;
  std::vector<const float*> in_ptrs;
  std::vector<float*> out_ptrs;
};

}  // namespace tickinfer::cuda
