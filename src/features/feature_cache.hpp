#pragma once
// A bounded LRU cache with time-to-live for feature vectors that several models share, keyed by
// (instrument, exchange timestamp, feature-set id). All memory is allocated in the constructor;
// get/put are O(1) expected, noexcept and allocation-free. Not thread-safe: one owner thread
// (give each pipeline thread its own cache).
//
//  * get(): the cached vector, or nullptr when absent or older than ttl_ns at now_ns (an expired
//    entry is removed on sight). A hit makes the entry most recently used.
//  * put(): inserts or overwrites; when full, evicts the least recently used entry.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tickinfer::features {

struct CacheKey {
  std::uint32_t instrument = 0;
  std::int64_t ts_ns = 0;
  std::uint64_t feature_set = 0;
  bool operator==(const CacheKey& o) const noexcept {
    return instrument == o.instrument && ts_ns == o.ts_ns && feature_set == o.feature_set;
  }
};

struct CacheStats {
  std::uint64_t hits = 0, misses = 0, expired = 0, evicted = 0, inserted = 0;
};

class FeatureCache {
 public:
  // capacity >= 1 entries of `width` doubles; ttl_ns > 0. Throws tickinfer::Error otherwise.
  FeatureCache(std::size_t capacity, std::size_t width, std::int64_t ttl_ns);

  const double* get(const CacheKey& key, std::int64_t now_ns) noexcept;
  void put(const CacheKey& key, const double* values, std::int64_t now_ns) noexcept;

  std::size_t size() const noexcept { return size_; }
  std::size_t capacity() const noexcept { return capacity_; }
  const CacheStats& stats() const noexcept { return stats_; }

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
  std::size_t bucket_of(const CacheKey& k) const noexcept;
  std::uint32_t find(const CacheKey& k) const noexcept;  // entry index or kNone
  void table_insert(std::uint32_t entry) noexcept;
  void table_erase(std::uint32_t entry) noexcept;
  void unlink(std::uint32_t e) noexcept;
  void push_front(std::uint32_t e) noexcept;
  void remove(std::uint32_t e) noexcept;

  struct Entry {
    CacheKey key;
    std::int64_t stored_ns = 0;
    std::uint32_t prev = kNone, next = kNone;  // LRU list (head = most recent) or free list
  };
  std::size_t capacity_, width_;
  std::int64_t ttl_ns_;
  std::vector<Entry> entries_;
  std::vector<double> values_;           // capacity x width
  std::vector<std::uint32_t> table_;     // open addressing (linear probe), entry index or kNone
  std::size_t table_mask_;
  std::uint32_t head_ = kNone, tail_ = kNone, free_ = kNone;
  std::size_t size_ = 0;
  CacheStats stats_;
};

}  // namespace tickinfer::features
