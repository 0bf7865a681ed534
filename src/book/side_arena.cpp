#include "book/side_arena.hpp"

#include <algorithm>
#include <bit>

namespace tickinfer::book {

SideArena::SideArena(std::uint32_t level_capacity, std::uint32_t side_count)
    : side_count_(side_count) {
  const std::uint64_t total = 4ull * level_capacity + std::uint64_t{kMinEntries} * side_count;
  total_ = static_cast<std::uint32_t>(total);  // BookSet clamps capacities so this fits
  entries_ = HugeArray<LevelRef>(total_);
  sides_ = HugeArray<SideArray>(side_count);  // cache-line aligned: a book's two sides share a line
  scratch_.reset(new std::uint32_t[side_count]());
  std::fill(std::begin(free_), std::end(free_), kNone);
}

std::uint32_t SideArena::take_block(std::uint32_t cap) noexcept {
  const int c = std::countr_zero(cap) & (kClasses - 1);  // cap is a power of two below 2^32
  if (free_[c] != kNone) {
    const std::uint32_t off = free_[c];
    free_[c] = entries_[off].key;
    return off;
  }
  if (cap <= total_ - bump_) {
    const std::uint32_t off = bump_;
    bump_ += cap;
    return off;
  }
  return kNone;
}

void SideArena::free_block(std::uint32_t offset, std::uint32_t cap) noexcept {
  const int c = std::countr_zero(cap) & (kClasses - 1);  // cap is a power of two below 2^32
  entries_[offset].key = free_[c];
  free_[c] = offset;
}

// Slow path: a full side moves to a block twice its size.
bool SideArena::grow(std::uint32_t id) noexcept {
  const std::uint32_t old_cap = sides_[id].cap;
  if (old_cap > total_ / 2) return false;
  const std::uint32_t cap = old_cap ? old_cap * 2 : kMinEntries;
  std::uint32_t off = take_block(cap);
  if (off == kNone) {
    compact();  // moves this side too, keeping its size and (full) capacity
    off = take_block(cap);
    if (off == kNone) return false;
  }
  SideArray& s = sides_[id];
  std::memcpy(entries_.get() + off, entries_.get() + s.offset, std::size_t{s.size} * sizeof(LevelRef));
  if (s.cap) free_block(s.offset, s.cap);
  s.offset = off;
  s.cap = cap;
  return true;
}

void SideArena::release(std::uint32_t id) noexcept {
  SideArray& s = sides_[id];
  if (s.cap) free_block(s.offset, s.cap);
  s = SideArray{};
}

// Slides every array down to the start in address order (each new place is at or below the old
// one, so memmove suffices), shrinking each block to the smallest power of two that holds it.
void SideArena::compact() noexcept {
  ++compactions_;
  std::uint32_t n = 0;
  for (std::uint32_t id = 0; id < side_count_; ++id) {
    if (sides_[id].cap) scratch_[n++] = id;
  }
  std::sort(scratch_.get(), scratch_.get() + n,
            [this](std::uint32_t a, std::uint32_t b) { return sides_[a].offset < sides_[b].offset; });
  std::uint32_t cursor = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    SideArray& s = sides_[scratch_[i]];
    if (s.size == 0) {
      s = SideArray{};
      continue;
    }
    const std::uint32_t cap = std::max(kMinEntries, std::bit_ceil(s.size));
    std::memmove(entries_.get() + cursor, entries_.get() + s.offset, std::size_t{s.size} * sizeof(LevelRef));
    s.offset = cursor;
    s.cap = cap;
    cursor += cap;
  }
  bump_ = cursor;
  std::fill(std::begin(free_), std::end(free_), kNone);
}

std::size_t SideArena::bytes() const noexcept {
  return std::size_t{total_} * sizeof(LevelRef) + std::size_t{side_count_} * sizeof(SideArray) +
         std::size_t{side_count_} * sizeof(std::uint32_t);
}

}  // namespace tickinfer::book
