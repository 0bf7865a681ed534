#pragma once
// Text renderings of the feed's statistics for the command line and the pipeline's reports:
// malformed datagrams by reason, the lost ranges (first N, then a count), one line's counters,
// and fixed-point prices as exact decimals. Formatting allocates: reporting side only.
#include <cstdint>
#include <string>

#include "tickinfer/feed.hpp"

namespace tickinfer::feed {

// kPriceScale fixed point as an exact decimal with all 8 places ("-12.34000000"), no double.
std::string format_price(std::int64_t fixed);
// "malformed 3 (too_short 1, trailing_bytes 2)"; "malformed 0" when there were none.
std::string report_malformed(const FeedStats& s);
std::string report_malformed(std::uint64_t total, const std::uint64_t (&by_status)[kParseStatusCount]);
// The session listened to is over: its End of Session was reached with every message delivered
// or given up and no re-request outstanding, or the next session has started (only after one).
inline bool session_over(const FeedStats& s) noexcept {
  return (s.end_of_session_next != 0 && s.next_expected >= s.end_of_session_next && s.recovery_outstanding == 0) ||
         s.sequencer.sessions > 1;
}
// "lost ranges 3: 4..4 (1 skipped), 9..12 (4 unrecoverable), 20..20 (1 skipped)", at most
// `limit` listed (and no more than FeedStats keeps), then "and N more"; "lost ranges 0" if none.
std::string report_lost_ranges(const FeedStats& s, int limit = kLostRangesKept);
// One line's counters: "packets .., lost .. messages, .. duplicate, .. reordered, .. too late,
// .. other session, .. far future, .. malformed, led .. (.. by read order)".
std::string report_line(const LineStats& l);

}  // namespace tickinfer::feed
