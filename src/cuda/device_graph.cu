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

#include "cuda/device_runner.hpp"
#include "cuda/device_step_dispatch.cuh"
#include "cuda/pinned_pool.hpp"

namespace tickinfer::cuda {
namespace {

// Items spread over the grid (grid-stride), or over the one block of a one-block step.
struct GridExecutor {
  template <class F>
  __host__ __device__ void items(int64_t n, F&& f) const {
#if defined(__CUDA_ARCH__)
    const int64_t stride = int64_t(gridDim.x) * blockDim.x;
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) f(i);
#endif
  }
  __host__ __device__ void sync() const {
#if defined(__CUDA_ARCH__)
    __syncthreads();
#endif
  }
};

constexpr int kGridThreads = 128;

template <DevKind K>
__global__ void __launch_bounds__(1024) step_kernel(DeviceStep s, float* arena, const float* weights) {
  steps::run_kind<K>(GridExecutor{}, s, arena, weights);
}

using StepKernel = void (*)(DeviceStep, float*, const float*);

template <int... I>
constexpr std::array<StepKernel, sizeof...(I)> kernel_table(std::integer_sequence<int, I...>) {
  return {&step_kernel<DevKind(I)>...};
}
constexpr auto kKernels = kernel_table(std::make_integer_sequence<int, int(DevKind::Count)>{});

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA graph form: ") + what + ": " + cudaGetErrorString(e));
}

// Threads for a one-block step: one per gate row of its widest phase, within a block's 1024.
int one_block_threads(const DeviceStep& s) {
  const int widest = std::max({4 * s.out_width, 6 * s.out_width, s.in_width, s.heads * (s.key_dim + s.value_dim)});
  return std::clamp((widest + 31) / 32 * 32, 64, 1024);
}

class GraphRunner final : public ProgramRunner {
 public:
  GraphRunner(std::shared_ptr<const DeviceProgram> p, int device) : p_(std::move(p)) {
    try {
      start(device);
    } catch (...) {
      release();
      throw;
    }
  }

  ~GraphRunner() override { release(); }

 private:
  void start(int device) {
    if (std::string e = program_error(*p_); !e.empty()) throw std::runtime_error("CUDA graph form: " + e);
    check(cudaSetDevice(device), "cudaSetDevice");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    device_name_ = prop.name;
    sms_ = prop.multiProcessorCount;
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    // Stream-ordered memory and pooled pinned buffers: neither synchronises the whole device, so
    // a resident plan running beside this one is never waited on.
    check(cudaMallocAsync(reinterpret_cast<void**>(&arena_), bytes(std::max<int64_t>(p_->arena_floats, 1)), stream_),
          "cudaMallocAsync arena");
    check(cudaMemsetAsync(arena_, 0, bytes(p_->arena_floats), stream_), "cudaMemsetAsync arena");
    check(cudaMallocAsync(reinterpret_cast<void**>(&weights_), bytes(std::max<size_t>(p_->weights.size(), 1)), stream_),
          "cudaMallocAsync weights");
    if (!p_->weights.empty())
      check(cudaMemcpyAsync(weights_, p_->weights.data(), bytes(p_->weights.size()), cudaMemcpyHostToDevice, stream_),
            "cudaMemcpyAsync weights");
    in_ = staging(p_->inputs, in_at_);
    out_ = staging(p_->outputs, out_at_);
    plain_ = capture(false);
    reset_ = capture(true);
    check(cudaStreamSynchronize(stream_), "the weights' upload");
  }

  void release() noexcept {
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
    for (size_t i = 0; i < p_->inputs.size(); ++i) std::memcpy(in_ + in_at_[i], inputs[i], bytes(p_->inputs[i].floats));
    if (cudaGraphLaunch(reset ? reset_ : plain_, stream_) != cudaSuccess) return false;
    if (cudaStreamSynchronize(stream_) != cudaSuccess) return false;
    for (size_t o = 0; o < p_->outputs.size(); ++o) std::memcpy(outputs[o], out_ + out_at_[o], bytes(p_->outputs[o].floats));
    return true;
  }

  std::string describe() const override {
    return "CUDA graph on " + device_name_ + ": " + std::to_string(p_->steps.size()) + " kernels, arena " +
           std::to_string(bytes(p_->arena_floats)) + " bytes, weights " + std::to_string(bytes(p_->weights.size())) +
           " bytes in device memory";
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
    return reinterpret_cast<float*>(detail::take_mapped((std::max<size_t>(floats, 1) + 1) / 2).host);
  }

  cudaGraphExec_t capture(bool reset) {
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
    for (const DeviceStep& s : p_->steps) {
      DeviceStep step = s;
      float* arena = arena_;
      const float* weights = weights_;
      void* args[] = {&step, &arena, &weights};
      dim3 grid(1), block(unsigned(one_block_threads(s)));
      if (!runs_as_one_block(s)) {
        const int64_t items = std::max<int64_t>(step_items(s), 1);
        block = dim3(kGridThreads);
        grid = dim3(unsigned(std::min<int64_t>((items + kGridThreads - 1) / kGridThreads, int64_t(sms_) * 16)));
      }
      keep(cudaLaunchKernel(reinterpret_cast<const void*>(kKernels[size_t(s.kind)]), grid, block, args, 0, stream_));
    }
    for (size_t o = 0; o < p_->outputs.size(); ++o)
      keep(cudaMemcpyAsync(out_ + out_at_[o], arena_ + p_->outputs[o].offset, bytes(p_->outputs[o].floats),
                           cudaMemcpyDeviceToHost, stream_));
    cudaGraph_t graph = nullptr;
    keep(cudaStreamEndCapture(stream_, &graph));
    check(e, "capturing the steps");
    cudaGraphExec_t exec = nullptr;
    e = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    check(e, "cudaGraphInstantiate");
    return exec;
  }

  std::shared_ptr<const DeviceProgram> p_;
  std::string device_name_;
  int sms_ = 1;
  cudaStream_t stream_ = nullptr;
  float* arena_ = nullptr;
  float* weights_ = nullptr;
  float* in_ = nullptr;
  float* out_ = nullptr;
  std::vector<size_t> in_at_, out_at_;
  cudaGraphExec_t plain_ = nullptr, reset_ = nullptr;
};

}  // namespace

std::unique_ptr<ProgramRunner> start_graph_runner(std::shared_ptr<const DeviceProgram> program, int device) {
  return std::make_unique<GraphRunner>(std::move(program), device);
}

}  // namespace tickinfer::cuda
