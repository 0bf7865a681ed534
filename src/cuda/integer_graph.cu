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

#include "cuda/grid_executor.cuh"
#include "cuda/integer_runner.hpp"
#include "cuda/integer_steps.cuh"
#include "cuda/pinned_pool.hpp"
#include "cuda/stream_graph.hpp"

namespace tickinfer::cuda {
namespace {

template <IntKind K>
__global__ void __launch_bounds__(256) integer_kernel(IntegerStep s, int8_t* arena, const uint8_t* params) {
  intsteps::run_kind<K>(GridExecutor{}, s, arena, params);
}

using IntegerKernel = void (*)(IntegerStep, int8_t*, const uint8_t*);

template <int... I>
constexpr std::array<IntegerKernel, sizeof...(I)> kernel_table(std::integer_sequence<int, I...>) {
  return {&integer_kernel<IntKind(I)>...};
}
constexpr auto kKernels = kernel_table(std::make_integer_sequence<int, int(IntKind::Count)>{});
constexpr int kThreads = 128;

constexpr const char* kWho = "CUDA integer program";

class IntegerGraphRunner final : public IntegerRunner {
 public:
  IntegerGraphRunner(std::shared_ptr<const IntegerProgram> p, int device) : p_(std::move(p)) {
    try {
      start(device);
    } catch (...) {
      release();
      throw;
    }
  }
  ~IntegerGraphRunner() override { release(); }

  bool run(const int8_t* const* inputs, int8_t* const* outputs) noexcept override {
    for (size_t i = 0; i < p_->inputs.size(); ++i) std::memcpy(in_ + in_at_[i], inputs[i], size_t(p_->inputs[i].bytes));
    if (cudaGraphLaunch(graph_, stream_) != cudaSuccess) return false;
    if (cudaStreamSynchronize(stream_) != cudaSuccess) return false;
    for (size_t o = 0; o < p_->outputs.size(); ++o) std::memcpy(outputs[o], out_ + out_at_[o], size_t(p_->outputs[o].bytes));
    return true;
  }

  std::string describe() const override {
    return "CUDA graph of the integer program on " + device_name_ + ": " + std::to_string(p_->steps.size()) +
           " kernels, arena " + std::to_string(p_->arena_bytes) + " bytes, parameters " +
           std::to_string(p_->params.size()) + " bytes in device memory";
  }

 private:
  void start(int device) {
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
    graph_ = capture();
    check_cuda(cudaStreamSynchronize(stream_), kWho, "the parameters' upload");
  }

  void release() noexcept {
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

  // One pinned buffer for a list of regions, each at its own 8-byte aligned offset.
  static int8_t* staging(const std::vector<ByteRegion>& regions, std::vector<size_t>& at) {
    size_t bytes = 0;
    for (const ByteRegion& r : regions) at.push_back(bytes), bytes += (size_t(r.bytes) + 7) / 8 * 8;
    return reinterpret_cast<int8_t*>(detail::take_mapped(std::max<size_t>(bytes / 8, 1)).host);
  }

  cudaGraphExec_t capture() {
    check_cuda(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), kWho, "cudaStreamBeginCapture");
    cudaError_t e = cudaSuccess;
    auto keep = [&](cudaError_t r) {
      if (e == cudaSuccess) e = r;
    };
    for (size_t i = 0; i < p_->inputs.size(); ++i)
      keep(cudaMemcpyAsync(arena_ + p_->inputs[i].offset, in_ + in_at_[i], size_t(p_->inputs[i].bytes),
                           cudaMemcpyHostToDevice, stream_));
    for (const IntegerStep& s : p_->steps) {
      IntegerStep step = s;
      int8_t* arena = arena_;
      const uint8_t* params = params_;
      void* args[] = {&step, &arena, &params};
      const int64_t items = std::max<int64_t>(s.count, 1);
      const dim3 grid(unsigned(std::min<int64_t>((items + kThreads - 1) / kThreads, int64_t(sms_) * 16)));
      keep(cudaLaunchKernel(reinterpret_cast<const void*>(kKernels[size_t(s.kind)]), grid, dim3(kThreads), args, 0,
                            stream_));
    }
    for (size_t o = 0; o < p_->outputs.size(); ++o)
      keep(cudaMemcpyAsync(out_ + out_at_[o], arena_ + p_->outputs[o].offset, size_t(p_->outputs[o].bytes),
                           cudaMemcpyDeviceToHost, stream_));
    return end_capture(stream_, e, kWho);
  }

  std::shared_ptr<const IntegerProgram> p_;
  std::string device_name_;
  int sms_ = 1;
  cudaStream_t stream_ = nullptr;
  int8_t* arena_ = nullptr;
  uint8_t* params_ = nullptr;
  int8_t* in_ = nullptr;
  int8_t* out_ = nullptr;
  std::vector<size_t> in_at_, out_at_;
  cudaGraphExec_t graph_ = nullptr;
};

}  // namespace

std::unique_ptr<IntegerRunner> start_integer_graph(std::shared_ptr<const IntegerProgram> program, int device) {
  return std::make_unique<IntegerGraphRunner>(std::move(program), device);
}

}  // namespace tickinfer::cuda
