#include "book/order_index.hpp"

#include <algorithm>
#include <bit>

namespace tickinfer::book {

namespace {
// One page per 2,048 orders of capacity: a day whose live orders sit within a few million
// consecutive references fits many times over; a thinner spread overflows into the hash.
std::uint32_t page_count(std::uint32_t order_capacity) {
  return std::max<std::uint32_t>(4, order_capacity / 2048);
}
}  // namespace

OrderIndex::OrderIndex(std::uint32_t order_capacity)
    : page_of_(kDirectRefs >> kPageBits),
      pages_(std::size_t{page_count(order_capacity)} << kPageBits),
      page_live_(page_count(order_capacity)),
      page_count_(page_count(order_capacity)) {
  const std::size_t want = std::max<std::size_t>(16, std::size_t{order_capacity} * 2);
  const std::size_t n = std::bit_ceil(want);
  slots_ = HugeArray<Slot>(n);
  mask_ = n - 1;
  shift1_ = static_cast<unsigned>(std::countr_zero(n));
  shift2_ = std::min(2 * shift1_, 63u);
  clear();
}

void OrderIndex::clear() noexcept {
  std::fill(page_of_.get(), page_of_.get() + page_of_.size(), kNone);
  std::fill(pages_.get(), pages_.get() + pages_.size(), kNone);
  std::fill(page_live_.get(), page_live_.get() + page_live_.size(), 0u);
  free_page_ = kNone;
  bump_page_ = 0;
  pages_in_use_ = 0;
  for (std::size_t i = 0; i <= mask_; ++i) slots_[i] = Slot{0, kNone, 0};
  hash_live_ = 0;
}

std::uint32_t OrderIndex::take_page(std::uint64_t ref) noexcept {
  std::uint32_t page;
  if (free_page_ != kNone) {
    page = free_page_;
    free_page_ = page_live_[page];
  } else if (bump_page_ < page_count_) {
    page = bump_page_++;
  } else {
    return kNone;
  }
  page_live_[page] = 0;  // its entries are all kNone: a page is emptied before it is freed
  page_of_[ref >> kPageBits] = page;
  ++pages_in_use_;
  return page;
}

void OrderIndex::fill(std::size_t slot, std::uint64_t ref, std::uint32_t order) noexcept {
  if (!(slot & kHashSlot)) {
    std::uint32_t page = page_of_[ref >> kPageBits];
    if (page == kNone) page = take_page(ref);
    if (page != kNone) {
      pages_[page_entry(page, ref)] = order;
      ++page_live_[page];
      return;
    }
    bool found;  // every page in use: this reference lives in the hash
    slot = hash_probe(ref, found) | kHashSlot;
  }
  slots_[slot & ~kHashSlot] = Slot{ref, order, 0};
  ++hash_live_;
}

void OrderIndex::erase(std::size_t slot) noexcept {
  if (slot & kHashSlot) {
    hash_erase(slot & ~kHashSlot);
    --hash_live_;
    return;
  }
  const std::size_t ref_page = slot >> kPageBits;
  const std::uint32_t page = page_of_[ref_page];
  pages_[page_entry(page, slot)] = kNone;
  if (--page_live_[page] == 0) {  // the last order of the page left: the page goes back
    page_of_[ref_page] = kNone;
    page_live_[page] = free_page_;
    free_page_ = page;
    --pages_in_use_;
  }
}

// Empties the slot and shifts later members of its probe run back, so no probe needs a tombstone.
void OrderIndex::hash_erase(std::size_t slot) noexcept {
  std::size_t hole = slot;
  std::size_t j = slot;
  for (;;) {
    j = (j + 1) & mask_;
    if (slots_[j].order == kNone) break;
    const std::size_t k = home(slots_[j].ref);
    // j's entry may fill the hole unless its home lies cyclically in (hole, j].
    if (((j - k) & mask_) >= ((j - hole) & mask_)) {
      slots_[hole] = slots_[j];
      hole = j;
    }
  }
  slots_[hole].order = kNone;
}

}  // namespace tickinfer::book
