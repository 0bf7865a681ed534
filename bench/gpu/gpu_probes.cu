// Latency floors of this GPU and host, measured before any model: what a launch and a
// synchronise cost, what a CUDA graph saves, what a pinned copy round trip costs, what a
// resident kernel's round trip through mapped pinned memory costs (the transport floor of every
// resident plan), and what a cluster barrier costs. One JSON line per probe.
//
// Usage: gpu_probes [--blocking]   (--blocking: cudaDeviceScheduleBlockingSync instead of spin)
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench_io.hpp"
#include "cuda/resident_device_common.cuh"

namespace cg = cooperative_groups;
using Clock = std::chrono::steady_clock;
using tickinfer::benchgpu::json;
using tickinfer::cuda::detail::global_ns;
using tickinfer::cuda::detail::load_system;
using tickinfer::cuda::detail::store_system;
using tickinfer::benchgpu::summarize;

#define CHECK(call)                                                                              \
  do {                                                                                           \
    cudaError_t e_ = (call);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "gpu_probes: %s: %s (line %d)\n", #call, cudaGetErrorString(e_), __LINE__); \
      std::exit(2);                                                                              \
    }                                                                                            \
  } while (0)

__global__ void nop_kernel() {}

// The resident plan's transport with no arithmetic: wait for every request unit of `seq`, then
// write every reply unit with it. Unit 0's low word 2 = stop.
__global__ void echo_kernel(const unsigned long long* in, int n_in, unsigned long long* out, int n_out) {
  __shared__ unsigned cmd;
  for (unsigned seq = 1;; ++seq) {
    for (int u = threadIdx.x; u < n_in; u += blockDim.x) {
      unsigned long long v;
      do v = load_system(in + u);
      while (unsigned(v >> 32) != seq);
      if (u == 0) cmd = unsigned(v);
    }
    __syncthreads();
    if (cmd & 2u) return;
    for (int o = threadIdx.x; o < n_out; o += blockDim.x) store_system(out + o, (static_cast<unsigned long long>(seq) << 32) | 1u);
    __syncthreads();
  }
}

__global__ void cluster_sync_kernel(int n, unsigned long long* ns) {
  cg::cluster_group c = cg::this_cluster();
  c.sync();
  const unsigned long long t0 = global_ns();
  for (int i = 0; i < n; ++i) c.sync();
  const unsigned long long t1 = global_ns();
  if (c.block_rank() == 0 && threadIdx.x == 0) *ns = t1 - t0;
}

const char* g_sync = "spin";

template <class F>
std::vector<double> time_us(int n, F&& f) {
  std::vector<double> v;
  v.reserve(n);
  for (int i = 0; i < 200; ++i) f();
  for (int i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    f();
    v.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  return v;
}

void report(const char* probe, const std::string& extra, const std::vector<double>& v) {
  std::printf("{\"probe\":\"%s\",\"sync\":\"%s\"%s,\"us\":%s}\n", probe, g_sync, extra.c_str(), json(summarize(v)).c_str());
  std::fflush(stdout);
}

void echo_probe(cudaStream_t s, int n_in, int n_out, int threads) {
  unsigned long long *in = nullptr, *out = nullptr;
  CHECK(cudaHostAlloc(reinterpret_cast<void**>(&in), n_in * 8, cudaHostAllocMapped));
  CHECK(cudaHostAlloc(reinterpret_cast<void**>(&out), n_out * 8, cudaHostAllocMapped));
  std::memset(in, 0, n_in * 8);
  std::memset(out, 0, n_out * 8);
  void *din, *dout;
  CHECK(cudaHostGetDevicePointer(&din, in, 0));
  CHECK(cudaHostGetDevicePointer(&dout, out, 0));
  echo_kernel<<<1, threads, 0, s>>>(static_cast<const unsigned long long*>(din), n_in,
                                    static_cast<unsigned long long*>(dout), n_out);
  CHECK(cudaGetLastError());
  unsigned long long seq = 0;
  auto round = [&](unsigned cmd) {
    ++seq;
    for (int u = n_in - 1; u >= 0; --u)
      std::atomic_ref<unsigned long long>(in[u]).store((seq << 32) | (u == 0 ? cmd : 0u), std::memory_order_release);
    if (cmd & 2u) return;
    const auto deadline = Clock::now() + std::chrono::seconds(2);
    for (int o = 0; o < n_out; ++o)
      while ((std::atomic_ref<unsigned long long>(out[o]).load(std::memory_order_acquire) >> 32) != seq)
        if (Clock::now() > deadline) {
          std::fprintf(stderr, "gpu_probes: echo kernel did not answer\n");
          std::exit(2);
        }
  };
  auto v = time_us(20000, [&] { round(0); });
  round(2);
  CHECK(cudaStreamSynchronize(s));
  report("resident_echo", ",\"request_units\":" + std::to_string(n_in) + ",\"reply_units\":" + std::to_string(n_out), v);
  CHECK(cudaFreeHost(in));
  CHECK(cudaFreeHost(out));
}

void cluster_probe(int c) {
  unsigned long long* ns;
  CHECK(cudaMalloc(&ns, 8));
  if (c > 8) CHECK(cudaFuncSetAttribute(cluster_sync_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  // As the resident kernels sit: more than half a multiprocessor's shared memory per block, so
  // each block has its own (the barrier then crosses multiprocessors, as theirs does).
  int device = 0, per_sm = 0, optin = 0;
  CHECK(cudaGetDevice(&device));
  CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const int shared = std::min(per_sm / 2 + 1024, optin);
  CHECK(cudaFuncSetAttribute(cluster_sync_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(c);
  cfg.blockDim = dim3(256);
  cfg.dynamicSmemBytes = size_t(shared);
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = c;
  attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  const int n = 100000;
  CHECK(cudaLaunchKernelEx(&cfg, cluster_sync_kernel, n, ns));
  CHECK(cudaDeviceSynchronize());
  unsigned long long t = 0;
  CHECK(cudaMemcpy(&t, ns, 8, cudaMemcpyDeviceToHost));
  std::printf("{\"probe\":\"cluster_sync\",\"cluster\":%d,\"threads\":256,\"ns_per_sync\":%.1f}\n", c, double(t) / n);
  CHECK(cudaFree(ns));
}

int main(int argc, char** argv) {
  const bool blocking = argc > 1 && std::strcmp(argv[1], "--blocking") == 0;
  if (blocking) g_sync = "blocking";
  int drv = 0, rt = 0, count = 0;
  CHECK(cudaDriverGetVersion(&drv));
  CHECK(cudaRuntimeGetVersion(&rt));
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "gpu_probes: no CUDA device (driver %d)\n", drv);
    return 77;
  }
  CHECK(cudaSetDeviceFlags(blocking ? cudaDeviceScheduleBlockingSync : cudaDeviceScheduleSpin));
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("{\"probe\":\"device\",\"name\":\"%s\",\"sm\":\"%d.%d\",\"multiprocessors\":%d,\"l2_bytes\":%d,"
              "\"shared_per_block_optin\":%zu,\"shared_per_sm\":%zu,\"regs_per_sm\":%d,\"driver\":%d,\"runtime\":%d,"
              "\"sync\":\"%s\"}\n",
              p.name, p.major, p.minor, p.multiProcessorCount, p.l2CacheSize, p.sharedMemPerBlockOptin,
              p.sharedMemPerMultiprocessor, p.regsPerMultiprocessor, drv, rt, blocking ? "blocking" : "spin");
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // (a) launch + synchronise, and the enqueue alone.
  report("launch_sync", "", time_us(20000, [&] {
           nop_kernel<<<1, 32, 0, s>>>();
           cudaStreamSynchronize(s);
         }));
  report("launch_enqueue_only", "", time_us(20000, [&] { nop_kernel<<<1, 32, 0, s>>>(); }));
  CHECK(cudaStreamSynchronize(s));
  // (b) graphs of 1, 8, 32 nop kernels.
  for (int nodes : {1, 8, 32}) {
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < nodes; ++i) nop_kernel<<<1, 32, 0, s>>>();
    CHECK(cudaStreamEndCapture(s, &g));
    CHECK(cudaGraphInstantiate(&ge, g, 0));
    report("graph_launch_sync", ",\"nodes\":" + std::to_string(nodes), time_us(20000, [&] {
             cudaGraphLaunch(ge, s);
             cudaStreamSynchronize(s);
           }));
    CHECK(cudaGraphExecDestroy(ge));
    CHECK(cudaGraphDestroy(g));
  }
  // (c) 64-byte pinned copy in, nop kernel, copy out, synchronise: the classic path's floor.
  void *hin, *hout, *dbuf;
  CHECK(cudaHostAlloc(&hin, 64, 0));
  CHECK(cudaHostAlloc(&hout, 64, 0));
  CHECK(cudaMalloc(&dbuf, 64));
  std::memset(hin, 1, 64);
  report("copy_kernel_copy_sync", ",\"bytes\":64", time_us(20000, [&] {
           cudaMemcpyAsync(dbuf, hin, 64, cudaMemcpyHostToDevice, s);
           nop_kernel<<<1, 32, 0, s>>>();
           cudaMemcpyAsync(hout, dbuf, 64, cudaMemcpyDeviceToHost, s);
           cudaStreamSynchronize(s);
         }));
  CHECK(cudaGetLastError());
  if (blocking) return 0;
  // (d) resident kernel round trips through mapped pinned memory.
  echo_probe(s, 1, 1, 32);
  echo_probe(s, 129, 32, 256);   // lstm_tiny's stream step: 128 inputs + command, 32 outputs
  echo_probe(s, 321, 1, 512);    // lstm_window: 32 x 10 inputs + command, 1 output
  // (e) cluster barrier.
  for (int c : {1, 2, 4, 8, 16}) cluster_probe(c);
  return 0;
}
