#pragma once
// The command-line spelling of the ITCH 5.0 feed protocol (`--symbols A,B --date YYYY-MM-DD`),
// shared by the commands that receive market data.
#include <memory>
#include <string>

#include "book/itch_event_decoder.hpp"

namespace tickinfer::cli {

// symbols: comma-separated, instrument i + 1 is the i-th ("" = every symbol, instrument = locate);
// date: the trading date, required. Throws UsageError naming the option.
std::shared_ptr<book::ItchEventDecoder> make_itch_decoder(const std::string& symbols, const std::string& date);

// The decoder's counters and the books' integrity, one line each.
void print_itch_summary(const book::ItchEventDecoder& decoder);

}  // namespace tickinfer::cli
