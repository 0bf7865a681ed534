// The `[run] metrics` endpoint's text: every metric with HELP and TYPE, in base units, and
// `promtool check metrics` (the Prometheus project's own linter) accepts it without a warning.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "pipeline/metrics_text.hpp"

namespace tickinfer::pipeline {
namespace {

IntervalSample sample() {
  IntervalSample s;
  s.t_s = 3.0;
  s.ticks = 50000;
  s.signals = 49000;
  s.rx_p50_ns = 10'250;
  s.rx_p99_ns = 20'500;
  s.e2e_p99_ns = 23'000;
  s.e2e_tx_p99_ns = 21'000;
  s.feed_lost = 7;
  s.features_published = 48000;
  s.feature_ring_records = 48000;
  s.feature_udp_records = 47000;
  s.feature_view_builds = 96000;
  s.feature_view_reuses = 48000;
  s.other_shard_events = 51000;
  return s;
}

// promtool's exit status and output for `text`; -1 when promtool is not installed.
int promtool(const std::string& text, std::string& report) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) return -1;
  char dir[] = "/tmp/tickinfer_metrics_XXXXXX";
  if (!mkdtemp(dir)) return -2;
  const std::string in = std::string(dir) + "/metrics.txt", out = std::string(dir) + "/out.txt";
  std::ofstream(in) << text;
  const int rc = std::system(("promtool check metrics < " + in + " > " + out + " 2>&1").c_str());
  std::ifstream f(out);
  report.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  std::remove(in.c_str());
  std::remove(out.c_str());
  rmdir(dir);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -3;
}

TEST(PipelineMetricsText, BeforeTheFirstIntervalOnlyReadiness) {
  const std::string t = format_metrics(false, nullptr, 0);
  EXPECT_NE(t.find("# HELP tickinfer_ready "), std::string::npos) << t;
  EXPECT_NE(t.find("# TYPE tickinfer_ready gauge\n"), std::string::npos) << t;
  EXPECT_NE(t.find("\ntickinfer_ready 0\n"), std::string::npos) << t;
  EXPECT_EQ(t.find("tickinfer_interval_ticks"), std::string::npos) << t;
  EXPECT_NE(format_metrics(true, nullptr, 0).find("\ntickinfer_ready 1\n"), std::string::npos);
}

TEST(PipelineMetricsText, EveryIntervalValueInBaseUnits) {
  const IntervalSample s = sample();
  const std::string t = format_metrics(true, &s, 0);
  for (const char* line : {"tickinfer_interval_ticks 50000\n", "tickinfer_interval_signals 49000\n",
                           "tickinfer_rx_to_signal_p50_seconds 1.025e-05\n", "tickinfer_rx_to_signal_p99_seconds 2.05e-05\n",
                           "tickinfer_end_to_end_p99_seconds 2.3e-05\n", "tickinfer_end_to_end_tx_p99_seconds 2.1e-05\n",
                           "tickinfer_feed_lost_messages_total 7\n", "tickinfer_allocations_since_ready 0\n",
                           "# TYPE tickinfer_feed_lost_messages_total counter\n",
                           "tickinfer_features_published_total 48000\n", "tickinfer_feature_ring_records_total 48000\n",
                           "tickinfer_feature_udp_records_total 47000\n", "tickinfer_feature_view_gathers_total 96000\n",
                           "tickinfer_feature_view_reuses_total 48000\n", "tickinfer_shard_other_events_total 51000\n",
                           "# TYPE tickinfer_feature_view_reuses_total counter\n"})
    EXPECT_NE(t.find(std::string("\n") + line), std::string::npos) << line << "\n" << t;
  // The supervisor formats into a buffer reserved once: the whole text must fit it, or a scrape
  // in the steady state would allocate.
  EXPECT_LT(t.size(), kMetricsTextBytes) << t.size();
}

TEST(PipelineMetricsText, PromtoolAcceptsItWithoutWarnings) {
  const IntervalSample s = sample();
  for (const std::string& text : {format_metrics(false, nullptr, 0), format_metrics(true, &s, 3)}) {
    std::string report;
    const int rc = promtool(text, report);
    if (rc == -1) {
      if (std::getenv("TICKINFER_REQUIRE_PROMTOOL")) FAIL() << "promtool not installed";
      GTEST_SKIP() << "promtool not installed (make serving-test installs it and runs this again)";
    }
    EXPECT_EQ(rc, 0) << report << "\n" << text;  // 3 would be lint warnings: none allowed here
  }
}

TEST(PipelineMetricsText, FeedRejectionsByReasonAsLabelledCountersThatPromtoolAccepts) {
  IntervalSample s = sample();
  s.feed_malformed[static_cast<int>(feed::ParseStatus::TooShort)] = 2;
  s.feed_malformed[static_cast<int>(feed::ParseStatus::TrailingBytes)] = 5;
  s.feed_other_session = 3;
  s.feed_far_future = 1;
  const std::string t = format_metrics(true, &s, 0);
  for (const char* line : {"# TYPE tickinfer_feed_malformed_datagrams_total counter\n",
                           "tickinfer_feed_malformed_datagrams_total{reason=\"too_short\"} 2\n",
                           "tickinfer_feed_malformed_datagrams_total{reason=\"trailing_bytes\"} 5\n",
                           "tickinfer_feed_malformed_datagrams_total{reason=\"block_truncated\"} 0\n",
                           "tickinfer_feed_other_session_packets_total 3\n", "tickinfer_feed_far_future_packets_total 1\n"})
    EXPECT_NE(t.find(std::string("\n") + line), std::string::npos) << line << "\n" << t;
  EXPECT_LT(t.size(), kMetricsTextBytes);
  std::string report;
  const int rc = promtool(t, report);
  if (rc == -1) GTEST_SKIP() << "promtool not installed";
  EXPECT_EQ(rc, 0) << report << "\n" << t;
}

// [threading] agents: each agent's interval as labelled gauges; 64 agents (the most) still fit
// the reserved capacity (no allocation in the supervisor's steady state).
TEST(PipelineMetricsText, PerAgentGaugesLabelledAndWithinCapacity) {
  const IntervalSample s = sample();
  std::vector<IntervalSample> agents(64, s);
  agents[1].ticks = 777;
  agents[1].queue_depth_max = 42;
  agents[1].rx_p99_ns = 2'500'000;
  const std::string t = format_metrics(true, &s, 0, agents.data(), 2);
  for (const char* line : {"# TYPE tickinfer_agent_interval_ticks gauge\n", "tickinfer_agent_interval_ticks{agent=\"1\"} 777\n",
                           "tickinfer_agent_queue_depth_max{agent=\"1\"} 42\n",
                           "tickinfer_agent_rx_to_signal_p99_seconds{agent=\"1\"} 0.0025\n"})
    EXPECT_NE(t.find(std::string("\n") + line), std::string::npos) << line << "\n" << t;
  EXPECT_LT(format_metrics(true, &s, 0, agents.data(), agents.size()).size(), kMetricsTextBytes);
  std::string report;
  const int rc = promtool(t, report);
  if (rc == -1) GTEST_SKIP() << "promtool not installed";
  EXPECT_EQ(rc, 0) << report << "\n" << t;
}

}  // namespace
}  // namespace tickinfer::pipeline
