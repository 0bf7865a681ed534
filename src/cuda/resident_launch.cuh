// Launching a resident kernel as one thread-block cluster: the one place that sets its shared
// memory, allows clusters past the portable 8 blocks, refuses a cluster the card cannot place, and
// refuses an instantiation whose weights spilled to local memory. Every form launches through it.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "cuda/kernel_loading.hpp"

namespace tickinfer::cuda::detail {

// Local memory above this per thread means registers spilled: slower than the shared form, so the
// host tries another shape instead (cudaErrorInvalidConfiguration).
constexpr size_t kMaxLocalBytes = 32;

template <class Desc>
cudaError_t launch_cluster(void (*kernel)(Desc), const Desc& d, int cluster, int threads, size_t shared_bytes,
                           cudaStream_t stream, bool refuse_spills) {
  cudaError_t e = cudaSuccess;
  if (refuse_spills) {
    cudaFuncAttributes fa{};
    e = cudaFuncGetAttributes(&fa, kernel);
    if (e != cudaSuccess) return e;
    if (fa.localSizeBytes > kMaxLocalBytes) return cudaErrorInvalidConfiguration;
  }
  e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_bytes));
  if (e == cudaSuccess && cluster > 8) e = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  if (e != cudaSuccess) return e;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(cluster);
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = shared_bytes;
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cluster;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  // A cluster this card can never place (more blocks than a GPC holds at one block per
  // multiprocessor: a 16-block cluster on a part or a MIG slice with smaller GPCs) would be
  // accepted and queue forever, costing the caller its reply deadline and a lost kernel's
  // multiprocessors; asked first, it is refused like any other shape. A query the runtime cannot
  // answer leaves the launch to decide.
  int clusters = 0;
  e = cudaOccupancyMaxActiveClusters(&clusters, reinterpret_cast<const void*>(kernel), &cfg);
  if (e == cudaErrorInvalidClusterSize || (e == cudaSuccess && clusters == 0)) return cudaErrorInvalidClusterSize;
  if (e != cudaSuccess) cudaGetLastError();
  return cudaLaunchKernelEx(&cfg, kernel, d);
}

// The register-resident instantiations by weights per lane, each with the thread bound its
// register budget allows (8: 1024 threads, 16: 512, 32: 256). Kernels<L, H, N, T>::get() names
// the kernel template of one form.
template <template <int, int, int, int> class Kernels, int kLayers, int kHead, class Desc>
cudaError_t launch_by_lanes(int lanes, const Desc& d, int cluster, int threads, size_t bytes, cudaStream_t s) {
  auto one = [&](auto kernel, int max_threads) {
    return threads > max_threads ? cudaErrorInvalidValue : launch_cluster(kernel, d, cluster, threads, bytes, s, true);
  };
  switch (lanes) {
    case 8: return one(Kernels<kLayers, kHead, 8, 1024>::get(), 1024);
    case 16: return one(Kernels<kLayers, kHead, 16, 512>::get(), 512);
    case 32: return one(Kernels<kLayers, kHead, 32, 256>::get(), 256);
    default: return cudaErrorInvalidValue;
  }
}

// Loads every lanes' instantiation of one form's kernel (kernel_loading.hpp says why).
template <template <int, int, int, int> class Kernels, int kLayers, int kHead>
void load_by_lanes() {
  load_kernel(Kernels<kLayers, kHead, 8, 1024>::get());
  load_kernel(Kernels<kLayers, kHead, 16, 512>::get());
  load_kernel(Kernels<kLayers, kHead, 32, 256>::get());
}

}  // namespace tickinfer::cuda::detail
