// The feed's reports (src/feed/feed_report.*, src/stats/latency_summary.*): exact decimal
// prices, malformed datagrams by reason, lost ranges as "first N, then a count", and latency
// tables whose columns stay aligned and apart at any width.
#include <gtest/gtest.h>

#include <climits>
#include <sstream>

#include "feed/feed_report.hpp"
#include "stats/latency_summary.hpp"

namespace tickinfer::feed {
namespace {

TEST(FeedReport, PricesPrintAsExactDecimalsWithoutADouble) {
  EXPECT_EQ(format_price(0), "0.00000000");
  EXPECT_EQ(format_price(1), "0.00000001");
  EXPECT_EQ(format_price(-1), "-0.00000001");
  EXPECT_EQ(format_price(12'345'000'000), "123.45000000");
  EXPECT_EQ(format_price(INT64_MAX), "92233720368.54775807");
  EXPECT_EQ(format_price(INT64_MIN), "-92233720368.54775808");
}

TEST(FeedReport, MalformedDatagramsAreListedByReason) {
  FeedStats s;
  EXPECT_EQ(report_malformed(s), "malformed 0");
  s.malformed = 3;
  s.malformed_by_status[static_cast<int>(ParseStatus::TooShort)] = 1;
  s.malformed_by_status[static_cast<int>(ParseStatus::TrailingBytes)] = 2;
  EXPECT_EQ(report_malformed(s), "malformed 3 (too_short 1, trailing_bytes 2)");
  for (int i = 1; i < kParseStatusCount; ++i) EXPECT_STRNE(key_of(static_cast<ParseStatus>(i)), "unknown");
}

TEST(FeedReport, LostRangesListTheFirstOnesWithTheirSequencesThenACount) {
  FeedStats s;
  EXPECT_EQ(report_lost_ranges(s), "lost ranges 0");
  s.sequencer.lost_ranges = 20;
  s.lost_ranges_kept = kLostRangesKept;
  for (int i = 0; i < kLostRangesKept; ++i)
    s.lost_ranges_first[i] = LostRange{100u * (i + 1), 4, LossReason::Skipped};
  s.lost_ranges_first[1].reason = LossReason::Unrecoverable;
  EXPECT_EQ(report_lost_ranges(s, 2), "lost ranges 20: 100..103 (4 skipped), 200..203 (4 unrecoverable), and 18 more");
  EXPECT_NE(report_lost_ranges(s).find("1600..1603 (4 skipped), and 4 more"), std::string::npos);
  EXPECT_EQ(report_lost_ranges(s, 0), "lost ranges 20: 20 more");
}

TEST(FeedReport, LatencyTablesStayAlignedAndApartAtAnyWidth) {
  stats::LatencySummary small, big;
  small.p50_ns = 150;
  small.max_ns = 900;
  small.mean_ns = 200;
  small.runs = 3;
  big.p50_ns = 12'345'678'901;
  big.max_ns = 9'876'543'210'123;
  big.mean_ns = 1'234'567.5;  // 7 digits before the point: ran into max before
  big.runs = 9'876'543'210;
  const std::string row = big.table_row();
  EXPECT_NE(row.find(" 9876543210123 "), std::string::npos) << row;
  EXPECT_NE(row.find(" 1234567.5 "), std::string::npos) << row;
  const std::string t = stats::latency_table("path (ns)", {{"small", small}, {"a long label", big}});
  std::istringstream in(t);
  std::string header, l1, l2;
  std::getline(in, header);
  std::getline(in, l1);
  std::getline(in, l2);
  ASSERT_EQ(header.size(), l1.size()) << t;
  ASSERT_EQ(header.size(), l2.size()) << t;
  // Every column ends at the same offset on every line, and cells are separated by spaces.
  for (const char* title : {"p50", "max", "mean", "runs"}) {
    const std::size_t end = header.find(title) + std::string(title).size();
    EXPECT_TRUE(end == header.size() || header[end] == ' ') << title;
    EXPECT_NE(l1[end - 1], ' ') << title << "\n" << t;
    EXPECT_NE(l2[end - 1], ' ') << title << "\n" << t;
  }
  EXPECT_NE(l2.find(" 1234567.5 "), std::string::npos) << t;
  EXPECT_EQ(l1.rfind("small", 0), 0u);
}

}  // namespace
}  // namespace tickinfer::feed
