#pragma once
// NASDAQ TotalView-ITCH 5.0 as the feed's protocol when the full-depth books live on the compute
// side (`tickinfer run` with [feed] protocol = "itch50"): the feed thread decodes each message
// only to check it and to read its symbol, and forwards the configured symbols' book messages
// (R, A F E C X D U, and the trade prints P Q) whole, as md::ExchangeMessage events, in
// sequence order. The compute side applies them to its books and hands the features the book as
// it stands after each message (pipeline/book_stage.hpp). Every other type is decoded, counted
// and dropped: the books ignore it.
//
// The symbols' locate codes come from the day's Stock Directory (R), which is forwarded for the
// compute side to learn them too. A range the feed reports lost becomes a loss notice (an
// ExchangeMessage of size 0, instrument 0) ahead of the next forwarded message: which symbols
// the lost messages touched cannot be known, so every book must resynchronise.
#include <cstdint>
#include <string>
#include <vector>

#include "itch/itch_decoder.hpp"
#include "itch/session_date.hpp"
#include "tickinfer/feed.hpp"

namespace tickinfer::itch {

class ItchForwarder final : public feed::MessageDecoder {
 public:
  // symbols: instrument i + 1 is symbols[i]. Throws tickinfer::Error for an invalid date, an
  // empty list, a symbol longer than 8 characters or one listed twice.
  ItchForwarder(std::vector<std::string> symbols, const Date& date);

  bool decode(std::uint64_t seq, const std::uint8_t* msg, std::uint16_t len,
              feed::EventEmitter& out) noexcept override;
  std::uint16_t max_message_bytes() const noexcept override { return static_cast<std::uint16_t>(kMaxMessageBytes); }
  void on_lost(std::uint64_t first, std::uint64_t count) noexcept override;

  const DecodeCounters& decode_counters() const noexcept { return counters_; }
  std::uint64_t forwarded() const noexcept { return forwarded_; }
  std::uint64_t lost() const noexcept { return lost_; }
  const std::vector<std::string>& symbols() const noexcept { return symbols_; }

 private:
  std::vector<std::string> symbols_;
  SessionClock clock_;
  std::vector<std::uint32_t> instrument_of_locate_;  // 65536 entries, 0: not selected
  DecodeCounters counters_;
  std::uint64_t forwarded_ = 0, lost_ = 0;
  bool loss_pending_ = false;
};

}  // namespace tickinfer::itch
