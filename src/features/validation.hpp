#pragma once
// Input validation: why an event may not update the features. The pipeline applies the
// configured InvalidPolicy to any event with a reason other than None and counts it by reason.
#include <cstdint>

#include "features/book_tick.hpp"
#include "tickinfer/market_data.hpp"

namespace tickinfer::features {

enum class InvalidReason : std::uint8_t {
  None = 0,
  NonFinite,         // a NaN/Inf price or size in the source (fixed-point events cannot hold one)
  NonPositivePrice,  // bid, ask or trade price <= 0
  CrossedBook,       // bid > ask (a locked book, bid == ask, is accepted)
  EmptySide,         // a quote with bid_size or ask_size == 0
  BadSize,           // negative size in the source, or a trade of size 0
  TimeBackwards,     // exchange timestamp earlier than the instrument's last accepted event
  OutOfRange,        // a value that does not fit (size > 2^32-1 in the source, timestamp < 0 or >= 2^62)
  BookUnsynced,      // a book tick of a book marked unsynced (messages were lost; it may be wrong)
};
inline constexpr int kInvalidReasonCount = 9;
const char* invalid_reason_name(InvalidReason r);

// What can be checked on the decoded event itself. last_ts_ns: the instrument's last accepted
// timestamp (INT64_MIN before any).
// Exchange timestamps outside [0, kMaxTimestampNs) are OutOfRange (ns since the epoch; the bound
// keeps bar arithmetic free of overflow).
inline constexpr std::int64_t kMaxTimestampNs = std::int64_t{1} << 62;

inline InvalidReason validate_event(const md::Event& e, std::int64_t last_ts_ns) noexcept {
  const std::int64_t ts = e.exchange_ts_ns();
  if (ts < 0 || ts >= kMaxTimestampNs) return InvalidReason::OutOfRange;
  if (ts < last_ts_ns) return InvalidReason::TimeBackwards;
  if (e.kind == md::Event::Kind::Quote) {
    const md::Quote& q = e.quote;
    if (q.bid_price <= 0 || q.ask_price <= 0) return InvalidReason::NonPositivePrice;
    if (q.bid_price > q.ask_price) return InvalidReason::CrossedBook;
    if (q.bid_size == 0 || q.ask_size == 0) return InvalidReason::EmptySide;
    return InvalidReason::None;
  }
  const md::Trade& t = e.trade;
  if (t.price <= 0) return InvalidReason::NonPositivePrice;
  if (t.size == 0) return InvalidReason::BadSize;
  return InvalidReason::None;
}

// A book message (BookTick): the timestamp as above; the book must be in sync; its top must have both sides, a
// positive bid and no cross (a locked book is accepted, as for quotes); a trade it carries must
// have a positive price and size.
inline InvalidReason validate_book_tick(const BookTick& t, std::int64_t last_ts_ns) noexcept {
  if (t.ts_ns < 0 || t.ts_ns >= kMaxTimestampNs) return InvalidReason::OutOfRange;
  if (t.ts_ns < last_ts_ns) return InvalidReason::TimeBackwards;
  if (!t.synced) return InvalidReason::BookUnsynced;
  const BookLevels& b = *t.levels;
  if (b.bid_count == 0 || b.ask_count == 0) return InvalidReason::EmptySide;
  if (b.bid_price[0] <= 0 || b.ask_price[0] <= 0) return InvalidReason::NonPositivePrice;
  if (b.bid_price[0] > b.ask_price[0]) return InvalidReason::CrossedBook;
  if (b.bid_size[0] <= 0 || b.ask_size[0] <= 0) return InvalidReason::EmptySide;
  if (t.has_trade) {
    if (!(t.trade_price > 0)) return InvalidReason::NonPositivePrice;
    if (!(t.trade_size > 0)) return InvalidReason::BadSize;
  }
  return InvalidReason::None;
}

}  // namespace tickinfer::features
