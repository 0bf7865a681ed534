#include "itch/itch_forwarder.hpp"

#include <cstring>
#include <set>

#include "tickinfer/error.hpp"

static_assert(tickinfer::itch::kMaxMessageBytes <= tickinfer::md::kMaxExchangeMessageBytes,
              "an ITCH message must fit an md::ExchangeMessage");

namespace tickinfer::itch {

ItchForwarder::ItchForwarder(std::vector<std::string> symbols, const Date& date)
    : symbols_(std::move(symbols)), instrument_of_locate_(1 << 16, 0) {
  if (!is_valid(date)) throw Error("itch50 feed: the trading date is not a valid date");
  if (symbols_.empty()) throw Error("itch50 feed: no symbols configured (instrument i + 1 is symbols[i])");
  std::set<std::string> seen;
  for (const std::string& s : symbols_) {
    if (s.empty() || s.size() > 8) throw Error("itch50 feed: symbol '" + s + "' must be 1 to 8 characters");
    if (!seen.insert(s).second) throw Error("itch50 feed: symbol '" + s + "' is listed twice");
  }
  clock_ = SessionClock(date);
}

bool ItchForwarder::decode(std::uint64_t, const std::uint8_t* msg, std::uint16_t len,
                           feed::EventEmitter& out) noexcept {
  Message m;
  const DecodeStatus status = itch::decode(msg, len, m);
  counters_.count(len > 0 ? msg[0] : 0, status);
  if (status != DecodeStatus::Ok) return false;
  const std::uint16_t locate = m.header.locate;
  switch (m.type()) {
    case Type::StockDirectory: {
      const std::string_view sym = symbol_view(m.stock_directory.stock);
      std::uint32_t id = 0;
      for (std::size_t i = 0; i < symbols_.size(); ++i)
        if (symbols_[i] == sym) id = static_cast<std::uint32_t>(i + 1);
      instrument_of_locate_[locate] = id;
      break;
    }
    case Type::AddOrder:
    case Type::AddOrderMpid:
    case Type::OrderExecuted:
    case Type::OrderExecutedWithPrice:
    case Type::OrderCancel:
    case Type::OrderDelete:
    case Type::OrderReplace:
    case Type::Trade:
    case Type::CrossTrade: break;
    default: return true;  // the books ignore it
  }
  // E C X D U name the order's own symbol in the header (the spec's locate is per symbol).
  const std::uint32_t instrument = instrument_of_locate_[locate];
  if (instrument == 0) return true;
  if (loss_pending_) {
    md::ExchangeMessage notice;  // size 0: a loss notice
    notice.exchange_ts_ns = clock_(m.header.timestamp_ns);
    out.emit(md::Event::of(notice));
    loss_pending_ = false;
  }
  md::ExchangeMessage x;
  x.instrument = instrument;
  x.exchange_ts_ns = clock_(m.header.timestamp_ns);
  x.size = len;  // <= kMaxMessageBytes: the decoder checked the type's exact length
  std::memcpy(x.bytes, msg, len);
  out.emit(md::Event::of(x));
  ++forwarded_;
  return true;
}

void ItchForwarder::on_lost(std::uint64_t, std::uint64_t count) noexcept {
  lost_ += count;
  loss_pending_ = true;
}

}  // namespace tickinfer::itch
