// The graph form on a GPU: every step of a DeviceProgram one kernel (its kind's instantiation of
// the step bodies in device_step_dispatch.cuh), the copies in and out and the steps captured
// once into a CUDA graph, so a run is one graph launch. Two graphs: one that zeroes the kept
// state first (a stream plan's first run after a reset) and one that does not.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cuda/dependent_launch.cuh"
#include "cuda/device_dense_tiles.cuh"
#include "cuda/device_runner.hpp"
#include "cuda/device_step_dispatch.cuh"
#include "cuda/grid_executor.cuh"
#include "cuda/kernel_loading.hpp"
#include "cuda/pinned_pool.hpp"
#include "cuda/stream_graph.hpp"

namespace tickinfer::cuda {
namespace {

constexpr int kGridThreads = 128;

// The grid's second dimension is the row of a batch: each row's arena is row_stride floats on.
// M: the step has a 16-bit tensor (cuda/tensor_view.hpp); the all-fp32 kernels are M = false.
template <DevKind K, bool M>
__global__ void __launch_bounds__(1024) step_kernel(DeviceStep s, float* arena, int64_t row_stride, const float* weights) {
  release_dependents_then_wait();
  steps::run_kind<K, M>(GridExecutor{}, s, arena + int64_t(blockIdx.y) * row_stride, weights);
}

using StepKernel = void (*)(DeviceStep, float*, int64_t, const float*);

// A batched Dense as tiles (device_dense_tiles.cuh): block (x, y) computes column tile x of row tile y.
template <bool M>
__global__ void __launch_bounds__(steps::kTileThreads)
    dense_tile_kernel(DeviceStep s, float* arena, int64_t row_stride, int batch_rows, const float* weights) {
  __shared__ steps::DenseTileShared tile;
  release_dependents_then_wait();
  steps::dense_tile<M>(BlockExecutor{}, s, arena, row_stride, batch_rows, weights, int64_t(blockIdx.y),
                       int(blockIdx.x), tile);
}

template <bool M, int... I>
constexpr std::array<StepKernel, sizeof...(I)> kernel_table(std::integer_sequence<int, I...>) {
  return {&step_kernel<DevKind(I), M>...};
}
constexpr auto kKernels = kernel_table<false>(std::make_integer_sequence<int, int(DevKind::Count)>{});
constexpr auto kMixedKernels = kernel_table<true>(std::make_integer_sequence<int, int(DevKind::Count)>{});

constexpr const char* kWho = "CUDA graph form";
void check(cudaError_t e, const char* what) { check_cuda(e, kWho, what); }

// Threads for a one-block step: one per gate row of its widest phase, within a block's 1024.
int one_block_threads(const DeviceStep& s) {
  const int widest = std::max({4 * s.out_width, 6 * s.out_width, s.in_width, s.heads * (s.key_dim + s.value_dim)});
  return std::clamp((widest + 31) / 32 * 32, 64, 1024);
}

class GraphRunner final : public ProgramRunner {
 public:
  GraphRunner(std::shared_ptr<const DeviceProgram> p, int device, std::shared_ptr<GraphChoices> choices)
      : p_(std::move(p)), choices_(choices ? std::move(choices) : std::make_shared<GraphChoices>()) {
    try {
      start(device);
    } catch (...) {
      release();
      throw;
    }
  }

  ~GraphRunner() override { release(); }

  std::string reserve_rows(int max_rows) override {
    if (std::string why = why_not_batched(*p_); !why.empty()) return why;
    select_device(device_);
    if (max_rows > 65535) return "at most 65535 rows per call (a grid's second dimension)";
    try {
      stride_ = row_stride_floats(*p_);
      const DeviceRegion in = p_->inputs[0], out = p_->outputs[0];
      batch_.reserve(stream_, max_rows, int64_t(bytes(stride_)), {int64_t(bytes(in.offset)), int64_t(bytes(in.floats))},
                     {int64_t(bytes(out.offset)), int64_t(bytes(out.floats))}, &launch_rows, this,
                     launch_variants(has_dense()), *choices_, kWho);
    } catch (const std::exception& e) {
      return e.what();
    }
    return {};
  }

  bool run_rows(const float* x, int rows, float* y) noexcept override {
    if (rows < 1 || rows > std::max(batch_.max_rows(), 1)) return false;
    if (rows == 1) return run(&x, &y, false);  // selects the device itself
    select_device(device_);
    return batch_.run(stream_, x, rows, y);
  }

 private:
  void start(int device) {
    device_ = device;
    if (std::string e = program_error(*p_); !e.empty()) throw std::runtime_error("CUDA graph form: " + e);
    DeviceStream d = open_device_stream(device, kWho);
    stream_ = d.stream;
    device_name_ = d.name;
    sms_ = d.sms;
    // Stream-ordered memory and pooled pinned buffers: neither synchronises the whole device, so
    // a resident plan running beside this one is never waited on.
    arena_ = static_cast<float*>(device_buffer(stream_, bytes(p_->arena_floats), nullptr, 0, kWho, "the arena"));
    weights_ = static_cast<float*>(device_buffer(stream_, bytes(p_->weights.size()), p_->weights.data(),
                                                 bytes(p_->weights.size()), kWho, "the weights"));
    in_ = staging(p_->inputs, in_at_);
    out_ = staging(p_->outputs, out_at_);
    check(cudaStreamSynchronize(stream_), "the weights' upload");
    capture_run_graphs();
  }

  void release() noexcept {
    if (stream_) select_device(device_);  // only a device that was opened
    batch_.release(stream_);  // first: it frees on the stream destroyed below
    for (cudaGraphExec_t g : {plain_, reset_})
      if (g) cudaGraphExecDestroy(g);
    if (arena_) cudaFreeAsync(arena_, stream_);
    if (weights_) cudaFreeAsync(weights_, stream_);
    if (stream_) {
      cudaStreamSynchronize(stream_);
      cudaStreamDestroy(stream_);
    }
    detail::give_back_mapped(reinterpret_cast<unsigned long long*>(in_));
    detail::give_back_mapped(reinterpret_cast<unsigned long long*>(out_));
  }

 public:
  bool run(const float* const* inputs, float* const* outputs, bool reset) noexcept override {
    select_device(device_);
    for (size_t i = 0; i < p_->inputs.size(); ++i) std::memcpy(in_ + in_at_[i], inputs[i], bytes(p_->inputs[i].floats));
    if (cudaGraphLaunch(reset ? reset_ : plain_, stream_) != cudaSuccess) return false;
    if (cudaStreamSynchronize(stream_) != cudaSuccess) return false;
    for (size_t o = 0; o < p_->outputs.size(); ++o) std::memcpy(outputs[o], out_ + out_at_[o], bytes(p_->outputs[o].floats));
    return true;
  }

  std::string describe() const override {
    return "CUDA graph on " + device_name_ + ": " + std::to_string(p_->steps.size()) + " kernels, arena " +
           std::to_string(bytes(p_->arena_floats)) + " bytes, weights " + std::to_string(bytes(p_->weights.size())) +
           " bytes in device memory" + run_choice_ +
           (batch_.choices().empty() ? "" : "; batches by variant (" + launch_variants_legend(has_dense()) + "), timed: " + batch_.choices());
  }

 private:
  template <class N>
  static size_t bytes(N floats) {
    return size_t(floats) * sizeof(float);
  }

  // One pinned buffer for a list of regions, each at its own offset (floats).
  static float* staging(const std::vector<DeviceRegion>& regions, std::vector<size_t>& at) {
    size_t floats = 0;
    for (const DeviceRegion& r : regions) at.push_back(floats), floats += size_t(r.floats);
    return take(floats);
  }

  static float* take(size_t floats) {
    return reinterpret_cast<float*>(detail::take_mapped((std::max<size_t>(floats, 1) + 1) / 2).host);
  }

  // run()'s two graphs, launched the way this card runs them fastest (launch_variant: tiles for a
  // request's Dense steps over many rows, a recurrent layer's input projection over its window;
  // dependent launch): each candidate captured and timed host to host, the fastest kept (the bits
  // are the same), the reset graph captured the same way. The first run after compile resets the
  // state, so the timing leaves nothing behind. A plan's clones take the variant the first timed.
  void capture_run_graphs() {
    const bool dense = has_dense();
    const bool tiles_worth = std::any_of(p_->steps.begin(), p_->steps.end(), [](const DeviceStep& s) {
      return s.kind == DevKind::Dense && s.rows >= steps::kTileRows;
    });
    std::vector<int> candidates;
    for (int c = 0; c < launch_variants(dense); ++c)
      if (tiles_worth || !launch_variant(c, dense).tiles) candidates.push_back(c);
    for (size_t i = 0; i < p_->inputs.size(); ++i) std::memset(in_ + in_at_[i], 0, bytes(p_->inputs[i].floats));
    const int v = capture_run_graph(stream_, *choices_, candidates, dense, [&](int c) { return capture(false, c); },
                                    plain_, run_choice_);
    reset_ = capture(true, v);
  }

  cudaGraphExec_t capture(bool reset, int variant) {
    const LaunchVariant how = launch_variant(variant, has_dense());
    check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    cudaError_t e = cudaSuccess;
    auto keep = [&](cudaError_t r) {
      if (e == cudaSuccess) e = r;
    };
    if (reset)
      for (const DeviceRegion& r : p_->state) keep(cudaMemsetAsync(arena_ + r.offset, 0, bytes(r.floats), stream_));
    for (size_t i = 0; i < p_->inputs.size(); ++i)
      keep(cudaMemcpyAsync(arena_ + p_->inputs[i].offset, in_ + in_at_[i], bytes(p_->inputs[i].floats),
                           cudaMemcpyHostToDevice, stream_));
    for (size_t k = 0; k < p_->steps.size(); ++k) keep(launch_step(p_->steps[k], arena_, 1, how, k));
    for (size_t o = 0; o < p_->outputs.size(); ++o)
      keep(cudaMemcpyAsync(out_ + out_at_[o], arena_ + p_->outputs[o].offset, bytes(p_->outputs[o].floats),
                           cudaMemcpyDeviceToHost, stream_));
    return instantiate(e);
  }

  // Step k of a graph as `how` says: a Dense as tiles or not, dependent on the kernel before it
  // or not (never the first, whose predecessor is the copy in).
  cudaError_t launch_step(const DeviceStep& s, float* arena, int rows, LaunchVariant how, size_t k) {
    const bool dependent = how.dependent && k > 0;
    return how.tiles && s.kind == DevKind::Dense ? launch_tiles(s, arena, rows, dependent)
                                                 : launch(s, arena, rows, dependent);
  }

  // One step's kernel over `rows` rows (grid.y), each row's arena stride_ floats after the last.
  // A grid step's blocks per row shrink as the rows grow, so a batch keeps the card about as
  // full as one row does.
  cudaError_t launch(const DeviceStep& s, float* arena, int rows, bool dependent) {
    DeviceStep step = s;
    int64_t stride = stride_;
    const float* weights = weights_;
    void* args[] = {&step, &arena, &stride, &weights};
    dim3 grid(1, unsigned(rows)), block(unsigned(one_block_threads(s)));
    if (!runs_as_one_block(s)) {
      const int64_t items = std::max<int64_t>(step_items(s), 1);
      const int64_t blocks_per_row = std::max<int64_t>(int64_t(sms_) * 16 / rows, 1);
      block = dim3(kGridThreads);
      grid.x = unsigned(std::min<int64_t>((items + kGridThreads - 1) / kGridThreads, blocks_per_row));
    }
    const StepKernel kernel = (step_has_16bit_tensors(s) ? kMixedKernels : kKernels)[size_t(s.kind)];
    return launch_kernel(stream_, reinterpret_cast<const void*>(kernel), grid, block, args, dependent);
  }

  // The steps over a batch's rows as launch_variant(variant) says.
  static cudaError_t launch_rows(void* self, void* arena, int rows, int variant) {
    auto* r = static_cast<GraphRunner*>(self);
    const LaunchVariant how = launch_variant(variant, r->has_dense());
    cudaError_t e = cudaSuccess;
    for (size_t k = 0; k < r->p_->steps.size() && e == cudaSuccess; ++k)
      e = r->launch_step(r->p_->steps[k], static_cast<float*>(arena), rows, how, k);
    return e;
  }

  bool has_dense() const {
    return std::any_of(p_->steps.begin(), p_->steps.end(), [](const DeviceStep& s) { return s.kind == DevKind::Dense; });
  }

  cudaError_t launch_tiles(const DeviceStep& s, float* arena, int rows, bool dependent) {
    DeviceStep step = s;
    int64_t stride = stride_;
    int batch_rows = rows;
    const float* weights = weights_;
    void* args[] = {&step, &arena, &stride, &batch_rows, &weights};
    const dim3 grid(unsigned(steps::dense_column_tiles(s)), unsigned(steps::dense_row_tiles(s, rows)));
    const void* kernel = step_has_16bit_tensors(s) ? reinterpret_cast<const void*>(&dense_tile_kernel<true>)
                                                   : reinterpret_cast<const void*>(&dense_tile_kernel<false>);
    return launch_kernel(stream_, kernel, grid, dim3(steps::kTileThreads), args, dependent);
  }

  cudaGraphExec_t instantiate(cudaError_t e) { return end_capture(stream_, e, kWho); }


  std::shared_ptr<const DeviceProgram> p_;
  std::shared_ptr<GraphChoices> choices_;  // what was timed, shared with clones
  std::string device_name_;
  int device_ = 0;
  int sms_ = 1;
  cudaStream_t stream_ = nullptr;
  float* arena_ = nullptr;
  float* weights_ = nullptr;
  float* in_ = nullptr;
  float* out_ = nullptr;
  std::vector<size_t> in_at_, out_at_;
  std::string run_choice_;  // describe(): what capture_run_graphs measured
  cudaGraphExec_t plain_ = nullptr, reset_ = nullptr;
  // Batched rows (reserve_rows): a row arena per row, pinned staging, a graph per batch size.
  int64_t stride_ = 0;
  BatchGraphs batch_;
};

}  // namespace

void detail::load_graph_form_kernels() {
  for (StepKernel k : kKernels) detail::load_kernel(k);
  for (StepKernel k : kMixedKernels) detail::load_kernel(k);
  detail::load_kernel(dense_tile_kernel<false>);
  detail::load_kernel(dense_tile_kernel<true>);
}

std::unique_ptr<ProgramRunner> start_graph_runner(std::shared_ptr<const DeviceProgram> program, int device,
                                                  std::shared_ptr<GraphChoices> choices) {
  return std::make_unique<GraphRunner>(std::move(program), device, std::move(choices));
}

}  // namespace tickinfer::cuda
