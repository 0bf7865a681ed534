#pragma once
// The normalized market-data messages carried inside MoldUDP64 message blocks. Every field is
// big-endian; layouts are fixed and listed byte by byte in docs/feed-wire-format.md.
//
//   Quote 'Q' (37 bytes): type(1) instrument(4) exchange_ts_ns(8) bid_price(8) ask_price(8)
//                         bid_size(4) ask_size(4)
//   Trade 'T' (26 bytes): type(1) instrument(4) exchange_ts_ns(8) price(8) size(4) aggressor(1)
//
// Prices are signed fixed-point in units of 1e-8 (md::kPriceScale); timestamps are ns since the
// Unix epoch on the exchange clock; aggressor is 'B', 'S' or 0 (unknown).
#include <cstddef>
#include <cstdint>

#include "tickinfer/market_data.hpp"

namespace tickinfer::feed {

inline constexpr std::uint8_t kQuoteType = 'Q';
inline constexpr std::uint8_t kTradeType = 'T';
inline constexpr std::size_t kQuoteBytes = 37;
inline constexpr std::size_t kTradeBytes = 26;
inline constexpr std::size_t kMaxMessageBytes = kQuoteBytes;  // the largest message we send

// Writes the message into out (which must hold kQuoteBytes / kTradeBytes) and returns its size.
std::size_t encode_quote(const md::Quote& q, std::uint8_t* out) noexcept;
std::size_t encode_trade(const md::Trade& t, std::uint8_t* out) noexcept;
std::size_t encode_event(const md::Event& e, std::uint8_t* out) noexcept;

enum class DecodeStatus : std::uint8_t {
  Ok,
  Empty,        // a zero-length block
  UnknownType,  // first byte is not a message type we know
  WrongLength,  // known type, but the block is not exactly that type's size
  BadSide,      // trade aggressor not 'B', 'S' or 0
};
const char* to_string(DecodeStatus status) noexcept;

// Decodes one message block. Reads only [msg, msg + len); never throws.
DecodeStatus decode_message(const std::uint8_t* msg, std::size_t len, md::Event& out) noexcept;

}  // namespace tickinfer::feed
