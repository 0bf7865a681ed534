#include "cli/itch_options.hpp"

#include <cstdio>
#include <sstream>

#include "cli/arg_parser.hpp"

namespace tickinfer::cli {

std::shared_ptr<book::ItchEventDecoder> make_itch_decoder(const std::string& symbols, const std::string& date) {
  book::ItchEventConfig cfg;
  std::stringstream ss(symbols);
  for (std::string s; std::getline(ss, s, ',');) {
    if (!s.empty()) cfg.symbols.push_back(s);
  }
  if (date.empty()) throw UsageError("--date YYYY-MM-DD is required with --protocol itch50 (ITCH carries no date)");
  const std::optional<itch::Date> d = itch::parse_iso_date(date);
  if (!d) throw UsageError("--date: '" + date + "' is not a date YYYY-MM-DD");
  cfg.date = *d;
  try {
    return std::make_shared<book::ItchEventDecoder>(cfg);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

void print_itch_summary(const book::ItchEventDecoder& decoder) {
  const itch::DecodeCounters& d = decoder.decode_counters();
  const book::Integrity t = decoder.books().totals();
  std::printf("itch50: %llu messages decoded, %llu unknown type, %llu wrong length; %llu lost; %llu live orders\n",
              (unsigned long long)d.total_decoded, (unsigned long long)d.total_unknown_type,
              (unsigned long long)d.total_wrong_length, (unsigned long long)decoder.lost(),
              (unsigned long long)decoder.books().live_orders());
  std::printf("books: unknown_ref %llu, duplicate_ref %llu, overfill %llu, bad_side %llu, crossed %llu, locked %llu, "
              "capacity_rejects %llu, while_unsynced %llu\n",
              (unsigned long long)t.unknown_ref, (unsigned long long)t.duplicate_ref, (unsigned long long)t.overfill,
              (unsigned long long)t.bad_side, (unsigned long long)t.crossed, (unsigned long long)t.locked,
              (unsigned long long)t.capacity_rejects, (unsigned long long)t.while_unsynced);
}

}  // namespace tickinfer::cli
