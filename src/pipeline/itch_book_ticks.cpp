#include "pipeline/itch_book_ticks.hpp"

#include <set>

#include "tickinfer/error.hpp"

namespace tickinfer::pipeline {

ItchBookTicks::ItchBookTicks(const book::BookSet& books, const ItchBookTickConfig& config, Sink sink)
    : books_(books), symbols_(config.symbols), depth_(static_cast<std::uint32_t>(config.depth)),
      sink_(std::move(sink)), instrument_of_locate_(1 << 16, 0) {
  if (!itch::is_valid(config.date)) throw Error("itch book ticks: the trading date is not a valid date");
  if (config.depth < 1 || config.depth > features::kMaxBookLevels)
    throw Error("itch book ticks: depth " + std::to_string(config.depth) + " is outside 1.." +
                std::to_string(features::kMaxBookLevels));
  if (symbols_.empty()) throw Error("itch book ticks: no symbols selected");
  std::set<std::string> seen;
  for (const std::string& s : symbols_) {
    if (s.empty() || s.size() > 8) throw Error("itch book ticks: symbol '" + s + "' must be 1 to 8 characters");
    if (!seen.insert(s).second) throw Error("itch book ticks: symbol '" + s + "' is listed twice");
  }
  clock_ = itch::SessionClock(config.date);
}

void ItchBookTicks::before(const itch::Message& m) noexcept {
  // The resting order an execution names: its side and price are gone once it fills.
  resting_found_ = false;
  if (m.type() == itch::Type::OrderExecuted) resting_found_ = books_.find_order(m.executed.order_ref, resting_);
  if (m.type() == itch::Type::OrderExecutedWithPrice)
    resting_found_ = books_.find_order(m.executed_with_price.order_ref, resting_);
}

void ItchBookTicks::on_message(std::uint64_t, const itch::Message& m, const book::Applied& applied) noexcept {
  features::BookTick& t = tick_;
  t.adds = t.cancels = t.executions = 0;
  t.has_trade = false;
  const auto trade = [&t](std::uint32_t price4, std::uint64_t shares, int sign) {
    t.has_trade = true;
    t.trade_price = static_cast<double>(price4) / 1e4;
    t.trade_size = static_cast<double>(shares);
    t.trade_sign = sign;
  };
  const auto against = [](book::Side resting) { return resting == book::Side::Bid ? -1 : 1; };
  std::uint16_t locate = applied.locate;
  switch (m.type()) {
    case itch::Type::StockDirectory: {
      const std::string_view sym = itch::symbol_view(m.stock_directory.stock);
      std::uint32_t id = 0;
      for (std::size_t i = 0; i < symbols_.size(); ++i)
        if (symbols_[i] == sym) id = static_cast<std::uint32_t>(i + 1);
      instrument_of_locate_[m.header.locate] = id;
      return;
    }
    case itch::Type::AddOrder:
    case itch::Type::AddOrderMpid: t.adds = 1; break;
    case itch::Type::OrderCancel:
    case itch::Type::OrderDelete: t.cancels = 1; break;
    case itch::Type::OrderReplace: t.adds = t.cancels = 1; break;
    case itch::Type::OrderExecuted:
      t.executions = 1;
      if (resting_found_) trade(resting_.price, m.executed.shares, against(resting_.side));
      break;
    case itch::Type::OrderExecutedWithPrice:
      t.executions = 1;
      if (resting_found_ && m.executed_with_price.printable == 'Y')
        trade(m.executed_with_price.price, m.executed_with_price.shares, against(resting_.side));
      break;
    case itch::Type::Trade:
      locate = m.header.locate;
      trade(m.trade.price, m.trade.shares, 0);
      break;
    case itch::Type::CrossTrade:
      locate = m.header.locate;
      if (m.cross.shares > 0) trade(m.cross.price, m.cross.shares, 0);
      break;
    default: return;
  }
  if (!(applied.changed || t.has_trade) || instrument_of_locate_[locate] == 0) return;
  emit(locate, m.header.timestamp_ns);
}

void ItchBookTicks::emit(std::uint16_t locate, std::uint64_t ts) noexcept {
  features::BookLevels& b = levels_;
  b.bid_count = static_cast<std::uint32_t>(books_.top(locate, book::Side::Bid, scratch_, depth_));
  for (std::uint32_t i = 0; i < b.bid_count; ++i) {
    b.bid_price[i] = static_cast<double>(scratch_[i].price) / 1e4;
    b.bid_size[i] = static_cast<double>(scratch_[i].shares);
  }
  b.ask_count = static_cast<std::uint32_t>(books_.top(locate, book::Side::Ask, scratch_, depth_));
  for (std::uint32_t i = 0; i < b.ask_count; ++i) {
    b.ask_price[i] = static_cast<double>(scratch_[i].price) / 1e4;
    b.ask_size[i] = static_cast<double>(scratch_[i].shares);
  }
  tick_.instrument = instrument_of_locate_[locate];
  tick_.ts_ns = clock_(ts);
  tick_.levels = &levels_;
  tick_.synced = books_.is_synced(locate);
  ++ticks_;
  sink_(tick_);
}

ItchFileBookTicks::ItchFileBookTicks(std::string path, ItchBookTickConfig config, itch::SourceOptions options)
    : path_(std::move(path)), config_(std::move(config)), options_(std::move(options)) {
  itch::check_source(path_);  // refuse a file that is not ITCH before any output exists
}

void ItchFileBookTicks::replay(const std::function<void(const features::BookTick&)>& on_tick) {
  book::BookSet books(config_.capacity);
  ItchBookTicks ticks(books, config_, on_tick);
  book::ItchReplay replay(books, &ticks);
  stats_ = itch::read_itch_source(path_, options_, replay);
  decode_ = replay.decode_counters();
  integrity_ = books.totals();
  ticks_ = ticks.ticks();
}

}  // namespace tickinfer::pipeline
