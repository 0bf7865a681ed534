#include "feed/messages.hpp"

#include "feed/byte_order.hpp"

namespace tickinfer::feed {

std::size_t encode_quote(const md::Quote& q, std::uint8_t* out) noexcept {
  out[0] = kQuoteType;
  store_be32(out + 1, q.instrument);
  store_be64(out + 5, static_cast<std::uint64_t>(q.exchange_ts_ns));
  store_be64(out + 13, static_cast<std::uint64_t>(q.bid_price));
  store_be64(out + 21, static_cast<std::uint64_t>(q.ask_price));
  store_be32(out + 29, q.bid_size);
  store_be32(out + 33, q.ask_size);
  return kQuoteBytes;
}

std::size_t encode_trade(const md::Trade& t, std::uint8_t* out) noexcept {
  out[0] = kTradeType;
  store_be32(out + 1, t.instrument);
  store_be64(out + 5, static_cast<std::uint64_t>(t.exchange_ts_ns));
  store_be64(out + 13, static_cast<std::uint64_t>(t.price));
  store_be32(out + 21, t.size);
  out[25] = static_cast<std::uint8_t>(t.aggressor);
  return kTradeBytes;
}

std::size_t encode_event(const md::Event& e, std::uint8_t* out) noexcept {
  return e.kind == md::Event::Kind::Quote ? encode_quote(e.quote, out) : encode_trade(e.trade, out);
}

const char* to_string(DecodeStatus status) noexcept {
  switch (status) {
    case DecodeStatus::Ok: return "ok";
    case DecodeStatus::Empty: return "empty message block";
    case DecodeStatus::UnknownType: return "unknown message type";
    case DecodeStatus::WrongLength: return "wrong length for the message type";
    case DecodeStatus::BadSide: return "trade aggressor is not 'B', 'S' or 0";
  }
  return "unknown";
}

DecodeStatus decode_message(const std::uint8_t* msg, std::size_t len, md::Event& out) noexcept {
  if (len == 0) return DecodeStatus::Empty;
  if (msg[0] == kQuoteType) {
    if (len != kQuoteBytes) return DecodeStatus::WrongLength;
    out.kind = md::Event::Kind::Quote;
    md::Quote& q = out.quote;
    q.instrument = load_be32(msg + 1);
    q.exchange_ts_ns = static_cast<std::int64_t>(load_be64(msg + 5));
    q.bid_price = static_cast<std::int64_t>(load_be64(msg + 13));
    q.ask_price = static_cast<std::int64_t>(load_be64(msg + 21));
    q.bid_size = load_be32(msg + 29);
    q.ask_size = load_be32(msg + 33);
    return DecodeStatus::Ok;
  }
  if (msg[0] == kTradeType) {
    if (len != kTradeBytes) return DecodeStatus::WrongLength;
    const std::uint8_t side = msg[25];
    if (side != 0 && side != 'B' && side != 'S') return DecodeStatus::BadSide;
    out.kind = md::Event::Kind::Trade;
    out.trade = md::Trade{};
    md::Trade& t = out.trade;
    t.instrument = load_be32(msg + 1);
    t.exchange_ts_ns = static_cast<std::int64_t>(load_be64(msg + 5));
    t.price = static_cast<std::int64_t>(load_be64(msg + 13));
    t.size = load_be32(msg + 21);
    t.aggressor = static_cast<md::Side>(side);
    return DecodeStatus::Ok;
  }
  return DecodeStatus::UnknownType;
}

}  // namespace tickinfer::feed
