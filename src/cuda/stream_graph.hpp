// What the CUDA graph form (device_graph.cu) and the integer program (integer_graph.cu) share on
// the host side of a GPU run: a non-blocking stream on the chosen device, device memory filled
// from the host on it, and a stream capture made one instantiated CUDA graph. Included by .cu
// files only (it names the runtime's types).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

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

// `bytes` (at least 1) of stream-ordered device memory, zeroed, then `host_bytes` of `host`
// copied to its start (none when host_bytes is 0). Stream-ordered memory never synchronises the
// whole device, so a resident plan running beside this one is never waited on.
void* device_buffer(cudaStream_t stream, size_t bytes, const void* host, size_t host_bytes, const char* who,
                    const char* what);

// Ends the capture begun on `stream` and instantiates it; `first_error` is the first error any
// captured call returned. Throws naming what failed.
cudaGraphExec_t end_capture(cudaStream_t stream, cudaError_t first_error, const char* who);

}  // namespace tickinfer::cuda
