#pragma once
// Where ticks come from for the batch `tickinfer features` command and for tests: a pull
// interface over decoded md::Event values. The CSV reader is one source; a capture-file reader
// from the feed module plugs in as another (see make_tick_source in src/cli/features_command.cpp).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "features/validation.hpp"
#include "tickinfer/market_data.hpp"

namespace tickinfer::features {

// One tick as a source delivers it. `flaw` reports a value the event type cannot represent
// (NaN/Inf, negative size): the event then holds 0 in that field and the pipeline treats the
// tick as invalid for that reason, under the configured policy.
struct SourceTick {
  md::Event event;
  InvalidReason flaw = InvalidReason::None;
  std::int64_t line = 0;  // 1-based position in the source (line of a CSV), for messages
};

class TickSource {
 public:
  virtual ~TickSource() = default;
  // Fills `out` with the next tick; false at the end. Malformed input throws tickinfer::Error
  // naming the source and position: a broken file is never half-read silently.
  virtual bool next(SourceTick& out) = 0;
};

// CSV ticks, one per line, with this exact header (docs/features.md):
//   ts_ns,instrument,type,bid,ask,bid_size,ask_size,price,size,side
// type Q (quote: bid, ask, bid_size, ask_size) or T (trade: price, size, side in B/S/U or empty);
// the other kind's columns are empty. Prices are decimals with at most 8 fractional digits
// (converted exactly to md fixed point); "nan"/"inf" are accepted as flawed values.
class CsvTickSource final : public TickSource {
 public:
  // Parses from text held in memory (kept by the source). `name` is used in messages.
  CsvTickSource(std::string text, std::string name);
  static std::unique_ptr<CsvTickSource> open(const std::string& path);
  bool next(SourceTick& out) override;

 private:
  std::string text_, name_;
  std::size_t pos_ = 0;
  std::int64_t line_ = 0;
  bool header_done_ = false;
};

// Parses one decimal price to md fixed point. Returns false for nan/inf (sets non_finite);
// throws tickinfer::Error (with `where`) for malformed text, > 8 fractional digits or overflow.
bool parse_fixed_price(std::string_view text, std::int64_t& out, bool& non_finite, const std::string& where);

}  // namespace tickinfer::features
