#pragma once
// The trade prints of ITCH 5.0 messages: one rule for every reader of the books (the feed's
// ItchEventDecoder, the features' book ticks, the Python tables).
//
//   E: at the resting order's price; C: at its own price, only when printable (a non-printable
//   C's volume prints once, in its cross's Q); both with the aggressor opposite the resting side
//   (+1 when an ask was hit). P (a hidden execution) and Q (a cross, when it has shares): the
//   aggressor unknown (0).
#include <cstdint>

#include "book/book_types.hpp"
#include "itch/itch_messages.hpp"

namespace tickinfer::book {

struct Print {
  std::uint32_t price = 0;   // Price(4)
  std::uint64_t shares = 0;
  int aggressor = 0;         // +1 buyer, -1 seller, 0 unknown
};

// applied: what BookSet::apply(m) returned (for E and C, the resting order as it was before).
// True when m prints a trade, with it in `out`.
inline bool print_of(const itch::Message& m, const Applied& applied, Print& out) noexcept {
  const auto against = [](Side s) { return s == Side::Bid ? -1 : 1; };
  switch (m.type()) {
    case itch::Type::OrderExecuted:
      if (!applied.resting) return false;
      out = {applied.resting_price, m.executed.shares, against(applied.resting_side)};
      return true;
    case itch::Type::OrderExecutedWithPrice:
      if (!applied.resting || m.executed_with_price.printable != 'Y') return false;
      out = {m.executed_with_price.price, m.executed_with_price.shares, against(applied.resting_side)};
      return true;
    case itch::Type::Trade: out = {m.trade.price, m.trade.shares, 0}; return true;
    case itch::Type::CrossTrade:
      if (m.cross.shares == 0) return false;
      out = {m.cross.price, m.cross.shares, 0};
      return true;
    default: return false;
  }
}

}  // namespace tickinfer::book
