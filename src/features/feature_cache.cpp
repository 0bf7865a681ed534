#include "features/feature_cache.hpp"

#include <cstring>

#include "tickinfer/error.hpp"

namespace tickinfer::features {

FeatureCache::FeatureCache(std::size_t capacity, std::size_t width, std::int64_t ttl_ns)
    : capacity_(capacity), width_(width), ttl_ns_(ttl_ns) {
  if (capacity == 0 || capacity >= kNone / 4) throw Error("feature cache: capacity must be in [1, 2^30)");
  if (width == 0) throw Error("feature cache: width must be >= 1");
  if (ttl_ns <= 0) throw Error("feature cache: ttl_ns must be > 0");
  entries_.resize(capacity);
  values_.assign(capacity * width, 0.0);
  std::size_t t = 16;
  while (t < 2 * capacity) t <<= 1;  // load factor <= 1/2
  table_.assign(t, kNone);
  table_mask_ = t - 1;
  for (std::uint32_t i = 0; i < capacity; ++i) entries_[i].next = i + 1 < capacity ? i + 1 : kNone;
  free_ = 0;
}

std::size_t FeatureCache::bucket_of(const CacheKey& k) const noexcept {
  std::uint64_t h = k.feature_set ^ (static_cast<std::uint64_t>(k.ts_ns) * 0x9E3779B97F4A7C15ull) ^
                    (static_cast<std::uint64_t>(k.instrument) * 0xC2B2AE3D27D4EB4Full);
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return static_cast<std::size_t>(h) & table_mask_;
}

std::uint32_t FeatureCache::find(const CacheKey& k) const noexcept {
  for (std::size_t b = bucket_of(k);; b = (b + 1) & table_mask_) {
    const std::uint32_t e = table_[b];
    if (e == kNone) return kNone;
    if (entries_[e].key == k) return e;
  }
}

void FeatureCache::table_insert(std::uint32_t e) noexcept {
  std::size_t b = bucket_of(entries_[e].key);
  while (table_[b] != kNone) b = (b + 1) & table_mask_;
  table_[b] = e;
}

// Backward-shift deletion: no tombstones, so probe lengths never degrade over time.
void FeatureCache::table_erase(std::uint32_t e) noexcept {
  std::size_t b = bucket_of(entries_[e].key);
  while (table_[b] != e) b = (b + 1) & table_mask_;
  std::size_t hole = b;
  for (std::size_t j = (hole + 1) & table_mask_; table_[j] != kNone; j = (j + 1) & table_mask_) {
    const std::size_t home = bucket_of(entries_[table_[j]].key);
    // Move j into the hole unless its home lies cyclically in (hole, j].
    const bool home_in_range = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (!home_in_range) {
      table_[hole] = table_[j];
      hole = j;
    }
  }
  table_[hole] = kNone;
}

void FeatureCache::unlink(std::uint32_t e) noexcept {
  Entry& x = entries_[e];
  if (x.prev != kNone) entries_[x.prev].next = x.next;
  else head_ = x.next;
  if (x.next != kNone) entries_[x.next].prev = x.prev;
  else tail_ = x.prev;
  x.prev = x.next = kNone;
}

void FeatureCache::push_front(std::uint32_t e) noexcept {
  Entry& x = entries_[e];
  x.prev = kNone;
  x.next = head_;
  if (head_ != kNone) entries_[head_].prev = e;
  head_ = e;
  if (tail_ == kNone) tail_ = e;
}

void FeatureCache::remove(std::uint32_t e) noexcept {
  table_erase(e);
  unlink(e);
  entries_[e].next = free_;
  free_ = e;
  --size_;
}

const double* FeatureCache::get(const CacheKey& key, std::int64_t now_ns) noexcept {
  const std::uint32_t e = find(key);
  if (e == kNone) {
    ++stats_.misses;
    return nullptr;
  }
  if (now_ns - entries_[e].stored_ns > ttl_ns_) {
    ++stats_.expired;
    ++stats_.misses;
    remove(e);
    return nullptr;
  }
  ++stats_.hits;
  if (head_ != e) {
    unlink(e);
    push_front(e);
  }
  return &values_[e * width_];
}

void FeatureCache::put(const CacheKey& key, const double* values, std::int64_t now_ns) noexcept {
  std::uint32_t e = find(key);
  if (e != kNone) {
    unlink(e);
  } else {
    if (free_ == kNone) {  // full: evict the least recently used
      ++stats_.evicted;
      remove(tail_);
    }
    e = free_;
    free_ = entries_[e].next;
    entries_[e].key = key;
    table_insert(e);
    ++size_;
    ++stats_.inserted;
  }
  entries_[e].stored_ns = now_ns;
  std::memcpy(&values_[e * width_], values, width_ * sizeof(double));
  push_front(e);
}

}  // namespace tickinfer::features
