#pragma once
// Normalized market-data events: what the feed delivers and what the feature pipeline consumes.
// Plain, trivially copyable structs so they pass through rings, capture files and shared memory
// by memcpy. The wire encoding (MoldUDP64 message blocks) lives in src/feed/ and is described
// byte by byte in docs/feed-wire-format.md; these are the decoded, host-order values.
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace tickinfer::md {

// Prices are signed fixed-point integers in units of 1e-8 (kPriceScale per currency unit):
// exact for every tick size in use, and no float rounding before the feature stage chooses to
// convert.
inline constexpr std::int64_t kPriceScale = 100'000'000;

inline constexpr double price_to_double(std::int64_t fixed) {
  return static_cast<double>(fixed) / static_cast<double>(kPriceScale);
}

// The aggressor of a trade: the side that crossed the spread.
enum class Side : std::uint8_t { Unknown = 0, Buy = 'B', Sell = 'S' };

// Top of book after a change.
struct Quote {
  std::uint32_t instrument = 0;
  std::int64_t exchange_ts_ns = 0;  // exchange timestamp, ns since the Unix epoch
  std::int64_t bid_price = 0;       // fixed-point, kPriceScale
  std::int64_t ask_price = 0;       // fixed-point, kPriceScale
  std::uint32_t bid_size = 0;
  std::uint32_t ask_size = 0;
};

// One execution.
struct Trade {
  std::uint32_t instrument = 0;
  std::int64_t exchange_ts_ns = 0;
  std::int64_t price = 0;  // fixed-point, kPriceScale
  std::uint32_t size = 0;
  Side aggressor = Side::Unknown;
};

// A message of the exchange's own protocol, forwarded whole for the compute side to decode: what
// a protocol sends whose events need state the compute side owns (NASDAQ ITCH 5.0's order
// messages, applied to the compute side's full-depth books: itch::ItchForwarder). size 0 is a
// loss notice: the feed lost messages before this point (instrument 0; every book must resync).
inline constexpr std::size_t kMaxExchangeMessageBytes = 50;  // ITCH 5.0's longest (NOII)
struct ExchangeMessage {
  std::uint32_t instrument = 0;     // the feed's instrument of the message's symbol
  std::int64_t exchange_ts_ns = 0;
  std::uint16_t size = 0;
  std::uint8_t bytes[kMaxExchangeMessageBytes] = {};
};

// A decoded event, as delivered by the feed in sequence order.
struct Event {
  enum class Kind : std::uint8_t { Quote = 1, Trade = 2, Exchange = 3 };
  Kind kind = Kind::Quote;
  union {
    Quote quote;
    Trade trade;
    ExchangeMessage exchange;
  };
  Event() : quote{} {}
  static Event of(const Quote& q) { Event e; e.kind = Kind::Quote; e.quote = q; return e; }
  static Event of(const Trade& t) { Event e; e.kind = Kind::Trade; e.trade = t; return e; }
  static Event of(const ExchangeMessage& x) { Event e; e.kind = Kind::Exchange; e.exchange = x; return e; }
  std::uint32_t instrument() const {
    return kind == Kind::Quote ? quote.instrument : kind == Kind::Trade ? trade.instrument : exchange.instrument;
  }
  std::int64_t exchange_ts_ns() const {
    return kind == Kind::Quote ? quote.exchange_ts_ns : kind == Kind::Trade ? trade.exchange_ts_ns
                                                                             : exchange.exchange_ts_ns;
  }
};

static_assert(std::is_trivially_copyable_v<Quote>);
static_assert(std::is_trivially_copyable_v<Trade>);
static_assert(std::is_trivially_copyable_v<ExchangeMessage>);
static_assert(std::is_trivially_copyable_v<Event>);

}  // namespace tickinfer::md
