#pragma once
// The per-side sorted arrays of price levels, and the one preallocated block they live in.
//
// Each side of each book is an array of (key, level) sorted by key ascending with the BEST level
// at the END: key = price for bids and ~price for asks, so "higher key = better" on both sides and
// one search serves both. Most traffic lands at or near the best price, so inserts and removals
// there move only the few entries above them.
//
// The arrays are blocks of power-of-two entry counts (at least kMinEntries) carved from one block
// sized at construction: a full array moves to a block twice its size, taken from that size's
// free list or the untouched end. When neither has room, the arena compacts: every array slides
// down to the start in address order, shrunk to the smallest power of two holding it, and empty
// arrays give their blocks up. After compaction the arrays use at most 2 * live levels +
// kMinEntries * sides entries, and a growing array asks for at most 2 * live levels more, so an
// arena of 4 * level capacity + kMinEntries * sides entries never refuses while the level pool
// has room: the only capacity limit is Capacity::levels.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "book/fixed_pool.hpp"
#include "book/huge_array.hpp"

namespace tickinfer::book {

struct LevelRef {
  std::uint32_t key;    // price (bids) or ~price (asks)
  std::uint32_t level;  // its LevelNode
};

// 16 bytes, so the two sides of one book share a cache line: the crossed/locked check after
// every message reads both best keys from here without touching either array.
struct SideArray {
  std::uint32_t offset = 0;    // first entry in the arena
  std::uint32_t size = 0;      // levels in use
  std::uint32_t cap = 0;       // block size in entries (0: no block)
  std::uint32_t best_key = 0;  // key of the last entry while size > 0
};
static_assert(sizeof(SideArray) == 16);

inline std::uint32_t side_key(std::uint8_t side, std::uint32_t price) noexcept {
  return side == 0 ? price : ~price;
}

// Position of key in a[0, n): where it is (found) or where it would be inserted. Looks at the
// top few entries first, where most prices are, then binary-searches the rest.
inline std::uint32_t find_level(const LevelRef* a, std::uint32_t n, std::uint32_t key,
                                bool& found) noexcept {
  constexpr std::uint32_t kScanFromTop = 8;
  std::uint32_t i = n;
  const std::uint32_t stop = n > kScanFromTop ? n - kScanFromTop : 0;
  for (; i > stop; --i) {
    const std::uint32_t k = a[i - 1].key;
    if (k <= key) {
      found = k == key;
      return found ? i - 1 : i;
    }
  }
  std::uint32_t lo = 0, hi = i;  // every key in [i, n) is above key
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (a[mid].key < key) lo = mid + 1;
    else hi = mid;
  }
  found = lo < i && a[lo].key == key;
  return lo;
}

class SideArena {
 public:
  static constexpr std::uint32_t kMinEntries = 8;

  SideArena(std::uint32_t level_capacity, std::uint32_t side_count);

  SideArray& side(std::uint32_t id) noexcept { return sides_[id]; }
  const SideArray& side(std::uint32_t id) const noexcept { return sides_[id]; }
  LevelRef* entries(const SideArray& s) noexcept { return entries_.get() + s.offset; }
  const LevelRef* entries(const SideArray& s) const noexcept { return entries_.get() + s.offset; }

  // Inserts r at position pos of side id; false (nothing changed) when no block can be had.
  bool insert(std::uint32_t id, std::uint32_t pos, LevelRef r) noexcept {
    SideArray& s = sides_[id];
    if (s.size == s.cap && !grow(id)) [[unlikely]] return false;
    LevelRef* a = entries_.get() + s.offset;
    // Usually a few entries (pos is near the top); a deep insert moves many, so one memmove.
    std::memmove(a + pos + 1, a + pos, std::size_t{s.size - pos} * sizeof(LevelRef));
    a[pos] = r;
    ++s.size;
    s.best_key = a[s.size - 1].key;
    return true;
  }
  void erase(std::uint32_t id, std::uint32_t pos) noexcept {
    SideArray& s = sides_[id];
    LevelRef* a = entries_.get() + s.offset;
    std::memmove(a + pos, a + pos + 1, std::size_t{s.size - pos - 1} * sizeof(LevelRef));
    --s.size;
    s.best_key = s.size ? a[s.size - 1].key : 0;
  }
  void release(std::uint32_t id) noexcept;  // an emptied side gives its block back
  std::uint64_t compactions() const noexcept { return compactions_; }
  std::size_t bytes() const noexcept;

 private:
  bool grow(std::uint32_t id) noexcept;
  std::uint32_t take_block(std::uint32_t cap) noexcept;  // kNone when neither list nor end has one
  void free_block(std::uint32_t offset, std::uint32_t cap) noexcept;
  void compact() noexcept;

  static constexpr int kClasses = 32;
  HugeArray<LevelRef> entries_;
  HugeArray<SideArray> sides_;
  std::unique_ptr<std::uint32_t[]> scratch_;  // side ids sorted by offset while compacting
  std::uint32_t total_ = 0;                   // entries in the arena
  std::uint32_t bump_ = 0;                    // entries at or above it were never handed out
  std::uint32_t side_count_ = 0;
  std::uint32_t free_[kClasses];              // free block lists per log2(size); link in .key
  std::uint64_t compactions_ = 0;
};

}  // namespace tickinfer::book
