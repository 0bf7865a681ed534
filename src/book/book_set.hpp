#pragma once
// Full-depth (L3) order books for every instrument of an ITCH 5.0 day, built from decoded
// messages. docs/book.md has the structure, the memory formula and the integrity rules.
//
// One BookSet holds every book. The constructor allocates (and touches) all memory the set will
// ever use, sized from Capacity; apply() never allocates, locks, throws or makes a system call.
// Single-threaded: one thread applies, and readers run on that thread between applies.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "book/book_types.hpp"
#include "book/fixed_pool.hpp"
#include "book/order_index.hpp"
#include "book/side_arena.hpp"
#include "itch/itch_messages.hpp"

namespace tickinfer::book {

class BookSet {
 public:
  explicit BookSet(const Capacity& capacity = {});
  BookSet(const BookSet&) = delete;
  BookSet& operator=(const BookSet&) = delete;

  // The hot path: applies one message (A F E C X D U change books, R names a locate, every other
  // type is ignored) and counts what it broke in integrity().
  Applied apply(const itch::Message& m) noexcept;

  // Levels of one side, best first (bids highest price first, asks lowest first).
  std::size_t depth(std::uint16_t locate, Side side) const noexcept;
  Level level(std::uint16_t locate, Side side, std::size_t i) const noexcept;  // {} past the end
  std::size_t top(std::uint16_t locate, Side side, Level* out, std::size_t n) const noexcept;
  // L3: f(ref, shares) for each order of a level in time priority (the head first).
  template <class F>
  void for_each_order(std::uint16_t locate, Side side, std::size_t level_index, F&& f) const {
    for (std::uint32_t o = level_head(locate, side, level_index); o != kNone; o = orders_[o].next) {
      f(orders_[o].ref, orders_[o].shares);
    }
  }

  // The live order with this ref: true and out filled, or false (out untouched).
  bool find_order(std::uint64_t ref, OrderInfo& out) const noexcept;

  std::string_view symbol(std::uint16_t locate) const noexcept;  // "" before its R
  int locate_of(std::string_view symbol) const noexcept;          // -1 if unknown; O(instruments)

  // Counters of one instrument; a locate at or beyond Capacity::instruments gets the overflow
  // record shared by all such locates.
  const Integrity& integrity(std::uint16_t locate) const noexcept;
  Integrity totals() const noexcept;  // every instrument plus the overflow record
  std::uint64_t live_orders() const noexcept { return orders_.live(); }
  std::uint64_t live_levels() const noexcept { return levels_.live(); }

  // Sync state, for the feed: after an unrecoverable gap it marks the instrument unsynced (every
  // later book message for it counts while_unsynced, and is still applied); clear() empties the
  // book for a rebuild (orders and levels return to the pools; counters and sync state stay);
  // mark_synced() declares the rebuild complete. A capacity reject also marks unsynced.
  void mark_unsynced(std::uint16_t locate) noexcept;
  void mark_all_unsynced() noexcept;  // a loss that could have touched any instrument
  void mark_synced(std::uint16_t locate) noexcept;
  void clear(std::uint16_t locate) noexcept;
  bool is_synced(std::uint16_t locate) const noexcept;

  // Look-ahead for a reader that holds messages before applying them (ItchReplay on a file): the
  // loads apply() will take for m, started early as prefetches. The Order stage reads the line
  // the Index stage requested, so a reader running Index for the newest message and Order for one
  // halfway to being applied has several messages' misses in flight while it applies another
  // (docs/book.md, "Look-ahead for files"). A hint only: it changes nothing and is safe whatever
  // the books hold, since every index it follows is checked.
  enum class LoadStage : std::uint8_t { Index, Order };
  void prefetch(const itch::Message& m, LoadStage stage) const noexcept;

  std::size_t memory_bytes() const noexcept;  // what the constructor allocated
  std::uint64_t arena_compactions() const noexcept { return arena_.compactions(); }  // slow-path count
  const Capacity& capacity() const noexcept { return capacity_; }

 private:
  enum class AddResult { Added, Duplicate, Rejected };

  Applied on_add(std::uint16_t locate, const itch::AddOrder& a) noexcept;
  Applied on_reduce(std::uint16_t locate, std::uint64_t ref, std::uint32_t shares) noexcept;
  Applied on_delete(std::uint16_t locate, std::uint64_t ref) noexcept;
  Applied on_replace(std::uint16_t locate, const itch::OrderReplace& r) noexcept;
  void on_directory(std::uint16_t locate, const itch::StockDirectory& r) noexcept;
  [[gnu::noinline, gnu::cold]] Applied unknown_ref(std::uint16_t locate) noexcept;
  static Applied resting(const Order& o, std::uint16_t own, bool changed) noexcept {
    Applied a;
    a.locate = own;
    a.book_message = true;
    a.changed = changed;
    a.resting = true;
    a.resting_side = static_cast<Side>(o.side);
    a.resting_price = o.price;
    a.resting_shares = o.shares;
    return a;
  }
  void note_arrival(std::uint16_t header_locate, std::uint16_t book_locate) noexcept;
  AddResult add_order(std::uint16_t locate, std::uint8_t side, std::uint64_t ref,
                      std::uint32_t shares, std::uint32_t price) noexcept;
  void remove_order(std::uint32_t order, std::size_t slot) noexcept;
  void remove_level(std::uint32_t side_id, std::uint32_t level) noexcept;
  void check_crossing(std::uint16_t locate) noexcept;
  Integrity& counters(std::uint16_t locate) noexcept {
    return locate < capacity_.instruments ? integrity_[locate] : overflow_;
  }
  bool in_range(std::uint16_t locate) const noexcept { return locate < capacity_.instruments; }
  static std::uint32_t side_id(std::uint16_t locate, std::uint8_t side) noexcept {
    return std::uint32_t{locate} * 2 + side;
  }
  std::uint32_t level_node(std::uint16_t locate, Side side, std::size_t i) const noexcept;
  std::uint32_t level_head(std::uint16_t locate, Side side, std::size_t i) const noexcept {
    const std::uint32_t l = level_node(locate, side, i);
    return l == kNone ? kNone : levels_[l].head;
  }

  struct SymbolName {
    char text[8];
    std::uint8_t size;
  };

  Capacity capacity_;
  OrderPool orders_;
  OrderIndex index_;
  LevelPool levels_;
  SideArena arena_;
  std::unique_ptr<std::uint8_t[]> synced_;  // 1: in sync
  std::unique_ptr<Integrity[]> integrity_;
  std::unique_ptr<SymbolName[]> symbols_;
  Integrity overflow_;
};

}  // namespace tickinfer::book
