#pragma once
// What one accepted event tells the features of its instrument. Built once per event by
// InstrumentState so shared quantities (mid, the one-tick log return) are computed once.
#include <cstdint>

#include "features/book_tick.hpp"

namespace tickinfer::features {

struct TickContext {
  std::int64_t ts_ns = 0;  // exchange timestamp of the event
  // The event moved the top of book (a quote feed's quote; a book message that changed the best
  // price or size of either side, or the first accepted one). A book message can be both.
  bool is_quote = false;
  bool is_trade = false;   // the event carries a trade (a quote feed's trade; an execution)
  // Quote state after the event (the last accepted quote when is_quote is false).
  double bid = 0, ask = 0, bid_size = 0, ask_size = 0;
  double mid = 0;            // (bid + ask) / 2
  bool have_quote = false;   // at least one quote accepted so far
  // The quote's one-tick log return ln(mid / previous mid); 0 for the instrument's first quote.
  double r1 = 0;
  // The book after the event (never null once an event was accepted): the feed's depth, or a
  // one-level book from the last quote.
  const BookLevels* book = nullptr;
  // Order flow of the event (book feeds; 0 on quote feeds): see BookTick.
  std::uint8_t adds = 0, cancels = 0, executions = 0;
  // Trade fields, valid when is_trade.
  double trade_price = 0, trade_size = 0;
  int trade_sign = 0;        // +1 buyer aggressor, -1 seller, 0 unknown
  std::int64_t first_ts_ns = 0;       // first accepted event of the instrument
  std::int64_t last_trade_ts_ns = -1; // -1 before the first trade
};

}  // namespace tickinfer::features
