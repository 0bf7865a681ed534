// The GPU's executors for step bodies (device_step_common.cuh's contract): items spread over the
// grid (grid-stride), or over the one block of a one-block step; sync is __syncthreads().
// Shared by the graph form's kernels, the integer program's and the resident program's.
#pragma once

#include <stdint.h>

namespace tickinfer::cuda {

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

// Items over the threads of this block alone, whatever the grid: a step that runs as one block
// inside a larger kernel, or one tile of a tiled step (each block its own tile).
struct BlockExecutor {
  template <class F>
  __device__ void items(int64_t n, F&& f) const {
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) f(i);
  }
  __device__ void sync() const { __syncthreads(); }
};

}  // namespace tickinfer::cuda
