// The integer program on a GPU: every step one kernel (its kind's instantiation of the step
// bodies in integer_steps.cuh), the copies in and out and the steps captured once into a CUDA
// graph, so a run is one graph launch. The parameters and the arena's constant image are copied
// to the device once, at start.
#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cuda/dependent_launch.cuh"
#include "cuda/grid_executor.cuh"
#include "cuda/kernel_loading.hpp"
#include "cuda/integer_fc_tiles.cuh"
#include "cuda/integer_runner.hpp"
#include "cuda/integer_steps.cuh"
#include "cuda/pinned_pool.hpp"
#include "cuda/stream_graph.hpp"

namespace tickinfer::cuda {
namespace {

// The grid's second dimension is the row of a batch: each row's arena is row_stride bytes on.
template <IntKind K>
__global__ void __launch_bounds__(256) integer_kernel(IntegerStep s, int8_t* arena, int64_t row_stride,
                                                      const uint8_t* params) {
  release_dependents_then_wait();
  intsteps::run_kind<K>(GridExecutor{}, s, arena + int64_t(blockIdx.y) * row_stride, params);
}

using IntegerKernel = void (*)(IntegerStep, int8_t*, int64_t, const uint8_t*);

// A batched FULLY_CONNECTED as tiles (integer_fc_tiles.cuh): block (x, y) is unit tile x of row tile y.
__global__ void __launch_bounds__(intsteps::kFcTileThreads)
    fc_tile_kernel(IntegerStep s, int8_t* arena, int64_t row_stride, int batch_rows, const uint8_t* params) {
  __shared__ intsteps::FcTileShared tile;
  release_dependents_then_wait();
  intsteps::fully_connected_tile(BlockExecutor{}, s, arena, row_stride, batch_rows, params, int64_t(blockIdx.y),
                                 int(blockIdx.x), tile);
}

template <int... I>
constexpr std::array<IntegerKernel, sizeof...(I)> kernel_table(std::integer_sequence<int, I...>) {
  return {&integer_kernel<IntKind(I)>...};
}
constexpr auto kKernels = kernel_table(std::make_integer_sequence<int, int(IntKind::Count)>{});
constexpr int kThreads = 128;
constexpr int kOneBlockThreads = 256;  // the kernels' launch bound

constexpr const char* kWho = "CUDA integer program";

class IntegerGraphRunner final : public IntegerRunner {
 public:
  IntegerGraphRunner(std::shared_ptr<const IntegerProgram> p, int device, std::shared_ptr<GraphChoices> choices)
      : p_(std::move(p)), choices_(choices ? std::move(choices) : std::make_shared<GraphChoices>()) {
    try {
      start(device);
    } catch (...) {
      release();
      throw;
    }
  }
  ~IntegerGraphRunner() override { release(); }

  bool run(const int8_t* const* inputs, int8_t* const* outputs) noexcept override {
    select_device(device_);
    for (size_t i = 0; i < p_->inputs.size(); ++i) std::memcpy(in_ + in_at_[i], inputs[i], size_t(p_->inputs[i].bytes));
    if (cudaGraphLaunch(graph_, stream_) != cudaSuccess) return false;
    if (cudaStreamSynchronize(stream_) != cudaSuccess) return false;
    for (size_t o = 0; o < p_->outputs.size(); ++o) std::memcpy(outputs[o], out_ + out_at_[o], size_t(p_->outputs[o].bytes));
    return true;
  }

  std::string reserve_rows(int max_rows) override {
    if (std::string why = integer_why_not_batched(*p_); !why.empty()) return why;
    select_device(device_);
    if (max_rows > 65535) return "at most 65535 rows per call (a grid's second dimension)";
    try {
      stride_ = integer_row_stride(*p_);
      const ByteRegion in = p_->inputs[0], out = p_->outputs[0];
      batch_.reserve(stream_, max_rows, stride_, {in.offset, in.bytes}, {out.offset, out.bytes}, &launch_rows, this,
                     launch_variants(has_fc()), *choices_, kWho);
      auto* arena = static_cast<int8_t*>(batch_.arena());
      for (int b = 0; b < max_rows && !p_->arena_image.empty(); ++b)  // each row's constants
        check_cuda(cudaMemcpyAsync(arena + b * stride_, p_->arena_image.data(), p_->arena_image.size(),
                                   cudaMemcpyHostToDevice, stream_),
                   kWho, "the batch arena's constants");
      check_cuda(cudaStreamSynchronize(stream_), kWho, "the batch arena's constants");
    } catch (const std::exception& e) {
      batch_.release(stream_);
      return e.what();
    }
    return {};
  }

  bool run_rows(const int8_t* x, int rows, int8_t* y) noexcept override {
    if (rows < 1 || rows > std::max(batch_.max_rows(), 1)) return false;
    if (rows == 1) return run(&x, &y);  // selects the device itself
    select_device(device_);
    return batch_.run(stream_, x, rows, y);
  }

  std::string describe() const override {
    return "CUDA graph of the integer program on " + device_name_ + ": " + std::to_string(p_->steps.size()) +
           " kernels, arena " + std::to_string(p_->arena_bytes) + " bytes, parameters " +
           std::to_string(p_->params.size()) + " bytes in device memory" + run_choice_ +
           (batch_.choices().empty() ? "" : "; batches by variant (" + launch_variants_legend(has_fc()) + "), timed: " + batch_.choices());
  }

 private:
  void start(int device) {
    device_ = device;
    if (std::string e = integer_program_error(*p_); !e.empty()) throw std::runtime_error(std::string(kWho) + ": " + e);
    DeviceStream d = open_device_stream(device, kWho);
    stream_ = d.stream;
    device_name_ = d.name;
    sms_ = d.sms;
    arena_ = static_cast<int8_t*>(device_buffer(stream_, size_t(p_->arena_bytes), p_->arena_image.data(),
                                                p_->arena_image.size(), kWho, "the arena"));
    params_ = static_cast<uint8_t*>(
        device_buffer(stream_, p_->params.size(), p_->params.data(), p_->params.size(), kWho, "the parameters"));
    in_ = staging(p_->inputs, in_at_);
    out_ = staging(p_->outputs, out_at_);
    check_cuda(cudaStreamSynchronize(stream_), kWho, "the parameters' upload");
    capture_run_graph();
  }

  void release() noexcept {
    if (stream_) select_device(device_);  // only a device that was opened
    batch_.release(stream_);  // first: it frees on the stream destroyed below
    if (graph_) cudaGraphExecDestroy(graph_);
    if (arena_) cudaFreeAsync(arena_, stream_);
    if (params_) cudaFreeAsync(params_, stream_);
    if (stream_) {
      cudaStreamSynchronize(stream_);
      cudaStreamDestroy(stream_);
    }
    detail::give_back_mapped(reinterpret_cast<unsigned long long*>(in_));
    detail::give_back_mapped(reinterpret_cast<unsigned long long*>(out_));
  }

  static int8_t* take(size_t bytes) {
    return reinterpret_cast<int8_t*>(detail::take_mapped(std::max<size_t>((bytes + 7) / 8, 1)).host);
  }

  // One pinned buffer for a list of regions, each at its own 8-byte aligned offset.
  static int8_t* staging(const std::vector<ByteRegion>& regions, std::vector<size_t>& at) {
    size_t bytes = 0;
    for (const ByteRegion& r : regions) at.push_back(bytes), bytes += (size_t(r.bytes) + 7) / 8 * 8;
    return take(bytes);
  }

  bool has_fc() const {
    return std::any_of(p_->steps.begin(), p_->steps.end(),
                       [](const IntegerStep& s) { return s.kind == IntKind::FullyConnected; });
  }

  // run()'s graph with or without dependent launch, whichever this card runs faster (timed host
  // to host, the same bytes either way); a plan's clones take what the first timed.
  void capture_run_graph() {
    std::vector<int> candidates;
    for (int c = 0; c < launch_variants(has_fc()); ++c)
      if (!launch_variant(c, has_fc()).tiles) candidates.push_back(c);
    for (size_t i = 0; i < p_->inputs.size(); ++i) std::memset(in_ + in_at_[i], 0, size_t(p_->inputs[i].bytes));
    cuda::capture_run_graph(stream_, *choices_, candidates, has_fc(), [&](int c) { return capture(c); }, graph_,
                            run_choice_);
  }

  // Step k as `how` says: FULLY_CONNECTED as tiles or not, dependent on the kernel before it or
  // not (never the first, whose predecessor is the copy in).
  cudaError_t launch_step(const IntegerStep& s, int8_t* arena, int rows, LaunchVariant how, size_t k) {
    const bool dependent = how.dependent && k > 0;
    return how.tiles && s.kind == IntKind::FullyConnected ? launch_tiles(s, arena, rows, dependent)
                                                          : launch(s, arena, rows, dependent);
  }

  // One step's kernel over `rows` rows (grid.y); a row's blocks shrink as the rows grow, so a
  // batch keeps the card about as full as one row does.
  cudaError_t launch(const IntegerStep& s, int8_t* arena, int rows, bool dependent) {
    IntegerStep step = s;
    int64_t stride = stride_;
    const uint8_t* params = params_;
    void* args[] = {&step, &arena, &stride, &params};
    if (integer_one_block(s))  // one block per row walks the time steps, its threads the rows and units
      return launch_kernel(stream_, reinterpret_cast<const void*>(kKernels[size_t(s.kind)]), dim3(1, unsigned(rows)),
                           dim3(kOneBlockThreads), args, dependent);
    const int64_t items = std::max<int64_t>(s.count, 1);
    const int64_t blocks_per_row = std::max<int64_t>(int64_t(sms_) * 16 / rows, 1);
    const dim3 grid(unsigned(std::min<int64_t>((items + kThreads - 1) / kThreads, blocks_per_row)), unsigned(rows));
    return launch_kernel(stream_, reinterpret_cast<const void*>(kKernels[size_t(s.kind)]), grid, dim3(kThreads), args,
                         dependent);
  }

  // The steps over a batch's rows as launch_variant(variant) says.
  static cudaError_t launch_rows(void* self, void* arena, int rows, int variant) {
    auto* r = static_cast<IntegerGraphRunner*>(self);
    const LaunchVariant how = launch_variant(variant, r->has_fc());
    cudaError_t e = cudaSuccess;
    for (size_t k = 0; k < r->p_->steps.size() && e == cudaSuccess; ++k)
      e = r->launch_step(r->p_->steps[k], static_cast<int8_t*>(arena), rows, how, k);
    return e;
  }

  cudaError_t launch_tiles(const IntegerStep& s, int8_t* arena, int rows, bool dependent) {
    IntegerStep step = s;
    int64_t stride = stride_;
    int batch_rows = rows;
    const uint8_t* params = params_;
    void* args[] = {&step, &arena, &stride, &batch_rows, &params};
    const dim3 grid(unsigned(intsteps::fc_unit_tiles(s)), unsigned(intsteps::fc_row_tiles(s, rows)));
    return launch_kernel(stream_, reinterpret_cast<const void*>(&fc_tile_kernel), grid, dim3(intsteps::kFcTileThreads),
                         args, dependent);
  }

  cudaGraphExec_t capture(int variant) {
    const LaunchVariant how = launch_variant(variant, has_fc());
    check_cuda(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), kWho, "cudaStreamBeginCapture");
    cudaError_t e = cudaSuccess;
    auto keep = [&](cudaError_t r) {
      if (e == cudaSuccess) e = r;
    };
    for (size_t i = 0; i < p_->inputs.size(); ++i)
      keep(cudaMemcpyAsync(arena_ + p_->inputs[i].offset, in_ + in_at_[i], size_t(p_->inputs[i].bytes),
                           cudaMemcpyHostToDevice, stream_));
    for (size_t k = 0; k < p_->steps.size(); ++k) keep(launch_step(p_->steps[k], arena_, 1, how, k));
    for (size_t o = 0; o < p_->outputs.size(); ++o)
      keep(cudaMemcpyAsync(out_ + out_at_[o], arena_ + p_->outputs[o].offset, size_t(p_->outputs[o].bytes),
                           cudaMemcpyDeviceToHost, stream_));
    return end_capture(stream_, e, kWho);
  }

  std::shared_ptr<const IntegerProgram> p_;
  std::shared_ptr<GraphChoices> choices_;  // the timed variants (run(), each batch size), shared with clones
  std::string device_name_;
  int device_ = 0;
  int sms_ = 1;
  cudaStream_t stream_ = nullptr;
  int8_t* arena_ = nullptr;
  uint8_t* params_ = nullptr;
  int8_t* in_ = nullptr;
  int8_t* out_ = nullptr;
  std::vector<size_t> in_at_, out_at_;
  cudaGraphExec_t graph_ = nullptr;
  std::string run_choice_;  // describe(): what capture_run_graph measured
  // Batched rows (reserve_rows): a row arena per row, pinned staging, a graph per batch size.
  int64_t stride_ = 0;
  BatchGraphs batch_;
};

}  // namespace

void detail::load_integer_program_kernels() {
  for (IntegerKernel k : kKernels) detail::load_kernel(k);
  detail::load_kernel(fc_tile_kernel);
}

std::unique_ptr<IntegerRunner> start_integer_graph(std::shared_ptr<const IntegerProgram> program, int device,
                                                   std::shared_ptr<GraphChoices> choices) {
  return std::make_unique<IntegerGraphRunner>(std::move(program), device, std::move(choices));
}

}  // namespace tickinfer::cuda
