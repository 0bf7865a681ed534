#include "book/itch_event_decoder.hpp"

#include "book/itch_prints.hpp"

#include <algorithm>
#include <set>

#include "tickinfer/error.hpp"

namespace tickinfer::book {
namespace {

constexpr std::int64_t kPrice4ToFixed = md::kPriceScale / 10'000;  // 1e-4 -> 1e-8 units

std::uint32_t clamp32(std::uint64_t v) { return static_cast<std::uint32_t>(std::min<std::uint64_t>(v, UINT32_MAX)); }

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
  replay_ = std::make_unique<ItchReplay>(*books_, static_cast<ReplayObserver*>(this));
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

void ItchEventDecoder::quote_if_changed(std::uint16_t locate, std::uint64_t ts) noexcept {
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
  out_->emit(md::Event::of(q));
}

bool ItchEventDecoder::decode(std::uint64_t seq, const std::uint8_t* msg, std::uint16_t len,
                              feed::EventEmitter& out) noexcept {
  out_ = &out;
  const std::uint64_t decoded = replay_->decode_counters().total_decoded;
  replay_->on_record(seq, msg, len);  // on_message() below, when it decodes
  return replay_->decode_counters().total_decoded != decoded;
}

void ItchEventDecoder::on_message(std::uint64_t, const itch::Message& m, const Applied& applied) noexcept {
  const std::uint64_t ts = m.header.timestamp_ns;
  if (m.type() == itch::Type::StockDirectory) {
    on_directory(m.header.locate, m.stock_directory);
    return;
  }
  Print p;
  if (print_of(m, applied, p)) {
    // An execution prints on its resting order's book; P and Q on the header's.
    const std::uint16_t locate = applied.book_message ? applied.locate : m.header.locate;
    if (const std::uint32_t instrument = instrument_of_locate_[locate]; instrument != 0) {
      md::Trade t;
      t.instrument = instrument;
      t.exchange_ts_ns = clock_(ts);
      t.price = static_cast<std::int64_t>(p.price) * kPrice4ToFixed;
      t.size = clamp32(p.shares);
      t.aggressor = p.aggressor > 0 ? md::Side::Buy : p.aggressor < 0 ? md::Side::Sell : md::Side::Unknown;
      out_->emit(md::Event::of(t));
    }
  }
  if (applied.changed && instrument_of_locate_[applied.locate] != 0) quote_if_changed(applied.locate, ts);
}

void ItchEventDecoder::on_lost(std::uint64_t first, std::uint64_t count) noexcept {
  replay_->on_lost(first, count);  // every book unsynced
}

}  // namespace tickinfer::book
