// What the CUDA graph form (device_graph.cu) and the integer program (integer_graph.cu) share on
// the host side of a GPU run: a non-blocking stream on the chosen device, device memory filled
// from the host on it, and a stream capture made one instantiated CUDA graph. Included by .cu
// files only (it names the runtime's types).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cuda/device_runner.hpp"

namespace tickinfer::cuda {

// Throws std::runtime_error "<who>: <what>: <the runtime's message>" unless e is cudaSuccess.
void check_cuda(cudaError_t e, const char* who, const char* what);

struct DeviceStream {
  cudaStream_t stream = nullptr;
  std::string name;  // the device's
  int sms = 1;       // its multiprocessors
};
// Selects `device` and creates a non-blocking stream on it.
DeviceStream open_device_stream(int device, const char* who);

// Makes `device` the calling thread's current device where it is not (a read of the runtime's
// per-thread state, and a set only on a change): a plan on cuda:N called from a thread that never
// chose N, as a serving worker may be, still launches into its own device's stream.
inline void select_device(int device) noexcept {
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess || current != device) cudaSetDevice(device);
}

// `bytes` (at least 1) of stream-ordered device memory, zeroed, then `host_bytes` of `host`
// copied to its start (none when host_bytes is 0). Stream-ordered memory never synchronises the
// whole device, so a resident plan running beside this one is never waited on.
void* device_buffer(cudaStream_t stream, size_t bytes, const void* host, size_t host_bytes, const char* who,
                    const char* what);

// Host to host, as a run goes: a launch of `exec` and a synchronise, 5 warm-up launches, then the
// median of 11; infinity when a launch fails (that graph is never the one kept). For choosing
// between graphs that give the same bits.
double median_launch_us(cudaStream_t stream, cudaGraphExec_t exec) noexcept;
// A median_launch_us answer as describe() prints it: whole microseconds, or "failed".
std::string launch_time_text(double us);

// Ends the capture begun on `stream` and instantiates it; `first_error` is the first error any
// captured call returned. Throws naming what failed.
cudaGraphExec_t end_capture(cudaStream_t stream, cudaError_t first_error, const char* who);

// One kernel into `stream` (a capture). `dependent`: programmatic dependent launch (sm_90): the
// kernel may start launching while the kernel captured before it still runs, and waits for that
// one's writes in its own first instruction (dependent_launch.cuh), so a graph's kernel
// boundaries cost less. Only for a kernel whose predecessor in the stream is a kernel.
cudaError_t launch_kernel(cudaStream_t stream, const void* kernel, dim3 grid, dim3 block, void** args, bool dependent);

// How a graph form launches its steps, numbered as BatchGraphs and GraphChoices keep them: where
// the program has a product that may run as tiles (a Dense, a FULLY_CONNECTED), bit 0 is the
// tiles and bit 1 dependent launch; else bit 0 is dependent launch. Every variant gives the same
// bits; which is fastest is the card's to say.
struct LaunchVariant {
  bool tiles = false, dependent = false;
};
inline LaunchVariant launch_variant(int v, bool has_tiles) {
  return has_tiles ? LaunchVariant{(v & 1) != 0, (v & 2) != 0} : LaunchVariant{false, (v & 1) != 0};
}
inline int launch_variants(bool has_tiles) { return has_tiles ? 4 : 2; }
// "per row", "tiles", "per row, dependent launch", ...: a variant as describe() names it; the
// legend, every variant by number ("0 per row, 1 tiles, ...").
std::string launch_variant_text(int v, bool has_tiles);
std::string launch_variants_legend(bool has_tiles);

// Captures each of `candidates` (capture(v) throws when it cannot), times it (median_launch_us)
// and leaves the fastest in `kept`, destroying the others at once; returns the variant kept and
// appends "V: N us" per candidate to `times`. The first candidate failing to capture throws; a
// later one counts as failed and is never kept; when no candidate's timed launches complete
// (timed with more than one candidate), it throws and leaves `kept` null.
int keep_fastest_graph(cudaStream_t stream, const std::vector<int>& candidates,
                       const std::function<cudaGraphExec_t(int)>& capture, cudaGraphExec_t& kept, std::string& times);

// run()'s graph as a plan and its clones share the choice: the first (choices.run_variant < 0)
// keeps the fastest of `candidates` (keep_fastest_graph) and records it, a clone captures the
// recorded variant. Leaves the graph in `kept`, returns the variant, and sets `text` to what
// describe() says of it. Holds choices.mutex throughout, so clones starting together wait for one
// timing.
int capture_run_graph(cudaStream_t stream, GraphChoices& choices, const std::vector<int>& candidates, bool has_tiles,
                      const std::function<cudaGraphExec_t(int)>& capture, cudaGraphExec_t& kept, std::string& text);

// Batched rows of a program on one stream (the graph form's and the integer program's
// run_rows): a device arena of max_rows row arenas `row_stride` bytes apart, pinned staging for
// the rows' inputs and outputs, and one captured graph per batch size 2, 4, ... max_rows, each a
// strided copy of the inputs in, launch_steps(arena, rows, variant) (the steps over the rows), a
// strided copy of the outputs out. With several variants (ways of launching the same steps, each
// giving the same bits), every batch size captures each, times each on the card and keeps the
// fastest: the choice is the card's, measured when the rows are reserved.
class BatchGraphs {
 public:
  struct Span {
    int64_t offset = 0, bytes = 0;  // within one row's arena
  };
  using LaunchSteps = cudaError_t (*)(void* owner, void* arena, int rows, int variant);
  // Throws std::runtime_error naming what failed (having released what it took). The arena's
  // rows are zeroed; the caller may fill them (constants) before the first run. `choices` is
  // shared by a plan and its clones: when one of them reserved as many rows, its variants are
  // taken as they are (nothing is timed); else this reserve times them and leaves them there. Its
  // mutex is held throughout, so clones reserving together wait for one timing, never time side
  // by side.
  void reserve(cudaStream_t stream, int max_rows, int64_t row_stride, Span in, Span out, LaunchSteps launch_steps,
               void* owner, int variants, GraphChoices& choices, const char* who);
  // The variant kept for each batch size, and its median time (us) against the others', as a
  // phrase for describe(): "" with one variant.
  const std::string& choices() const { return choices_; }
  // rows in [2, max_rows()]: x in, the smallest graph that holds them, a synchronise, y out.
  bool run(cudaStream_t stream, const void* x, int rows, void* y) noexcept;
  void release(cudaStream_t stream) noexcept;
  int max_rows() const { return max_rows_; }
  void* arena() const { return arena_; }

 private:
  struct Graph {
    int rows;
    cudaGraphExec_t exec;
  };
  std::vector<Graph> graphs_;
  std::string choices_;
  void* arena_ = nullptr;
  void* in_ = nullptr;
  void* out_ = nullptr;
  Span in_span_, out_span_;
  int max_rows_ = 0;
};

}  // namespace tickinfer::cuda
