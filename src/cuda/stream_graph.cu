#include "cuda/stream_graph.hpp"

#include <algorithm>
#include <stdexcept>

namespace tickinfer::cuda {

void check_cuda(cudaError_t e, const char* who, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(who) + ": " + what + ": " + cudaGetErrorString(e));
}

DeviceStream open_device_stream(int device, const char* who) {
  check_cuda(cudaSetDevice(device), who, "cudaSetDevice");
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, device), who, "cudaGetDeviceProperties");
  DeviceStream d;
  d.name = prop.name;
  d.sms = prop.multiProcessorCount;
  check_cuda(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking), who, "cudaStreamCreate");
  return d;
}

void* device_buffer(cudaStream_t stream, size_t bytes, const void* host, size_t host_bytes, const char* who,
                    const char* what) {
  void* p = nullptr;
  check_cuda(cudaMallocAsync(&p, std::max<size_t>(bytes, 1), stream), who, what);
  check_cuda(cudaMemsetAsync(p, 0, bytes, stream), who, what);
  if (host_bytes) check_cuda(cudaMemcpyAsync(p, host, host_bytes, cudaMemcpyHostToDevice, stream), who, what);
  return p;
}

cudaGraphExec_t end_capture(cudaStream_t stream, cudaError_t first_error, const char* who) {
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(stream, &graph);
  cudaError_t e = first_error == cudaSuccess ? end : first_error;
  if (e != cudaSuccess && graph) cudaGraphDestroy(graph);
  check_cuda(e, who, "capturing the steps");
  cudaGraphExec_t exec = nullptr;
  e = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  check_cuda(e, who, "cudaGraphInstantiate");
  return exec;
}

}  // namespace tickinfer::cuda
