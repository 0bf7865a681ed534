#pragma once
// Full-depth books as the features' input: every message that changed a selected symbol's book,
// and every trade print of one, becomes a features::BookTick carrying the book's best levels
// after the message (as many as the feature spec reads) and the message's order flow.
//
//   trades: E at the resting order's price, aggressor opposite the resting side; C when
//   printable, at its own price, likewise; P (hidden executions) and Q (crosses with shares) with
//   the aggressor unknown: the same prints book::ItchEventDecoder sends the live features.
//   order flow: A F add 1; X D cancel 1; U adds 1 and cancels 1; E C execute 1.
//
// ItchBookTicks is the observer a book::ItchReplay calls; ItchFileBookTicks reads a day file,
// a gzip day file or a capture through it (the batch `tickinfer features` path). Header-only, so
// the Python module (python/src/itch_reader.cpp) uses it without linking the pipeline library
// (whose counting operator new belongs to the CLI and its tests alone).
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "book/book_set.hpp"
#include "book/itch_prints.hpp"
#include "book/itch_replay.hpp"
#include "features/batch.hpp"
#include "features/book_tick.hpp"
#include "itch/itch_source.hpp"
#include "itch/session_date.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::pipeline {

struct ItchBookTickConfig {
  std::vector<std::string> symbols;  // instrument i + 1 is symbols[i] (1 to 8 characters, unique)
  itch::Date date{};                 // the trading date (ITCH times carry none)
  std::size_t depth = 1;             // levels per side to fill (FeatureSpec::book_depth())
  book::Capacity capacity;
};

class ItchBookTicks final : public book::ReplayObserver {
 public:
  using Sink = std::function<void(const features::BookTick&)>;
  // Throws tickinfer::Error for an invalid date, depth or symbol list.
  ItchBookTicks(const book::BookSet& books, const ItchBookTickConfig& config, Sink sink);
  void on_message(std::uint64_t seq, const itch::Message& m, const book::Applied& applied) noexcept override;
  std::uint64_t ticks() const noexcept { return ticks_; }

 private:
  void emit(std::uint16_t locate, std::uint64_t ts) noexcept;

  const book::BookSet& books_;
  std::vector<std::string> symbols_;
  std::uint32_t depth_;
  itch::SessionClock clock_;
  Sink sink_;
  std::vector<std::uint32_t> instrument_of_locate_;  // 65536 entries, 0: not selected
  features::BookLevels levels_;
  book::Level scratch_[features::kMaxBookLevels];
  features::BookTick tick_;
  std::uint64_t ticks_ = 0;
};

// A day file, gzip day file or capture, replayed from its start on each call.
class ItchFileBookTicks final : public features::BookTickReplay {
 public:
  ItchFileBookTicks(std::string path, ItchBookTickConfig config, itch::SourceOptions options = {});
  void replay(const std::function<void(const features::BookTick&)>& on_tick) override;
  // Of the last replay.
  const itch::SourceStats& source_stats() const noexcept { return stats_; }
  const itch::DecodeCounters& decode_counters() const noexcept { return decode_; }
  const book::Integrity& integrity() const noexcept { return integrity_; }
  std::uint64_t ticks() const noexcept { return ticks_; }

 private:
  std::string path_;
  ItchBookTickConfig config_;
  itch::SourceOptions options_;
  itch::SourceStats stats_;
  itch::DecodeCounters decode_;
  book::Integrity integrity_;
  std::uint64_t ticks_ = 0;
};

// ---- definitions

inline ItchBookTicks::ItchBookTicks(const book::BookSet& books, const ItchBookTickConfig& config, Sink sink)
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

inline void ItchBookTicks::on_message(std::uint64_t, const itch::Message& m, const book::Applied& applied) noexcept {
  features::BookTick& t = tick_;
  t.adds = t.cancels = t.executions = 0;
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
    case itch::Type::OrderExecutedWithPrice: t.executions = 1; break;
    case itch::Type::Trade:
    case itch::Type::CrossTrade: break;
    default: return;
  }
  book::Print p;
  t.has_trade = book::print_of(m, applied, p);
  if (t.has_trade) {
    t.trade_price = static_cast<double>(p.price) / 1e4;
    t.trade_size = static_cast<double>(p.shares);
    t.trade_sign = p.aggressor;
  }
  // A book message ticks on the book it changed; P and Q on the header's symbol.
  const std::uint16_t locate = applied.book_message ? applied.locate : m.header.locate;
  if (!(applied.changed || t.has_trade) || instrument_of_locate_[locate] == 0) return;
  emit(locate, m.header.timestamp_ns);
}

inline void ItchBookTicks::emit(std::uint16_t locate, std::uint64_t ts) noexcept {
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

inline ItchFileBookTicks::ItchFileBookTicks(std::string path, ItchBookTickConfig config, itch::SourceOptions options)
    : path_(std::move(path)), config_(std::move(config)), options_(std::move(options)) {
  itch::check_source(path_);  // refuse a file that is not ITCH before any output exists
}

inline void ItchFileBookTicks::replay(const std::function<void(const features::BookTick&)>& on_tick) {
  book::BookSet books(config_.capacity);
  ItchBookTicks ticks(books, config_, on_tick);
  book::ItchReplay replay(books, &ticks, book::Lookahead::On);
  stats_ = itch::read_itch_source(path_, options_, replay);
  decode_ = replay.decode_counters();
  integrity_ = books.totals();
  ticks_ = ticks.ticks();
}

}  // namespace tickinfer::pipeline
