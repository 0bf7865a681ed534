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
// a gzip day file or a capture through it (the batch `tickinfer features` path).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "book/book_set.hpp"
#include "book/itch_replay.hpp"
#include "features/batch.hpp"
#include "features/book_tick.hpp"
#include "itch/itch_source.hpp"
#include "itch/session_date.hpp"

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
  void before(const itch::Message& m) noexcept override;
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
  book::OrderInfo resting_{};
  bool resting_found_ = false;
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

}  // namespace tickinfer::pipeline
