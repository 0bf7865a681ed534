#include "feed/feed_report.hpp"

#include <cstdio>

#include "tickinfer/market_data.hpp"

namespace tickinfer::feed {

std::string format_price(std::int64_t fixed) {
  // Through the unsigned magnitude, so INT64_MIN has one too.
  const bool negative = fixed < 0;
  const std::uint64_t mag = negative ? std::uint64_t{0} - static_cast<std::uint64_t>(fixed)
                                     : static_cast<std::uint64_t>(fixed);
  const auto scale = static_cast<std::uint64_t>(md::kPriceScale);
  char text[40];
  std::snprintf(text, sizeof text, "%s%llu.%08llu", negative ? "-" : "",
                static_cast<unsigned long long>(mag / scale), static_cast<unsigned long long>(mag % scale));
  return text;
}

std::string report_malformed(std::uint64_t total, const std::uint64_t (&by_status)[kParseStatusCount]) {
  std::string out = "malformed " + std::to_string(total);
  const char* sep = " (";
  for (int i = 1; i < kParseStatusCount; ++i) {
    if (by_status[i] == 0) continue;
    out += sep;
    out += key_of(static_cast<ParseStatus>(i));
    out += ' ';
    out += std::to_string(by_status[i]);
    sep = ", ";
  }
  if (*sep == ',') out += ')';
  return out;
}

std::string report_malformed(const FeedStats& s) { return report_malformed(s.malformed, s.malformed_by_status); }

std::string report_lost_ranges(const FeedStats& s, int limit) {
  const std::uint64_t total = s.sequencer.lost_ranges;
  std::string out = "lost ranges " + std::to_string(total);
  std::uint64_t shown = s.lost_ranges_kept;
  if (limit >= 0 && shown > static_cast<std::uint64_t>(limit)) shown = static_cast<std::uint64_t>(limit);
  for (std::uint64_t i = 0; i < shown; ++i) {
    const LostRange& r = s.lost_ranges_first[i];
    out += i == 0 ? ": " : ", ";
    out += std::to_string(r.first) + ".." + std::to_string(r.first + r.count - 1) + " (" +
           std::to_string(r.count) + " " + to_string(r.reason) + ")";
  }
  if (total > shown) out += (shown ? ", and " : ": ") + std::to_string(total - shown) + " more";
  return out;
}

std::string report_line(const LineStats& l) {
  char text[400];
  std::snprintf(text, sizeof text,
                "%llu packets, lost %llu messages, %llu duplicate packets, %llu reordered, %llu too late, "
                "%llu other session, %llu far future, %llu malformed, led %llu (%llu by read order)",
                (unsigned long long)l.packets, (unsigned long long)l.lost_messages,
                (unsigned long long)l.duplicate_packets, (unsigned long long)l.reordered_packets,
                (unsigned long long)l.too_late_packets, (unsigned long long)l.other_session_packets,
                (unsigned long long)l.far_future_packets, (unsigned long long)l.malformed_packets,
                (unsigned long long)l.led, (unsigned long long)l.lead_by_read_order);
  return text;
}

}  // namespace tickinfer::feed
