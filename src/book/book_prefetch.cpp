// BookSet::prefetch, the look-ahead stages (book_set.hpp). The books may change between a stage
// and the message's apply (messages in between add and remove orders), so what a stage reads is
// only an address guess: every index is checked against its pool before it is followed.
#include <cstddef>
#include <cstring>

#include "book/book_set.hpp"

namespace tickinfer::book {

namespace {

// Every message that names an order carries its reference first in its body (the original's, for
// U), so one read serves them all.
static_assert(offsetof(itch::AddOrder, order_ref) == 0 && offsetof(itch::OrderExecuted, order_ref) == 0 &&
              offsetof(itch::OrderExecutedWithPrice, order_ref) == 0 &&
              offsetof(itch::OrderCancel, order_ref) == 0 && offsetof(itch::OrderDelete, order_ref) == 0 &&
              offsetof(itch::OrderReplace, original_ref) == 0);

enum class Touches : std::uint8_t { Nothing, Resting, Add };

Touches touches(itch::Type t) noexcept {
  switch (t) {
    case itch::Type::OrderExecuted:
    case itch::Type::OrderExecutedWithPrice:
    case itch::Type::OrderCancel:
    case itch::Type::OrderDelete:
    case itch::Type::OrderReplace:
      return Touches::Resting;
    case itch::Type::AddOrder:
    case itch::Type::AddOrderMpid:
      return Touches::Add;
    default:
      return Touches::Nothing;
  }
}

}  // namespace

void BookSet::prefetch(const itch::Message& m, LoadStage stage) const noexcept {
  const Touches what = touches(m.header.type);
  if (what == Touches::Nothing) return;
  std::uint64_t ref;  // first in every body above (the static_assert): its bytes, whichever it is
  std::memcpy(&ref, &m.add, sizeof ref);
  if (what == Touches::Add) {
    // An add writes its reference's index entry (a page the adds before it warmed) and searches
    // its side's array from the top: the header (small, cached) says where the top eight
    // entries are. (Going on to the level the search finds showed no gain outside this VM's
    // noise, and the search costs its branches; docs/book.md.)
    const std::uint16_t locate = m.header.locate;
    if (locate >= capacity_.instruments) return;
    const SideArray& s = arena_.side(side_id(locate, m.add.side == 'B' ? 0 : 1));
    if (s.size == 0) return;
    if (stage == LoadStage::Index) {
      const LevelRef* top = arena_.entries(s) + (s.size - 1);
      __builtin_prefetch(top);
      if (s.size > 7) __builtin_prefetch(top - 7);
    }
    return;
  }
  if (stage == LoadStage::Index) {
    index_.prefetch(ref);  // the page entry (the page table is small and stays cached)
  } else {
    const std::uint32_t oi = index_.peek(ref);  // the entry the Index stage requested
    if (oi < orders_.capacity()) __builtin_prefetch(&orders_[oi]);
  }
}

}  // namespace tickinfer::book
