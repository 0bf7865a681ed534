#include "cuda/pinned_pool.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace tickinfer::cuda::detail {
namespace {

constexpr size_t kChunkBytes = size_t(4) << 20;  // thousands of plans' buffers
constexpr size_t kAlign = 128;

struct Pool {
  std::mutex mu;
  struct Chunk {
    char* base;
    size_t used, bytes;
  };
  std::vector<Chunk> chunks;
  std::multimap<size_t, char*> free_slots;        // capacity -> slot
  std::map<char*, size_t> taken;                  // slot -> capacity
};

Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: slots may outlive static destructors
  return *p;
}

}  // namespace

MappedSlot take_mapped(size_t units) {
  const size_t bytes = (units * 8 + kAlign - 1) / kAlign * kAlign;
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mu);
  char* slot = nullptr;
  size_t capacity = bytes;
  // The smallest free slot that holds it: plans of other shapes reuse what ended plans gave back,
  // so a process that starts and ends plans stops calling cudaHostAlloc (which may wait for the
  // device, and a resident kernel never lets it go idle).
  if (auto it = p.free_slots.lower_bound(bytes); it != p.free_slots.end()) {
    slot = it->second;
    capacity = it->first;
    p.free_slots.erase(it);
  }
  for (Pool::Chunk& c : p.chunks) {
    if (slot) break;
    if (c.used + bytes <= c.bytes) slot = c.base + c.used, c.used += bytes;
  }
  if (!slot) {  // a new chunk; a slot larger than a chunk (a large batch's staging) gets its own
    const size_t chunk = std::max(kChunkBytes, bytes);
    void* base = nullptr;
    const cudaError_t e = cudaHostAlloc(&base, chunk, cudaHostAllocMapped | cudaHostAllocPortable);
    if (e != cudaSuccess) throw std::runtime_error(std::string("pinned pool: cudaHostAlloc: ") + cudaGetErrorString(e));
    p.chunks.push_back({static_cast<char*>(base), bytes, chunk});
    slot = static_cast<char*>(base);
  }
  p.taken[slot] = capacity;
  std::memset(slot, 0, bytes);
  void* device = nullptr;
  const cudaError_t e = cudaHostGetDevicePointer(&device, slot, 0);
  if (e != cudaSuccess) throw std::runtime_error(std::string("pinned pool: cudaHostGetDevicePointer: ") + cudaGetErrorString(e));
  return {reinterpret_cast<unsigned long long*>(slot), static_cast<unsigned long long*>(device)};
}

void give_back_mapped(unsigned long long* host) noexcept {
  if (!host) return;
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mu);
  char* slot = reinterpret_cast<char*>(host);
  if (auto it = p.taken.find(slot); it != p.taken.end()) {
    try {
      p.free_slots.emplace(it->second, slot);
    } catch (...) {  // no memory for the free list's node: the slot is never reused, nothing worse
    }
    p.taken.erase(it);
  }
}

}  // namespace tickinfer::cuda::detail
