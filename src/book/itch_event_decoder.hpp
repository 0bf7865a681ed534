#pragma once
// NASDAQ TotalView-ITCH 5.0 as the feed's payload protocol ([feed] protocol = "itch50"): every
// message goes through the full-depth books (BookSet), and the configured symbols' events come
// out as the feed's md::Events, so the features and models downstream run unchanged:
//
// - a Quote whenever an order message changed the best bid or ask (price or size) of a symbol;
// - a Trade for each execution of a displayed order (E, and C when printable), at the resting
//   order's price for E and at C's own price, with the aggressor opposite the resting side;
//   for each hidden execution (P) and each cross print with shares (Q), aggressor unknown.
//   Non-printable C executions are left out: the cross's Q prints their volume once.
//
// Prices become tickinfer's 1e-8 units (Price(4) x 10^4); ITCH times (ns since midnight,
// US Eastern) become epoch ns with the configured trading date (itch/session_date.hpp).
// A range the feed reports lost marks every book unsynced (BookSet::mark_all_unsynced): which
// symbols the lost messages touched cannot be known.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "book/book_set.hpp"
#include "book/itch_replay.hpp"
#include "itch/itch_decoder.hpp"
#include "itch/session_date.hpp"
#include "tickinfer/feed.hpp"

namespace tickinfer::book {

struct ItchEventConfig {
  std::vector<std::string> symbols;  // instrument i + 1 is symbols[i]; empty: every symbol, by locate
  itch::Date date{};                 // the trading date (ITCH carries none)
  Capacity capacity;
};

class ItchEventDecoder final : public feed::MessageDecoder, private ReplayObserver {
 public:
  // Throws tickinfer::Error for an invalid date, a symbol longer than 8 characters, or one listed twice.
  explicit ItchEventDecoder(const ItchEventConfig& config);

  bool decode(std::uint64_t seq, const std::uint8_t* msg, std::uint16_t len,
              feed::EventEmitter& out) noexcept override;
  std::uint16_t max_message_bytes() const noexcept override {
    return static_cast<std::uint16_t>(itch::kMaxMessageBytes);
  }
  void on_lost(std::uint64_t first, std::uint64_t count) noexcept override;

  const BookSet& books() const noexcept { return *books_; }
  const itch::DecodeCounters& decode_counters() const noexcept { return replay_->decode_counters(); }
  std::uint64_t lost() const noexcept { return replay_->lost(); }
  // The instrument id a locate was given by its R message (0: not selected).
  std::uint32_t instrument(std::uint16_t locate) const noexcept { return instrument_of_locate_[locate]; }

 private:
  struct Top {
    std::uint32_t bid_price = 0, ask_price = 0;
    std::uint64_t bid_shares = 0, ask_shares = 0;
    bool operator==(const Top&) const = default;
  };
  // The replay's observer: the events of each applied message.
  void on_message(std::uint64_t seq, const itch::Message& m, const Applied& applied) noexcept override;
  void quote_if_changed(std::uint16_t locate, std::uint64_t ts) noexcept;
  void on_directory(std::uint16_t locate, const itch::StockDirectory& r) noexcept;

  ItchEventConfig config_;
  std::unique_ptr<BookSet> books_;
  std::unique_ptr<ItchReplay> replay_;               // decode, count, apply; calls back here
  feed::EventEmitter* out_ = nullptr;                // the current decode() call's
  std::vector<std::uint32_t> instrument_of_locate_;  // 65536 entries
  std::vector<Top> top_;                             // the last quoted top, per locate
  itch::SessionClock clock_;
};

}  // namespace tickinfer::book
