#pragma once
// The command-line spelling of the ITCH 5.0 feed protocol (`--symbols A,B --date YYYY-MM-DD`),
// shared by the commands that receive market data.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "book/itch_event_decoder.hpp"
#include "itch/itch_source.hpp"
#include "itch/session_date.hpp"

namespace tickinfer::cli {

// symbols: comma-separated, instrument i + 1 is the i-th ("" = every symbol, instrument = locate);
// date: the trading date, required. Throws UsageError naming the option.
std::shared_ptr<book::ItchEventDecoder> make_itch_decoder(const std::string& symbols, const std::string& date);

// "A,B,C" in order, empty entries skipped. Throws UsageError for a symbol over 8 characters.
std::vector<std::string> split_symbol_list(const std::string& text);

class ArgParser;
// Reading a capture: --group, --port, --line-source, --session, --join.
void declare_capture_options(ArgParser& p);
itch::SourceOptions capture_options(const ArgParser& args);
// --date, or the date in a Nasdaq day-file name; nullopt when neither gives one. Throws
// UsageError for a --date that is not YYYY-MM-DD.
std::optional<itch::Date> trading_date(const ArgParser& args, const std::string& source);

// The decoder's counters and the books' integrity, one line each.
void print_itch_summary(const book::ItchEventDecoder& decoder);

}  // namespace tickinfer::cli
