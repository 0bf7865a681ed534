// Programmatic dependent launch, the device half (sm_90; the host half is launch_kernel in
// stream_graph.hpp). Every kernel of the graph forms calls this first: it lets the next kernel of
// its graph begin launching now (its blocks are scheduled while this one runs), then waits until
// the kernel before it has finished and its writes are visible. A kernel waits before it reads
// or writes anything, so the arithmetic and its order are what they are without it. Both
// instructions do nothing in a kernel launched without the attribute.
#pragma once

namespace tickinfer::cuda {

__device__ __forceinline__ void release_dependents_then_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;" ::: "memory");
#endif
}

}  // namespace tickinfer::cuda
