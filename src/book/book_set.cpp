// The hot path: apply() and the per-type handlers. docs/book.md states the rules these implement.
#include <algorithm>

#include "book/book_set.hpp"

namespace tickinfer::book {

namespace {

Capacity clamped(const Capacity& c) {
  Capacity r;
  // Limits keep every index a 32-bit integer (the order index has 2 slots per order, the side
  // arena 4 entries per level) and locates within ITCH's 16 bits.
  r.orders = std::clamp<std::uint32_t>(c.orders, 1, 1u << 30);
  r.levels = std::clamp<std::uint32_t>(c.levels, 1, 1u << 28);
  r.instruments = std::clamp<std::uint32_t>(c.instruments, 1, 1u << 16);
  return r;
}

}  // namespace

BookSet::BookSet(const Capacity& capacity)
    : capacity_(clamped(capacity)),
      orders_(capacity_.orders),
      index_(capacity_.orders),
      levels_(capacity_.levels),
      arena_(capacity_.levels, capacity_.instruments * 2),
      synced_(new std::uint8_t[capacity_.instruments]),
      integrity_(new Integrity[capacity_.instruments]()),
      symbols_(new SymbolName[capacity_.instruments]()) {
  std::fill(synced_.get(), synced_.get() + capacity_.instruments, std::uint8_t{1});
}

Applied BookSet::apply(const itch::Message& m) noexcept {
  using itch::Type;
  const std::uint16_t locate = m.header.locate;
  switch (m.header.type) {
    case Type::AddOrder:
    case Type::AddOrderMpid:
      return on_add(locate, m.add);
    case Type::OrderExecuted:
      return on_reduce(locate, m.executed.order_ref, m.executed.shares);
    case Type::OrderExecutedWithPrice:  // reduces at the display price; the print price is not the book's
      return on_reduce(locate, m.executed_with_price.order_ref, m.executed_with_price.shares);
    case Type::OrderCancel:
      return on_reduce(locate, m.cancel.order_ref, m.cancel.shares);
    case Type::OrderDelete:
      return on_delete(locate, m.del.order_ref);
    case Type::OrderReplace:
      return on_replace(locate, m.replace);
    case Type::StockDirectory:
      on_directory(locate, m.stock_directory);
      return Applied{locate, false, false};
    default:  // P, Q, B and every status or auction message leave the books alone
      return Applied{locate, false, false};
  }
}

// Counts what a message that found its book says about the book's state on arrival.
void BookSet::note_arrival(std::uint16_t header_locate, std::uint16_t book_locate) noexcept {
  if (!synced_[book_locate]) ++integrity_[book_locate].while_unsynced;
  if (header_locate != book_locate) ++integrity_[book_locate].locate_mismatch;
}

void BookSet::check_crossing(std::uint16_t locate) noexcept {
  const SideArray& bids = arena_.side(side_id(locate, 0));
  const SideArray& asks = arena_.side(side_id(locate, 1));
  if (bids.size == 0 || asks.size == 0) return;
  const std::uint32_t best_bid = bids.best_key;
  const std::uint32_t best_ask = ~asks.best_key;
  if (best_bid > best_ask) ++integrity_[locate].crossed;
  else if (best_bid == best_ask) ++integrity_[locate].locked;
}

Applied BookSet::unknown_ref(std::uint16_t locate) noexcept {
  ++counters(locate).unknown_ref;
  if (in_range(locate)) {
    note_arrival(locate, locate);
    check_crossing(locate);
  }
  return Applied{locate, true, false};
}

Applied BookSet::on_add(std::uint16_t locate, const itch::AddOrder& a) noexcept {
  if (!in_range(locate)) {
    ++overflow_.capacity_rejects;
    return Applied{locate, true, false};
  }
  note_arrival(locate, locate);
  bool changed = false;
  if (a.side != 'B' && a.side != 'S') {
    ++integrity_[locate].bad_side;
  } else if (a.shares == 0) {
    ++integrity_[locate].zero_shares;
  } else {
    const std::uint8_t side = a.side == 'B' ? 0 : 1;
    changed = add_order(locate, side, a.order_ref, a.shares, a.price) == AddResult::Added;
  }
  check_crossing(locate);
  return Applied{locate, true, changed};
}

Applied BookSet::on_reduce(std::uint16_t locate, std::uint64_t ref, std::uint32_t shares) noexcept {
  bool found;
  const std::size_t slot = index_.probe(ref, found);
  if (!found) [[unlikely]] return unknown_ref(locate);
  const std::uint32_t oi = index_.order_at(slot);
  Order& o = orders_[oi];
  const std::uint16_t own = o.locate;
  const Applied applied = resting(o, own, shares != 0);
  note_arrival(locate, own);
  if (shares < o.shares) {
    o.shares -= shares;
    levels_[o.level].shares -= shares;
  } else {
    if (shares > o.shares) ++integrity_[own].overfill;
    remove_order(oi, slot);
  }
  check_crossing(own);
  return applied;
}

Applied BookSet::on_delete(std::uint16_t locate, std::uint64_t ref) noexcept {
  bool found;
  const std::size_t slot = index_.probe(ref, found);
  if (!found) [[unlikely]] return unknown_ref(locate);
  const std::uint32_t oi = index_.order_at(slot);
  const std::uint16_t own = orders_[oi].locate;
  const Applied applied = resting(orders_[oi], own, true);
  note_arrival(locate, own);
  remove_order(oi, slot);
  check_crossing(own);
  return applied;
}

// Cancel-replace: the original leaves with all its shares; the new order (same locate and side)
// joins the tail of its level even at the same price, as any new order does.
Applied BookSet::on_replace(std::uint16_t locate, const itch::OrderReplace& r) noexcept {
  bool found;
  const std::size_t slot = index_.probe(r.original_ref, found);
  if (!found) [[unlikely]] return unknown_ref(locate);
  const std::uint32_t oi = index_.order_at(slot);
  const std::uint16_t own = orders_[oi].locate;
  const std::uint8_t side = orders_[oi].side;
  const Applied applied = resting(orders_[oi], own, true);
  note_arrival(locate, own);
  remove_order(oi, slot);
  if (r.shares == 0) ++integrity_[own].zero_shares;
  else add_order(own, side, r.new_ref, r.shares, r.price);
  check_crossing(own);
  return applied;
}

void BookSet::on_directory(std::uint16_t locate, const itch::StockDirectory& r) noexcept {
  if (!in_range(locate)) {
    ++overflow_.capacity_rejects;
    return;
  }
  const std::string_view s = itch::symbol_view(r.stock);
  SymbolName& name = symbols_[locate];
  std::copy(s.begin(), s.end(), name.text);
  name.size = static_cast<std::uint8_t>(s.size());
}

BookSet::AddResult BookSet::add_order(std::uint16_t locate, std::uint8_t side, std::uint64_t ref,
                                      std::uint32_t shares, std::uint32_t price) noexcept {
  bool found;
  const std::size_t slot = index_.probe(ref, found);
  if (found) [[unlikely]] {
    ++integrity_[locate].duplicate_ref;
    return AddResult::Duplicate;
  }
  const std::uint32_t id = side_id(locate, side);
  const std::uint32_t key = side_key(side, price);
  std::uint32_t li = kNone;
  if (!orders_.full()) {
    const SideArray& s = arena_.side(id);
    bool level_found;
    const std::uint32_t pos = find_level(arena_.entries(s), s.size, key, level_found);
    if (level_found) {
      li = arena_.entries(s)[pos].level;
    } else if ((li = levels_.acquire()) != kNone) {
      levels_[li] = LevelNode{0, price, 0, kNone, kNone};
      if (!arena_.insert(id, pos, LevelRef{key, li})) {
        levels_.release(li);
        li = kNone;
      }
    }
  }
  if (li == kNone) [[unlikely]] {  // out of orders, levels or side-array room: the book can no longer be trusted
    ++integrity_[locate].capacity_rejects;
    synced_[locate] = 0;
    return AddResult::Rejected;
  }
  const std::uint32_t oi = orders_.acquire();
  LevelNode& level = levels_[li];
  orders_[oi] = Order{ref, shares, price, li, level.tail, kNone, locate, side};
  if (level.tail != kNone) orders_[level.tail].next = oi;
  else level.head = oi;
  level.tail = oi;
  level.shares += shares;
  ++level.orders;
  index_.fill(slot, ref, oi);
  return AddResult::Added;
}

void BookSet::remove_order(std::uint32_t oi, std::size_t slot) noexcept {
  const Order& o = orders_[oi];
  LevelNode& level = levels_[o.level];
  if (o.prev != kNone) orders_[o.prev].next = o.next;
  else level.head = o.next;
  if (o.next != kNone) orders_[o.next].prev = o.prev;
  else level.tail = o.prev;
  level.shares -= o.shares;
  if (--level.orders == 0) remove_level(side_id(o.locate, o.side), o.level);
  index_.erase(slot);
  orders_.release(oi);
}

void BookSet::remove_level(std::uint32_t id, std::uint32_t li) noexcept {
  const SideArray& s = arena_.side(id);
  bool found;
  const std::uint32_t pos = find_level(arena_.entries(s), s.size, side_key(id & 1, levels_[li].price), found);
  arena_.erase(id, pos);
  levels_.release(li);
}

}  // namespace tickinfer::book
