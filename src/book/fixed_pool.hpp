#pragma once
// A fixed-size pool of trivially copyable records addressed by 32-bit index: allocated and
// zero-filled (so every page is touched) once (see HugeArray), then handed out from a bump pointer and a LIFO free
// list. LIFO reuse keeps the records in use packed at the low end, where the cache is warm.
#include <cstddef>
#include <cstdint>

#include "book/huge_array.hpp"

namespace tickinfer::book {

inline constexpr std::uint32_t kNone = 0xFFFFFFFFu;  // "no index" in every pool, queue and table

// T provides free_link(): a uint32 field reused as the free-list link while the record is free.
template <class T>
class FixedPool {
 public:
  explicit FixedPool(std::uint32_t capacity) : items_(capacity), capacity_(capacity) {}

  std::uint32_t acquire() noexcept {  // kNone when full
    std::uint32_t i;
    if (free_ != kNone) {
      i = free_;
      free_ = items_[i].free_link();
    } else if (bump_ < capacity_) {
      i = bump_++;
    } else {
      return kNone;
    }
    ++live_;
    return i;
  }
  void release(std::uint32_t i) noexcept {
    items_[i].free_link() = free_;
    free_ = i;
    --live_;
  }
  bool full() const noexcept { return live_ == capacity_; }
  std::uint32_t live() const noexcept { return live_; }
  std::uint32_t capacity() const noexcept { return capacity_; }
  std::size_t bytes() const noexcept { return std::size_t{capacity_} * sizeof(T); }
  T& operator[](std::uint32_t i) noexcept { return items_[i]; }
  const T& operator[](std::uint32_t i) const noexcept { return items_[i]; }

 private:
  HugeArray<T> items_;
  std::uint32_t capacity_;
  std::uint32_t bump_ = 0;  // records at or above it were never handed out
  std::uint32_t free_ = kNone;
  std::uint32_t live_ = 0;
};

// One resting order. 32 bytes: two to a cache line.
struct Order {
  std::uint64_t ref;
  std::uint32_t shares;  // remaining displayed shares, > 0 while live
  std::uint32_t price;   // display price, Price(4)
  std::uint32_t level;   // its LevelNode
  std::uint32_t prev;    // neighbours in the level's time-priority queue (kNone at the ends)
  std::uint32_t next;
  std::uint16_t locate;
  std::uint8_t side;     // Side as an integer
  std::uint32_t& free_link() noexcept { return next; }
};
static_assert(sizeof(Order) == 32);

// One price level of one side of one book: totals plus the FIFO queue of its orders.
struct LevelNode {
  std::uint64_t shares;
  std::uint32_t price;
  std::uint32_t orders;
  std::uint32_t head;  // first in time priority
  std::uint32_t tail;  // newest
  std::uint32_t& free_link() noexcept { return head; }
};
static_assert(sizeof(LevelNode) == 24);

using OrderPool = FixedPool<Order>;
using LevelPool = FixedPool<LevelNode>;

}  // namespace tickinfer::book
