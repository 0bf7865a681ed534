// Readers (depth, levels, symbols, counters), sync state and clear(): off the hot path.
#include <algorithm>

#include "book/book_set.hpp"

namespace tickinfer::book {

Integrity& Integrity::operator+=(const Integrity& o) noexcept {
  unknown_ref += o.unknown_ref;
  duplicate_ref += o.duplicate_ref;
  overfill += o.overfill;
  bad_side += o.bad_side;
  zero_shares += o.zero_shares;
  locate_mismatch += o.locate_mismatch;
  crossed += o.crossed;
  locked += o.locked;
  capacity_rejects += o.capacity_rejects;
  while_unsynced += o.while_unsynced;
  return *this;
}

std::size_t BookSet::depth(std::uint16_t locate, Side side) const noexcept {
  if (!in_range(locate)) return 0;
  return arena_.side(side_id(locate, static_cast<std::uint8_t>(side))).size;
}

std::uint32_t BookSet::level_node(std::uint16_t locate, Side side, std::size_t i) const noexcept {
  if (!in_range(locate)) return kNone;
  const SideArray& s = arena_.side(side_id(locate, static_cast<std::uint8_t>(side)));
  if (i >= s.size) return kNone;
  return arena_.entries(s)[s.size - 1 - i].level;  // the best is at the end
}

Level BookSet::level(std::uint16_t locate, Side side, std::size_t i) const noexcept {
  const std::uint32_t l = level_node(locate, side, i);
  if (l == kNone) return Level{};
  return Level{levels_[l].price, levels_[l].shares, levels_[l].orders};
}

std::size_t BookSet::top(std::uint16_t locate, Side side, Level* out, std::size_t n) const noexcept {
  if (!in_range(locate)) return 0;
  const SideArray& s = arena_.side(side_id(locate, static_cast<std::uint8_t>(side)));
  const LevelRef* a = arena_.entries(s);
  const std::size_t count = n < s.size ? n : s.size;
  for (std::size_t i = 0; i < count; ++i) {
    const LevelNode& l = levels_[a[s.size - 1 - i].level];
    out[i] = Level{l.price, l.shares, l.orders};
  }
  return count;
}

bool BookSet::find_order(std::uint64_t ref, OrderInfo& out) const noexcept {
  bool found;
  const std::size_t slot = index_.probe(ref, found);
  if (!found) return false;
  const Order& o = orders_[index_.order_at(slot)];
  out = OrderInfo{o.locate, static_cast<Side>(o.side), o.price, o.shares};
  return true;
}

std::string_view BookSet::symbol(std::uint16_t locate) const noexcept {
  if (!in_range(locate)) return {};
  return std::string_view(symbols_[locate].text, symbols_[locate].size);
}

int BookSet::locate_of(std::string_view symbol) const noexcept {
  if (symbol.empty()) return -1;
  for (std::uint32_t l = 0; l < capacity_.instruments; ++l) {
    if (std::string_view(symbols_[l].text, symbols_[l].size) == symbol) return static_cast<int>(l);
  }
  return -1;
}

const Integrity& BookSet::integrity(std::uint16_t locate) const noexcept {
  return in_range(locate) ? integrity_[locate] : overflow_;
}

Integrity BookSet::totals() const noexcept {
  Integrity t = overflow_;
  for (std::uint32_t l = 0; l < capacity_.instruments; ++l) t += integrity_[l];
  return t;
}

void BookSet::mark_unsynced(std::uint16_t locate) noexcept {
  if (in_range(locate)) synced_[locate] = 0;
}

void BookSet::mark_all_unsynced() noexcept {
  std::fill(synced_.get(), synced_.get() + capacity_.instruments, std::uint8_t{0});
}

void BookSet::mark_synced(std::uint16_t locate) noexcept {
  if (in_range(locate)) synced_[locate] = 1;
}

bool BookSet::is_synced(std::uint16_t locate) const noexcept {
  return in_range(locate) && synced_[locate] != 0;
}

// Every order of the book leaves the index and the pool, every level the pool, and both sides
// give their blocks back to the arena.
void BookSet::clear(std::uint16_t locate) noexcept {
  if (!in_range(locate)) return;
  for (std::uint8_t side = 0; side < 2; ++side) {
    const std::uint32_t id = side_id(locate, side);
    const SideArray& s = arena_.side(id);
    for (std::uint32_t i = 0; i < s.size; ++i) {
      const std::uint32_t li = arena_.entries(s)[i].level;
      for (std::uint32_t o = levels_[li].head; o != kNone;) {
        const std::uint32_t next = orders_[o].next;
        bool found;
        const std::size_t slot = index_.probe(orders_[o].ref, found);
        if (found) index_.erase(slot);
        orders_.release(o);
        o = next;
      }
      levels_.release(li);
    }
    arena_.release(id);
  }
}

std::size_t BookSet::memory_bytes() const noexcept {
  const std::size_t n = capacity_.instruments;
  return orders_.bytes() + index_.bytes() + levels_.bytes() + arena_.bytes() +
         n * (sizeof(std::uint8_t) + sizeof(Integrity) + sizeof(SymbolName));
}

}  // namespace tickinfer::book
