#include "pipeline/metrics_text.hpp"

#include <cstdio>

namespace tickinfer::pipeline {

namespace {
void metric(std::string& out, const char* name, const char* type, const char* help, double value) {
  char line[512];
  std::snprintf(line, sizeof line, "# HELP %s %s\n# TYPE %s %s\n%s %.9g\n", name, help, name, type, name, value);
  out += line;
}
double seconds(std::int64_t ns) { return static_cast<double>(ns) / 1e9; }

// One counter family with a `reason` label, one sample per feed::ParseStatus but Ok.
void malformed_metric(std::string& out, const IntervalSample& s) {
  const char* name = "tickinfer_feed_malformed_datagrams_total";
  char line[256];
  std::snprintf(line, sizeof line,
                "# HELP %s Datagrams the feed rejected as malformed since the start, by reason.\n# TYPE %s counter\n",
                name, name);
  out += line;
  for (int i = 1; i < feed::kParseStatusCount; ++i) {
    std::snprintf(line, sizeof line, "%s{reason=\"%s\"} %llu\n", name, feed::key_of(static_cast<feed::ParseStatus>(i)),
                  static_cast<unsigned long long>(s.feed_malformed[i]));
    out += line;
  }
}
// One gauge or counter family labelled by agent, a sample per agent.
template <typename Get>
void agent_metric(std::string& out, const char* name, const char* type, const char* help, const IntervalSample* a,
                  std::size_t n, Get get) {
  char line[512];
  std::snprintf(line, sizeof line, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
  out += line;
  for (std::size_t k = 0; k < n; ++k) {
    std::snprintf(line, sizeof line, "%s{agent=\"%zu\"} %.9g\n", name, k, get(a[k]));
    out += line;
  }
}
}  // namespace

void format_metrics(std::string& out, bool ready, const IntervalSample* s, std::uint64_t allocations_since_ready,
                    const IntervalSample* agents, std::size_t agent_count) {
  out.clear();
  metric(out, "tickinfer_ready", "gauge", "1 once every model is warm and the feed is consumed.", ready ? 1 : 0);
  if (!s) return;
  metric(out, "tickinfer_interval_ticks", "gauge", "Feed events processed in the last status interval.",
         static_cast<double>(s->ticks));
  metric(out, "tickinfer_interval_signals", "gauge", "Signals sent in the last status interval.",
         static_cast<double>(s->signals));
  metric(out, "tickinfer_rx_to_signal_p50_seconds", "gauge",
         "Kernel receive to signal sent (send returned), median over the last interval.", seconds(s->rx_p50_ns));
  metric(out, "tickinfer_rx_to_signal_p99_seconds", "gauge",
         "Kernel receive to signal sent (send returned), 99th percentile over the last interval.", seconds(s->rx_p99_ns));
  metric(out, "tickinfer_end_to_end_p99_seconds", "gauge",
         "Exchange timestamp to signal sent (send returned), 99th percentile over the last interval; 0 without a "
         "wall-clock exchange.",
         seconds(s->e2e_p99_ns));
  metric(out, "tickinfer_end_to_end_tx_p99_seconds", "gauge",
         "Exchange timestamp to the kernel transmit stamp of the signal datagram, 99th percentile of the stamps read "
         "in the last interval; 0 when none.",
         seconds(s->e2e_tx_p99_ns));
  metric(out, "tickinfer_feed_lost_messages_total", "counter", "Messages the feed reported lost since the start.",
         static_cast<double>(s->feed_lost));
  malformed_metric(out, *s);
  metric(out, "tickinfer_feed_other_session_packets_total", "counter",
         "Packets naming another session than the one adopted, dropped, since the start.",
         static_cast<double>(s->feed_other_session));
  metric(out, "tickinfer_feed_far_future_packets_total", "counter",
         "Packets whose sequence lies too far ahead to be real, dropped, since the start.",
         static_cast<double>(s->feed_far_future));
  metric(out, "tickinfer_decision_log_write_errors_total", "counter",
         "Decision log writes that failed since the start (their records are not in the file).",
         static_cast<double>(s->log_write_errors));
  metric(out, "tickinfer_features_published_total", "counter",
         "Feature vectors published to the shared-memory feature store since the start.",
         static_cast<double>(s->features_published));
  metric(out, "tickinfer_feature_ring_records_total", "counter",
         "Feature vectors written to the shared-memory feature ring since the start.",
         static_cast<double>(s->feature_ring_records));
  metric(out, "tickinfer_feature_udp_records_total", "counter",
         "Feature vectors numbered for UDP datagrams since the start.", static_cast<double>(s->feature_udp_records));
  metric(out, "tickinfer_feature_view_gathers_total", "counter",
         "Times a model view of the feature plan was gathered for a tick since the start.",
         static_cast<double>(s->feature_view_builds));
  metric(out, "tickinfer_feature_view_reuses_total", "counter",
         "Times a model reused a view another model gathered for the same tick since the start.",
         static_cast<double>(s->feature_view_reuses));
  metric(out, "tickinfer_shard_other_events_total", "counter",
         "Feed events of instruments another shard computes, skipped, since the start.",
         static_cast<double>(s->other_shard_events));
  if (agents && agent_count > 0) {
    agent_metric(out, "tickinfer_agent_interval_ticks", "gauge", "Feed events a compute agent processed in the last status interval.",
                 agents, agent_count, [](const IntervalSample& a) { return static_cast<double>(a.ticks); });
    agent_metric(out, "tickinfer_agent_interval_signals", "gauge", "Signals a compute agent sent in the last status interval.",
                 agents, agent_count, [](const IntervalSample& a) { return static_cast<double>(a.signals); });
    agent_metric(out, "tickinfer_agent_rx_to_signal_p99_seconds", "gauge",
                 "Kernel receive to signal sent of a compute agent's signals, 99th percentile over the last interval.",
                 agents, agent_count, [](const IntervalSample& a) { return seconds(a.rx_p99_ns); });
    agent_metric(out, "tickinfer_agent_queue_depth_max", "gauge",
                 "Most feed events waiting in a compute agent's ring at the start of one of its cycles, last interval.",
                 agents, agent_count, [](const IntervalSample& a) { return static_cast<double>(a.queue_depth_max); });
  }
  metric(out, "tickinfer_allocations_since_ready", "gauge",
         "Heap allocations in the process since ready (0 in the steady state).",
         static_cast<double>(allocations_since_ready));
}

}  // namespace tickinfer::pipeline
