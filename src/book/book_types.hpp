#pragma once
// The plain value types of the order book's public API (docs/book.md): sides, capacities, price
// levels as the top-N readers see them, and the integrity counters.
#include <cstdint>

namespace tickinfer::book {

enum class Side : std::uint8_t { Bid = 0, Ask = 1 };

// Everything a BookSet will ever hold; the constructor allocates for exactly this much.
struct Capacity {
  std::uint32_t orders = 1u << 22;       // live orders, all books together (clamped to 2^30)
  std::uint32_t levels = 1u << 20;       // live price levels, all books and sides (clamped to 2^28)
  std::uint32_t instruments = 1u << 14;  // locate codes 0 .. instruments-1 (clamped to 65536)
};

// One aggregated price level. price is ITCH's Price(4) integer (1e-4 dollars).
struct Level {
  std::uint32_t price = 0;
  std::uint64_t shares = 0;   // sum of the remaining shares of its orders
  std::uint32_t orders = 0;   // number of live orders queued at this price
  friend bool operator==(const Level&, const Level&) = default;
};

// One live order as find_order() reports it.
struct OrderInfo {
  std::uint16_t locate = 0;
  Side side = Side::Bid;
  std::uint32_t price = 0;   // display price, Price(4)
  std::uint32_t shares = 0;  // remaining
};

// Counts of messages that broke a book rule or met the book in a doubtful state: one message adds
// at most 1 to each field (it may add to several). A count lands on the order's own book when the
// message resolved to a live order, otherwise on the message header's locate; a header locate at
// or beyond Capacity::instruments lands on a separate overflow record (see BookSet::integrity).
struct Integrity {
  std::uint64_t unknown_ref = 0;      // E C X D: ref not live; U: original ref not live. No change.
  std::uint64_t duplicate_ref = 0;    // A F: ref already live (the add is dropped, the old order
                                      // stays); U: new ref live after the original left (nothing added)
  std::uint64_t overfill = 0;         // E C X subtracting more than the order's remaining shares
                                      // (the order is removed, as at exactly zero)
  std::uint64_t bad_side = 0;         // A F with a side byte other than 'B' or 'S' (dropped)
  std::uint64_t zero_shares = 0;      // A F with 0 shares (dropped); U with new shares 0 (the
                                      // original is removed, nothing is added)
  std::uint64_t locate_mismatch = 0;  // E C X D U whose header locate differs from the live
                                      // order's own locate (applied to the order's own book)
  std::uint64_t crossed = 0;          // book messages after which best bid > best ask
  std::uint64_t locked = 0;           // book messages after which best bid == best ask
  std::uint64_t capacity_rejects = 0; // adds dropped for lack of order, level or side-array room
                                      // (the book is then marked unsynced); A F R whose locate is
                                      // beyond Capacity::instruments (overflow record only)
  std::uint64_t while_unsynced = 0;   // book messages that found their book marked unsynced
  Integrity& operator+=(const Integrity& o) noexcept;
  friend bool operator==(const Integrity&, const Integrity&) = default;
};

// What apply() did. locate: the book the message went to (the order's own locate for messages
// that name a live order, else the header's). book_message: the type is A F E C X D or U.
// changed: some level's shares or orders changed (top-N readers may skip the rest).
// For E C X D U that named a live order, that order as it was before the message (its side, display
// price and remaining shares; gone from the book once it fills): readers need no lookup of their own.
// 16 bytes, returned in two registers.
struct Applied {
  std::uint16_t locate = 0;
  bool book_message = false;
  bool changed = false;
  bool resting = false;        // the fields below describe the named order
  Side resting_side = Side::Bid;
  std::uint32_t resting_price = 0;   // Price(4)
  std::uint32_t resting_shares = 0;  // before the message
};
static_assert(sizeof(Applied) == 16);

}  // namespace tickinfer::book
