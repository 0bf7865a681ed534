// Mapped pinned host memory for the resident kernels' request and reply buffers, from one
// process-wide pool. Why a pool: allocating or freeing page-locked memory (like cudaFree) may
// synchronise the whole device, and a resident kernel never finishes, so a plan started or
// destroyed beside a running one (a clone, the timed choice of shape, a second model) would wait
// forever. The pool takes its memory once, in chunks, and never gives it back.
#pragma once

#include <cstddef>

namespace tickinfer::cuda::detail {

struct MappedSlot {
  unsigned long long* host = nullptr;    // what the host reads and writes
  unsigned long long* device = nullptr;  // the same bytes as the kernel addresses them
};

// `units` 8-byte units, zeroed, 128-byte aligned. Throws std::runtime_error when the runtime
// refuses a new chunk.
MappedSlot take_mapped(size_t units);
// Returns a slot to the pool (nullptr: nothing). Never throws: the plans' destructors call it.
void give_back_mapped(unsigned long long* host) noexcept;

}  // namespace tickinfer::cuda::detail
