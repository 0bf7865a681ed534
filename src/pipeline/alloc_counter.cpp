// Global operator new/delete replacements that count allocations. This object file is pulled into
// every binary that calls allocation_count() (the pipeline does), and only those.
#include "pipeline/alloc_counter.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<std::uint64_t> g_allocations{0};
thread_local bool t_not_counted = false;  // a thread that is not the run's (see the header)

void* counted_alloc(std::size_t n) {
  if (!t_not_counted) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (n == 0) n = 1;
  if (void* p = std::malloc(n)) return p;
  throw std::bad_alloc();
}
void* counted_alloc_aligned(std::size_t n, std::size_t align) {
  if (!t_not_counted) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (n == 0) n = 1;
  const std::size_t a = align < sizeof(void*) ? sizeof(void*) : align;
  void* p = nullptr;
  if (posix_memalign(&p, a, n) == 0) return p;
  throw std::bad_alloc();
}
}  // namespace

namespace tickinfer::pipeline {
std::uint64_t allocation_count() noexcept { return g_allocations.load(std::memory_order_relaxed); }
void exclude_this_thread_from_allocation_count() noexcept { t_not_counted = true; }
}  // namespace tickinfer::pipeline

void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try { return counted_alloc(n); } catch (...) { return nullptr; }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try { return counted_alloc(n); } catch (...) { return nullptr; }
}
void* operator new(std::size_t n, std::align_val_t a) { return counted_alloc_aligned(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_alloc_aligned(n, static_cast<std::size_t>(a)); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try { return counted_alloc_aligned(n, static_cast<std::size_t>(a)); } catch (...) { return nullptr; }
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try { return counted_alloc_aligned(n, static_cast<std::size_t>(a)); } catch (...) { return nullptr; }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
