#pragma once
// What a full-depth book hands the feature pipeline after each of its messages (the ITCH path:
// src/pipeline/itch_book_ticks.*), and the top-N view of the book the depth features read.
//
// The book's owner fills one BookLevels per book in place (the levels a spec asks for, no more:
// FeatureSpec::book_depth()) and passes a pointer: the features read the book as it stands after
// the message, without a copy of their own. A quote feed has no depth; the pipeline then keeps a
// one-level BookLevels per instrument from the last quote, so the same features still answer
// for level 1.
#include <cstdint>

namespace tickinfer::features {

inline constexpr std::size_t kMaxBookLevels = 20;

// The best `count` levels of each side, best first (bids by falling price, asks by rising price).
// Prices in currency units, sizes in shares.
struct BookLevels {
  std::uint32_t bid_count = 0, ask_count = 0;  // present levels, at most the depth filled
  double bid_price[kMaxBookLevels] = {}, bid_size[kMaxBookLevels] = {};
  double ask_price[kMaxBookLevels] = {}, ask_size[kMaxBookLevels] = {};
};

// One message of an instrument's book. A message that changed nothing on the book (a hidden
// execution, a cross print) still comes as a tick when it carries a trade.
struct BookTick {
  std::uint32_t instrument = 0;
  std::int64_t ts_ns = 0;             // exchange time, ns since the Unix epoch
  const BookLevels* levels = nullptr;  // the book after the message (never null)
  // False while the book is marked unsynced (the feed lost messages that may have touched it):
  // the tick is then invalid (book_unsynced) under the spec's policy, until the book is rebuilt.
  bool synced = true;
  // Order flow of the message: orders that arrived (A, F, and the new order of a U), orders that
  // left without trading (X takes shares, not the order: it counts as one cancel; D; the old
  // order of a U) and executions (E, C).
  std::uint8_t adds = 0, cancels = 0, executions = 0;
  bool has_trade = false;
  double trade_price = 0, trade_size = 0;
  int trade_sign = 0;  // +1 buyer aggressor, -1 seller, 0 unknown
};

}  // namespace tickinfer::features
