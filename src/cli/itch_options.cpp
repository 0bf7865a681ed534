#include "cli/itch_options.hpp"

#include <arpa/inet.h>

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

std::vector<std::string> split_symbol_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string s; std::getline(ss, s, ',');) {
    if (s.empty()) continue;
    if (s.size() > 8) throw UsageError("--symbols: '" + s + "' is longer than ITCH's 8 characters");
    out.push_back(s);
  }
  return out;
}

namespace {
std::uint32_t parse_ipv4(const ArgParser& args, const std::string& name) {
  if (!args.given(name)) return 0;
  in_addr a{};
  if (inet_pton(AF_INET, args.value(name).c_str(), &a) != 1) {
    throw UsageError("--" + name + ": '" + args.value(name) + "' is not an IPv4 address");
  }
  return ntohl(a.s_addr);
}
}  // namespace

void declare_capture_options(ArgParser& p) {
  p.option("group", "ADDR", "captures: the feed's destination address (default: any)");
  p.option("port", "PORT", "captures: the feed's destination UDP port (default: any)");
  p.option("line-source", "ADDR", "captures: keep only datagrams from this source address");
  p.option("session", "NAME", "captures: the MoldUDP64 session to follow (default: the first)");
  p.flag("join", "captures: start at the first sequence seen (a capture that starts mid-day)");
}

itch::SourceOptions capture_options(const ArgParser& args) {
  itch::SourceOptions opts;
  opts.filter.dst_addr = parse_ipv4(args, "group");
  opts.filter.src_addr = parse_ipv4(args, "line-source");
  if (args.given("port")) opts.filter.dst_port = static_cast<std::uint16_t>(args.integer("port", 1, 65535));
  opts.session = args.value("session");
  opts.join_at_first_seen = args.flag_set("join");
  return opts;
}

std::optional<itch::Date> trading_date(const ArgParser& args, const std::string& source) {
  if (!args.given("date")) return itch::date_from_file_name(source);
  const std::optional<itch::Date> d = itch::parse_iso_date(args.value("date"));
  if (!d) throw UsageError("--date: '" + args.value("date") + "' is not a date YYYY-MM-DD");
  return d;
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
