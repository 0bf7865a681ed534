#pragma once
// Order reference -> pool index, in two parts.
//
// Direct pages: ITCH references are unique for the day and handed out nearly in sequence, so the
// live ones crowd into a narrow, moving window of the reference space. The space below 2^30 is cut
// into pages of 8,192 references; a page of 32-bit pool indices is taken from a preallocated set
// when its first order arrives and given back when its last one leaves. A lookup is two dependent
// loads into small, dense arrays (the page table, then the page), an erase is one store, and orders
// added together sit in the same cache lines.
//
// Hash: a reference at or above 2^30, or one whose page cannot be had because every page is in use
// (a day of long-lived orders spread thinly), goes to an open-addressing table instead: linear
// probing over a power-of-two table at least twice the order capacity, backward-shift deletion (no
// tombstones). The table can hold every order, so a fill never fails.
//
// Slots: a direct slot is the reference itself; a hash slot has kHashSlot set.
#include <cstddef>
#include <cstdint>

#include "book/fixed_pool.hpp"
#include "book/huge_array.hpp"

namespace tickinfer::book {

class OrderIndex {
 public:
  static constexpr unsigned kPageBits = 13;
  static constexpr std::uint32_t kPageRefs = 1u << kPageBits;
  static constexpr std::uint64_t kDirectRefs = std::uint64_t{1} << 30;  // a day's references fit
  static constexpr std::size_t kHashSlot = std::size_t{1} << 62;

  explicit OrderIndex(std::uint32_t order_capacity);

  // The slot holding ref (found = true), or the slot fill() should use (found = false).
  std::size_t probe(std::uint64_t ref, bool& found) const noexcept {
    if (ref < kDirectRefs) {
      const std::uint32_t page = page_of_[ref >> kPageBits];
      if (page != kNone && pages_[page_entry(page, ref)] != kNone) {
        found = true;
        return static_cast<std::size_t>(ref);
      }
      if (hash_live_ == 0) {  // nothing overflowed: the direct page is the only place it can be
        found = false;
        return static_cast<std::size_t>(ref);
      }
    }
    return hash_probe(ref, found) | kHashSlot;
  }
  std::uint32_t order_at(std::size_t slot) const noexcept {
    if (slot & kHashSlot) return slots_[slot & ~kHashSlot].order;
    return pages_[page_entry(page_of_[slot >> kPageBits], slot)];
  }
  // Stores ref -> order at the slot probe() gave (which was not found); never fails.
  void fill(std::size_t slot, std::uint64_t ref, std::uint32_t order) noexcept;
  void erase(std::size_t slot) noexcept;
  void clear() noexcept;

  // The order ref names, or kNone.
  std::uint32_t find(std::uint64_t ref) const noexcept {
    bool found;
    const std::size_t slot = probe(ref, found);
    return found ? order_at(slot) : kNone;
  }
  // Look-ahead (direct pages only: a hashed reference is rare, and probing its cold table would
  // be the stall the look-ahead exists to avoid). prefetch requests ref's entry's line; the page
  // table is small and stays cached, the page entry is the miss worth hiding. peek reads the
  // entry: the order, or kNone where the page has none (not yet added, gone, or hashed).
  void prefetch(std::uint64_t ref) const noexcept {
    if (const std::uint32_t* e = direct_entry(ref)) __builtin_prefetch(e);
  }
  std::uint32_t peek(std::uint64_t ref) const noexcept {
    const std::uint32_t* e = direct_entry(ref);
    return e == nullptr ? kNone : *e;
  }
  std::size_t bytes() const noexcept {
    return page_of_.bytes() + pages_.bytes() + page_live_.bytes() + slots_.bytes();
  }
  std::size_t pages_in_use() const noexcept { return pages_in_use_; }
  std::uint64_t hashed() const noexcept { return hash_live_; }  // references living in the hash

 private:
  struct Slot {
    std::uint64_t ref;
    std::uint32_t order;  // kNone: empty
    std::uint32_t unused;
  };
  static std::size_t page_entry(std::uint32_t page, std::uint64_t ref) noexcept {
    return (std::size_t{page} << kPageBits) | (ref & (kPageRefs - 1));
  }
  // ref's place in its direct page, or nullptr where it has no page (or lies past them).
  const std::uint32_t* direct_entry(std::uint64_t ref) const noexcept {
    if (ref >= kDirectRefs) return nullptr;
    const std::uint32_t page = page_of_[ref >> kPageBits];
    return page == kNone ? nullptr : &pages_[page_entry(page, ref)];
  }
  std::size_t home(std::uint64_t ref) const noexcept {
    return static_cast<std::size_t>(ref ^ (ref >> shift1_) ^ (ref >> shift2_)) & mask_;
  }
  std::size_t hash_probe(std::uint64_t ref, bool& found) const noexcept {
    std::size_t i = home(ref);
    for (;;) {
      const Slot& s = slots_[i];
      if (s.order == kNone) {
        found = false;
        return i;
      }
      if (s.ref == ref) {
        found = true;
        return i;
      }
      i = (i + 1) & mask_;
    }
  }
  std::uint32_t take_page(std::uint64_t ref) noexcept;  // kNone if every page is in use
  void hash_erase(std::size_t slot) noexcept;

  HugeArray<std::uint32_t> page_of_;    // reference page -> page index, kNone if none
  HugeArray<std::uint32_t> pages_;      // the pages' pool indices, kNone where empty
  HugeArray<std::uint32_t> page_live_;  // orders in each page; the free list links through it
  std::uint32_t page_count_ = 0;
  std::uint32_t free_page_ = kNone;
  std::uint32_t bump_page_ = 0;         // pages at or above it were never handed out
  std::size_t pages_in_use_ = 0;
  HugeArray<Slot> slots_;
  std::size_t mask_ = 0;
  unsigned shift1_ = 0, shift2_ = 0;    // table bits and twice that (at most 63)
  std::uint64_t hash_live_ = 0;
};

}  // namespace tickinfer::book
