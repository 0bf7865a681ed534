#include "book/huge_array.hpp"

#include <sys/mman.h>

#include <cstdlib>

namespace tickinfer::book {

namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kCacheLine = 64;
}  // namespace

void* allocate_huge(std::size_t bytes) {
  const std::size_t align = bytes >= kHugePage ? kHugePage : kCacheLine;
  const std::size_t rounded = (bytes + align - 1) / align * align;  // aligned_alloc wants a multiple
  void* p = std::aligned_alloc(align, rounded == 0 ? align : rounded);
  if (p == nullptr) throw std::bad_alloc();
  // Only advice: where the kernel has no huge pages (or THP is off) this is 4 KiB pages as before.
  if (align == kHugePage) ::madvise(p, rounded, MADV_HUGEPAGE);
  return p;
}

void release_huge(void* p) noexcept { std::free(p); }

}  // namespace tickinfer::book
