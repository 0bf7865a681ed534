#include "book/itch_event_decoder.hpp"

#include <algorithm>
#include <set>

#include "tickinfer/error.hpp"

namespace tickinfer::book {
namespace {

constexpr std::int64_t kPrice4ToFixed = md::kPriceScale / 10'000;  // 1e-4 -> 1e-8 units

std::uint32_t clamp32(std::uint64_t v) { return static_cast<std::uint32_t>(std::min<std::uint64_t>(v, UINT32_MAX)); }

md::Side aggressor_against(Side resting) { return resting == Side::Bid ? md::Side::Sell : md::Side::Buy; }

}  // namespace

ItchEventDecoder::ItchEventDecoder(const ItchEventConfig& config)
    : config_(config), instrument_of_locate_(1 << 16, 0), top_(1 << 16) {
  if (!itch::is_valid(config.date)) throw Error("itch50 feed: the trading date is not a valid date");
  std::set<std::string> seen;
  for (const std::string& s : config.symbols) {
    if (s.empty() || s.size() > 8) throw Error("itch50 feed: symbol '" + s + "' must be 1 to 8 characters");
    if (!seen.insert(s).second) throw Error("itch50 feed: symbol '" + s + "' is listed twice");
  }
  clock_ = itch::SessionClock(config.date);
  books_ = std::make_unique<BookSet>(config.capacity);
}

void ItchEventDecoder::on_directory(std::uint16_t locate, const itch::StockDirectory& r) noexcept {
  const std::string_view sym = itch::symbol_view(r.stock);
  if (config_.symbols.empty()) {
    instrument_of_locate_[locate] = locate;
    return;
  }
  instrument_of_locate_[locate] = 0;
  for (std::size_t i = 0; i < config_.symbols.size(); ++i) {
    if (config_.symbols[i] == sym) instrument_of_locate_[locate] = static_cast<std::uint32_t>(i + 1);
  }
}

void ItchEventDecoder::trade(feed::EventEmitter& out, std::uint32_t instrument, std::uint64_t ts,
                             std::uint32_t price, std::uint64_t shares, md::Side aggressor) const noexcept {
  md::Trade t;
  t.instrument = instrument;
  t.exchange_ts_ns = clock_(ts);
  t.price = static_cast<std::int64_t>(price) * kPrice4ToFixed;
  t.size = clamp32(shares);
  t.aggressor = aggressor;
  out.emit(md::Event::of(t));
}

void ItchEventDecoder::quote_if_changed(feed::EventEmitter& out, std::uint16_t locate, std::uint64_t ts) noexcept {
  const Level bid = books_->level(locate, Side::Bid, 0), ask = books_->level(locate, Side::Ask, 0);
  const Top now{bid.price, ask.price, bid.shares, ask.shares};
  if (now == top_[locate]) return;
  top_[locate] = now;
  md::Quote q;
  q.instrument = instrument_of_locate_[locate];
  q.exchange_ts_ns = clock_(ts);
  q.bid_price = static_cast<std::int64_t>(bid.price) * kPrice4ToFixed;  // 0 with an empty side
  q.ask_price = static_cast<std::int64_t>(ask.price) * kPrice4ToFixed;
  q.bid_size = clamp32(bid.shares);
  q.ask_size = clamp32(ask.shares);
  out.emit(md::Event::of(q));
}

bool ItchEventDecoder::decode(std::uint64_t, const std::uint8_t* msg, std::uint16_t len,
                              feed::EventEmitter& out) noexcept {
  itch::Message m;
  const itch::DecodeStatus status = itch::decode(msg, len, m);
  counters_.count(len > 0 ? msg[0] : 0, status);
  if (status != itch::DecodeStatus::Ok) return false;
  const std::uint64_t ts = m.header.timestamp_ns;
  // The resting order an execution names: its side and display price are gone once it fills.
  OrderInfo resting;
  bool found = false;
  if (m.type() == itch::Type::OrderExecuted) found = books_->find_order(m.executed.order_ref, resting);
  if (m.type() == itch::Type::OrderExecutedWithPrice) {
    found = books_->find_order(m.executed_with_price.order_ref, resting);
  }
  const Applied applied = books_->apply(m);
  switch (m.type()) {
    case itch::Type::StockDirectory: on_directory(m.header.locate, m.stock_directory); return true;
    case itch::Type::OrderExecuted:
      if (found && instrument_of_locate_[resting.locate] != 0) {
        trade(out, instrument_of_locate_[resting.locate], ts, resting.price, m.executed.shares,
              aggressor_against(resting.side));
      }
      break;
    case itch::Type::OrderExecutedWithPrice:
      if (found && m.executed_with_price.printable == 'Y' && instrument_of_locate_[resting.locate] != 0) {
        trade(out, instrument_of_locate_[resting.locate], ts, m.executed_with_price.price,
              m.executed_with_price.shares, aggressor_against(resting.side));
      }
      break;
    case itch::Type::Trade:
      if (instrument_of_locate_[m.header.locate] != 0) {
        trade(out, instrument_of_locate_[m.header.locate], ts, m.trade.price, m.trade.shares, md::Side::Unknown);
      }
      return true;
    case itch::Type::CrossTrade:
      if (m.cross.shares > 0 && instrument_of_locate_[m.header.locate] != 0) {
        trade(out, instrument_of_locate_[m.header.locate], ts, m.cross.price, m.cross.shares, md::Side::Unknown);
      }
      return true;
    default: break;
  }
  if (applied.changed && instrument_of_locate_[applied.locate] != 0) quote_if_changed(out, applied.locate, ts);
  return true;
}

void ItchEventDecoder::on_lost(std::uint64_t, std::uint64_t count) noexcept {
  lost_ += count;
  books_->mark_all_unsynced();
}

}  // namespace tickinfer::book
