#pragma once
// The hot-path tests' counters: global malloc/calloc/realloc and operator new are replaced by
// versions that count while g_counting is set, and pthread_mutex_lock is interposed and counted
// the same way. Include this header in exactly one translation unit of a test executable (it
// defines the replacements), and never in a sanitizer build, whose runtime owns malloc.
#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocs{0};
std::atomic<long> g_locks{0};
void note_alloc() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocs.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

extern "C" void* __libc_malloc(size_t);
extern "C" void* __libc_calloc(size_t, size_t);
extern "C" void* __libc_realloc(void*, size_t);
// operator delete pairs with the __libc_malloc in operator new: calling free() there would make
// the compiler, which sees both inlined, report a malloc/delete mismatch it cannot rule out.
extern "C" void __libc_free(void*);
extern "C" void* malloc(size_t n) {
  note_alloc();
  return __libc_malloc(n);
}
extern "C" void* calloc(size_t a, size_t b) {
  note_alloc();
  return __libc_calloc(a, b);
}
extern "C" void* realloc(void* p, size_t n) {
  note_alloc();
  return __libc_realloc(p, n);
}
void* operator new(size_t n) {
  note_alloc();
  if (void* p = __libc_malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { __libc_free(p); }
void operator delete[](void* p) noexcept { __libc_free(p); }
void operator delete(void* p, size_t) noexcept { __libc_free(p); }
void operator delete[](void* p, size_t) noexcept { __libc_free(p); }

extern "C" int pthread_mutex_lock(pthread_mutex_t* m) {
  using Fn = int (*)(pthread_mutex_t*);
  static Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "pthread_mutex_lock"));
  if (g_counting.load(std::memory_order_relaxed)) g_locks.fetch_add(1, std::memory_order_relaxed);
  return real(m);
}
