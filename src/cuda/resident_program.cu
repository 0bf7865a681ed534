// The resident program form: any DeviceProgram run by one kernel that never exits, on one
// thread-block cluster. Why: the graph form pays a graph launch, a synchronise and a kernel
// boundary per op (several microseconds before any arithmetic for a small window model); here a
// request costs the mapped-memory round trip (2.4-2.8 us on the H200, docs/gpu.md) plus one
// cluster barrier per step (about 0.2 us), and no driver call.
//
// Per request: block 0 polls the request units in mapped pinned host memory (the resident LSTM's
// wire form: low word the payload, high word the sequence; only one block touches PCIe) and
// writes the inputs into the arena; a cluster barrier hands them to every block; each step runs
// its step body (the same bodies as the graph form and the host executor) with its items spread
// over every thread of the cluster, or, for a step that runs as one block (the recurrences), on
// block 0 alone with block barriers; a cluster barrier after every step publishes its outputs
// (barrier.cluster's release/acquire orders global memory across the cluster's SMs); block 0
// writes the reply units. The arena and weights stay in global memory (L2-resident at these
// sizes).
//
// Written and checked on the host (the step bodies, the request layout), not yet run on a GPU:
// compile picks it only when asked (cuda_form "program"), never by itself.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/cluster_barrier.cuh"
#include "cuda/device_runner.hpp"
#include "cuda/device_step_dispatch.cuh"
#include "cuda/grid_executor.cuh"
#include "cuda/kernel_loading.hpp"
#include "cuda/pinned_pool.hpp"
#include "cuda/resident_device_common.cuh"
#include "cuda/resident_launch.cuh"

namespace tickinfer::cuda {
namespace {

namespace cg = cooperative_groups;

constexpr int kProgramThreads = 256;  // per block; the step bodies take any count
constexpr int kMaxRegions = 16;       // inputs, outputs (Servable's kMaxTensors)

struct ProgramDesc {
  const DeviceStep* steps;  // device memory
  const int32_t* one_block;  // device memory: per step, runs_as_one_block
  int n_steps;
  float* arena;
  const float* weights;
  const DeviceRegion* state;  // device memory: zeroed on a reset
  int n_state;
  DeviceRegion in[kMaxRegions], out[kMaxRegions];
  int n_in, n_out;
  const unsigned long long* request;  // mapped: 1 + sum of input floats units
  unsigned long long* reply;          // mapped: sum of output floats units
  // Device memory: the request's command word for every block, two slots by the sequence's parity
  // (a slot is rewritten two requests later, with cluster barriers between).
  uint32_t* command;
};

// Items over every thread of the cluster.
struct ClusterExecutor {
  int first, stride;
  template <class F>
  __device__ void items(int64_t n, F&& f) const {
    for (int64_t i = first; i < n; i += stride) f(i);
  }
  __device__ void sync() const {}  // only one-block steps call it, and they run on BlockExecutor
};

// Block 0: every request unit (payload into the arena's input regions), the command word last.
__device__ void receive(const ProgramDesc& d, uint32_t seq) {
  int unit = 1;
  for (int r = 0; r < d.n_in; ++r) {
    const DeviceRegion in = d.in[r];
    for (int64_t i = threadIdx.x; i < in.floats; i += blockDim.x) {
      const unsigned long long v = detail::wait_for_unit(d.request + unit + i, seq);
      d.arena[in.offset + i] = __uint_as_float(uint32_t(v));
    }
    unit += int(in.floats);
  }
  if (threadIdx.x == 0) {
    const unsigned long long v = detail::wait_for_unit(d.request, seq);
    d.command[seq & 1u] = uint32_t(v);
  }
}

// The step into this block's shared memory: its fields are read in the bodies' inner loops, where
// a global copy would be reloaded after every store to the arena (the compiler cannot rule out
// the aliasing). The cluster barrier after each step keeps the next copy from overwriting it early.
__device__ void stage_step(const DeviceStep* from, DeviceStep* to) {
  static_assert(sizeof(DeviceStep) % 4 == 0);
  const uint32_t* src = reinterpret_cast<const uint32_t*>(from);
  uint32_t* dst = reinterpret_cast<uint32_t*>(to);
  for (int i = threadIdx.x; i < int(sizeof(DeviceStep) / 4); i += blockDim.x) dst[i] = src[i];
  __syncthreads();
}

// M: the program has a 16-bit tensor (cuda/tensor_view.hpp); then every step runs its Mixed body.
template <bool M>
__global__ void __launch_bounds__(kProgramThreads) resident_program_kernel(ProgramDesc d) {
  __shared__ DeviceStep step;
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = int(cluster.block_rank());
  const ClusterExecutor everyone{rank * int(blockDim.x) + int(threadIdx.x), int(cluster.num_blocks() * blockDim.x)};
  for (uint32_t seq = 1;; ++seq) {
    if (rank == 0) receive(d, seq);
    detail::cluster_barrier(cluster);
    const uint32_t cmd = d.command[seq & 1u];
    if (cmd & detail::kCommandStop) return;
    if (cmd & detail::kCommandReset) {
      for (int r = 0; r < d.n_state; ++r) {
        const DeviceRegion s = d.state[r];
        everyone.items(s.floats, [&](int64_t i) { d.arena[s.offset + i] = 0.0f; });
      }
      detail::cluster_barrier(cluster);
    }
    for (int k = 0; k < d.n_steps; ++k) {
      if (!d.one_block[k]) {
        stage_step(d.steps + k, &step);
        steps::run_step<M>(everyone, step, d.arena, d.weights);
      } else if (rank == 0) {
        stage_step(d.steps + k, &step);
        steps::run_step<M>(BlockExecutor{}, step, d.arena, d.weights);
      }
      detail::cluster_barrier(cluster);
    }
    if (rank == 0) {
      int unit = 0;
      for (int r = 0; r < d.n_out; ++r) {
        const DeviceRegion out = d.out[r];
        for (int64_t i = threadIdx.x; i < out.floats; i += blockDim.x)
          detail::store_system(d.reply + unit + i, (static_cast<unsigned long long>(seq) << 32) |
                                                       __float_as_uint(d.arena[out.offset + i]));
        unit += int(out.floats);
      }
    }
  }
}

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // a refused launch is reported here; the next cluster size must not see it again
  throw std::runtime_error(std::string("resident program: ") + what + ": " + cudaGetErrorString(e));
}

// A reply later than this means the kernel is lost: run() then fails, never waits again.
constexpr int64_t kDeadlineNs = 1'000'000'000;

class ResidentProgramRunner final : public ProgramRunner {
 public:
  ResidentProgramRunner(std::shared_ptr<const DeviceProgram> p, int device, int cluster) : p_(std::move(p)) {
    try {
      start(device, cluster);
    } catch (...) {
      release();
      throw;
    }
  }
  ~ResidentProgramRunner() override { release(); }

  bool run(const float* const* inputs, float* const* outputs, bool reset) noexcept override {
    if (!answering_) return false;
    const unsigned long long seq = ++seq_;
    int unit = 1;
    for (size_t r = 0; r < p_->inputs.size(); ++r) {
      const int64_t n = p_->inputs[r].floats;
      for (int64_t i = 0; i < n; ++i) {
        uint32_t bits;
        std::memcpy(&bits, inputs[r] + i, 4);
        std::atomic_ref<unsigned long long>(request_.host[unit + i]).store((seq << 32) | bits, std::memory_order_relaxed);
      }
      unit += int(n);
    }
    std::atomic_ref<unsigned long long>(request_.host[0])
        .store((seq << 32) | (reset ? detail::kCommandReset : 0u), std::memory_order_release);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(kDeadlineNs);
    unit = 0;
    for (size_t r = 0; r < p_->outputs.size(); ++r) {
      const int64_t n = p_->outputs[r].floats;
      for (int64_t i = 0; i < n; ++i) {
        unsigned long long v;
        for (uint32_t spins = 0;; ++spins) {
          v = std::atomic_ref<unsigned long long>(reply_.host[unit + i]).load(std::memory_order_acquire);
          if ((v >> 32) == seq) break;
          if ((spins & 1023u) == 1023u && std::chrono::steady_clock::now() > deadline) {
            answering_ = false;
            return false;
          }
        }
        const uint32_t bits = uint32_t(v);
        std::memcpy(outputs[r] + i, &bits, 4);
      }
      unit += int(n);
    }
    return true;
  }

  std::string reserve_rows(int) override {
    return "the resident program kernel runs one row per request; the CUDA graph form runs batches (cuda_form graph)";
  }
  bool run_rows(const float*, int, float*) noexcept override { return false; }

  std::string describe() const override {
    return "resident program kernel on " + device_name_ + ": one cluster of " + std::to_string(cluster_) + " blocks x " +
           std::to_string(kProgramThreads) + " threads, " + std::to_string(p_->steps.size()) +
           " steps with a cluster barrier after each, arena " + std::to_string(p_->arena_floats * 4) + " bytes";
  }

 private:
  void start(int device, int cluster) {
    if (std::string e = program_error(*p_); !e.empty()) throw std::runtime_error("resident program: " + e);
    if (p_->inputs.size() > size_t(kMaxRegions) || p_->outputs.size() > size_t(kMaxRegions))
      throw std::runtime_error("resident program: more than 16 inputs or outputs");
    if (cluster < 1 || cluster > 16) throw std::runtime_error("resident program: a cluster is 1 to 16 blocks");
    // The reply units are the only sign the kernel took a request: with none, run() could not
    // wait for it and the next request would overwrite one it had not read.
    if (std::none_of(p_->outputs.begin(), p_->outputs.end(), [](const DeviceRegion& r) { return r.floats > 0; }))
      throw std::runtime_error("resident program: the model has no output values to reply with");
    check(cudaSetDevice(device), "cudaSetDevice");
    load_every_kernel();
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    if (prop.major < 9) throw std::runtime_error("resident program: needs thread-block clusters (sm_90)");
    device_name_ = prop.name;
    cluster_ = cluster;
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    ProgramDesc d{};
    d.steps = static_cast<const DeviceStep*>(upload(p_->steps.data(), p_->steps.size() * sizeof(DeviceStep)));
    std::vector<int32_t> one_block;
    for (const DeviceStep& st : p_->steps) one_block.push_back(runs_as_one_block(st) ? 1 : 0);
    d.one_block = static_cast<const int32_t*>(upload(one_block.data(), one_block.size() * 4));
    d.n_steps = int(p_->steps.size());
    d.arena = static_cast<float*>(upload(nullptr, size_t(p_->arena_floats) * 4));
    d.weights = static_cast<const float*>(upload(p_->weights.data(), p_->weights.size() * 4));
    d.state = static_cast<const DeviceRegion*>(upload(p_->state.data(), p_->state.size() * sizeof(DeviceRegion)));
    d.n_state = int(p_->state.size());
    d.command = static_cast<uint32_t*>(upload(nullptr, 8));
    size_t in_units = 1, out_units = 0;
    for (const DeviceRegion& r : p_->inputs) d.in[d.n_in++] = r, in_units += size_t(r.floats);
    for (const DeviceRegion& r : p_->outputs) d.out[d.n_out++] = r, out_units += size_t(r.floats);
    request_ = detail::take_mapped(in_units);
    reply_ = detail::take_mapped(std::max<size_t>(out_units, 1));
    d.request = request_.device;
    d.reply = reply_.device;
    // More than half a multiprocessor's shared memory per block: no two blocks share one.
    const size_t shared = std::min(size_t(prop.sharedMemPerMultiprocessor) / 2 + 1024, size_t(prop.sharedMemPerBlockOptin));
    check(cudaStreamSynchronize(stream_), "the uploads");
    const bool mixed = std::any_of(p_->steps.begin(), p_->steps.end(), step_has_16bit_tensors);
    check(detail::launch_cluster(mixed ? resident_program_kernel<true> : resident_program_kernel<false>, d, cluster,
                                 kProgramThreads, shared, stream_, false),
          "launching the kernel");
    running_ = true;
    // One request proves the kernel is alive before anyone relies on it.
    ProgramIo io(*p_, 0.0f);
    if (!run(io.in_ptrs.data(), io.out_ptrs.data(), true))
      throw std::runtime_error(std::string("resident program: no reply to the first request in 1 s (stream: ") +
                               cudaGetErrorString(cudaStreamQuery(stream_)) + "); " + detail::kNoReplyHint);
  }

  void* upload(const void* src, size_t bytes) {
    void* p = nullptr;
    check(cudaMallocAsync(&p, std::max<size_t>(bytes, 4), stream_), "cudaMallocAsync");
    buffers_.push_back(p);
    if (src && bytes) check(cudaMemcpyAsync(p, src, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
    if (!src) check(cudaMemsetAsync(p, 0, std::max<size_t>(bytes, 4), stream_), "cudaMemsetAsync");
    return p;
  }

  void release() noexcept {
    // The stop command, every unit, so block 0 sees it wherever it waits; sent to a kernel that
    // stopped answering too (wait_for_unit takes a later sequence), which ends it if it was only
    // late or slow. Only an answering kernel is waited for.
    if (running_) {
      const unsigned long long seq = ++seq_;
      size_t units = 1;
      for (const DeviceRegion& r : p_->inputs) units += size_t(r.floats);
      for (size_t i = units; i-- > 0;)
        std::atomic_ref<unsigned long long>(request_.host[i]).store((seq << 32) | detail::kCommandStop,
                                                                    std::memory_order_release);
      if (answering_) cudaStreamSynchronize(stream_);
    }
    running_ = false;
    for (void* p : buffers_) cudaFreeAsync(p, stream_);
    buffers_.clear();
    if (stream_ && answering_) cudaStreamSynchronize(stream_);  // a lost kernel never ends: the context's teardown ends it
    if (stream_) cudaStreamDestroy(stream_);
    stream_ = nullptr;
    if (answering_) {  // a lost kernel may still read and write them: they are never reused then
      detail::give_back_mapped(request_.host);
      detail::give_back_mapped(reply_.host);
    }
    request_ = reply_ = {};
  }

  std::shared_ptr<const DeviceProgram> p_;
  std::string device_name_;
  int cluster_ = 0;
  cudaStream_t stream_ = nullptr;
  std::vector<void*> buffers_;
  detail::MappedSlot request_, reply_;
  uint32_t seq_ = 0;
  bool running_ = false, answering_ = true;
};

}  // namespace

void detail::load_resident_program_kernels() {
  detail::load_kernel(resident_program_kernel<false>);
  detail::load_kernel(resident_program_kernel<true>);
}

std::unique_ptr<ProgramRunner> start_resident_program(std::shared_ptr<const DeviceProgram> program, int device,
                                                      int cluster) {
  return std::make_unique<ResidentProgramRunner>(std::move(program), device, cluster);
}

}  // namespace tickinfer::cuda
