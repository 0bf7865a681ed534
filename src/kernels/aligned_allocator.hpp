#pragma once
// A std::vector allocator whose storage starts on a cache line: for packed weights the SIMD kernels
// load a cache line at a time. With malloc's 16-byte alignment every 64-byte block load of such a
// buffer can straddle two lines, and whether it does depends on the heap's state: the same plan
// then ran 15% slower in one binary than in another (lstm_tiny_pruned80, docs/performance.md).
#include <cstddef>
#include <new>
#include <vector>

namespace tickinfer::kernels {

template <class T, std::size_t kAlign = 64>
struct AlignedAllocator {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = AlignedAllocator<U, kAlign>;
  };
  AlignedAllocator() noexcept = default;
  template <class U>
  AlignedAllocator(const AlignedAllocator<U, kAlign>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(kAlign))); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t(kAlign)); }
  template <class U>
  bool operator==(const AlignedAllocator<U, kAlign>&) const noexcept {
    return true;
  }
};

// Packed weights and the rows the kernels multiply them with.
template <class T>
using AlignedVector = std::vector<T, AlignedAllocator<T>>;

}  // namespace tickinfer::kernels
