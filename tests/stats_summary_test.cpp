// LatencySummary: figures taken from a histogram, and the text/JSON renderings.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "stats/latency_summary.hpp"

namespace tickinfer::stats {
namespace {

TEST(LatencySummary, TakesPercentilesFromTheHistogram) {
  LatencyHistogram h;
  for (int64_t v = 1; v <= 1000; ++v) h.record(v * 10);
  const auto s = LatencySummary::from(h);
  EXPECT_NEAR(s.p50_ns, 5000, 5000 / 128.0);
  EXPECT_NEAR(s.p90_ns, 9000, 9000 / 128.0);
  EXPECT_NEAR(s.p99_ns, 9900, 9900 / 128.0);
  EXPECT_NEAR(s.p999_ns, 9990, 9990 / 128.0);
  EXPECT_EQ(s.min_ns, 10);
  EXPECT_EQ(s.max_ns, 10000);
  EXPECT_DOUBLE_EQ(s.mean_ns, 5005.0);
  EXPECT_EQ(s.runs, 1000);
  EXPECT_LE(s.p50_ns, s.p90_ns);
  EXPECT_LE(s.p90_ns, s.p99_ns);
  EXPECT_LE(s.p99_ns, s.p999_ns);
  EXPECT_LE(s.p999_ns, s.max_ns);
}

TEST(LatencySummary, JsonHasEveryKeyWithTheRightValue) {
  LatencySummary s;
  s.p50_ns = 101;
  s.p90_ns = 202;
  s.p99_ns = 303;
  s.p999_ns = 404;
  s.min_ns = 50;
  s.max_ns = 505;
  s.mean_ns = 123.45;
  s.runs = 9876543210;
  const auto j = nlohmann::json::parse(s.to_json());
  EXPECT_EQ(j.size(), 8u);
  EXPECT_EQ(j.at("p50_ns"), 101);
  EXPECT_EQ(j.at("p90_ns"), 202);
  EXPECT_EQ(j.at("p99_ns"), 303);
  EXPECT_EQ(j.at("p999_ns"), 404);
  EXPECT_EQ(j.at("min_ns"), 50);
  EXPECT_EQ(j.at("max_ns"), 505);
  EXPECT_NEAR(j.at("mean_ns").get<double>(), 123.45, 0.051);
  EXPECT_EQ(j.at("runs").get<int64_t>(), 9876543210);
}

TEST(LatencySummary, TableRowLinesUpWithTheHeader) {
  LatencySummary s;
  s.p50_ns = 150;
  s.max_ns = 12345678;
  s.runs = 42;
  const std::string header = LatencySummary::table_header();
  const std::string row = s.table_row();
  EXPECT_EQ(header.size(), row.size());
  EXPECT_NE(header.find("p99.9"), std::string::npos);
  EXPECT_NE(row.find("12345678"), std::string::npos);
  // Each column ends at the same offset in both lines: "p50" and "150" end together.
  EXPECT_EQ(header.find("p50") + 3, row.find("150") + 3);
}

}  // namespace
}  // namespace tickinfer::stats
