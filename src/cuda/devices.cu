#include <cuda_runtime.h>

#include "cuda/devices.hpp"

namespace tickinfer::cuda {

bool built_with_cuda() { return true; }

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" / "insufficient driver" answer
    return 0;
  }
  return n;
}

}  // namespace tickinfer::cuda
