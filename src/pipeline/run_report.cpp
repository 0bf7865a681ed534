// Pipeline::report_json: the run's statistics as one JSON document (the input of
// `tickinfer report`). Reporting side only: allocates freely.
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "pipeline/pipeline.hpp"

namespace tickinfer::pipeline {
namespace {

using nlohmann::json;

// Percentiles for the log-scale percentile plot: 0, 90, 99, 99.9 ... with 10 points per decade of
// 1/(1-p), up to 99.999, then 100.
std::vector<double> curve_percentiles() {
  std::vector<double> p;
  for (int i = 0; i <= 50; ++i) p.push_back(100.0 * (1.0 - std::pow(10.0, -i / 10.0)));
  p.push_back(100.0);
  return p;
}

json histogram_json(const stats::LatencyHistogram& h) {
  json j;
  j["count"] = h.count();
  j["min_ns"] = h.min();
  j["max_ns"] = h.max();
  j["mean_ns"] = h.mean();
  j["p50_ns"] = h.value_at_percentile(50);
  j["p90_ns"] = h.value_at_percentile(90);
  j["p95_ns"] = h.value_at_percentile(95);
  j["p99_ns"] = h.value_at_percentile(99);
  j["p999_ns"] = h.value_at_percentile(99.9);
  json curve = json::array();
  if (h.count() > 0)
    for (double p : curve_percentiles()) curve.push_back({p, h.value_at_percentile(p)});
  j["curve"] = curve;
  return j;
}

json feed_json(const feed::FeedStats& s) {
  json j;
  j["datagrams"] = s.datagrams;
  j["malformed"] = s.malformed;
  json by_reason = json::object();
  for (int i = 1; i < feed::kParseStatusCount; ++i)
    by_reason[feed::key_of(static_cast<feed::ParseStatus>(i))] = s.malformed_by_status[i];
  j["malformed_by_reason"] = by_reason;
  j["other_session_packets"] = s.sequencer.wrong_session_packets;
  j["sessions"] = s.sequencer.sessions;
  j["candidate_sessions_dropped"] = s.sequencer.candidates_dropped;
  j["far_future_dropped"] = s.sequencer.far_future;
  j["undecodable"] = s.undecodable;
  j["delivered"] = s.sequencer.delivered;
  j["duplicates_dropped"] = s.sequencer.duplicates;
  j["stale_dropped"] = s.sequencer.stale;
  j["gap_triggers"] = s.sequencer.gap_triggers_time + s.sequencer.gap_triggers_count + s.sequencer.gap_triggers_overrun;
  j["gap_ranges_requested"] = s.sequencer.gap_ranges_requested;
  j["gap_messages_requested"] = s.sequencer.gap_messages_requested;
  j["recovered_messages"] = s.lines[2].messages;
  j["lost"] = s.sequencer.lost;
  j["lost_ranges"] = s.sequencer.lost_ranges;
  json ranges = json::array();  // the first feed::kLostRangesKept, then only counted
  for (std::uint64_t i = 0; i < s.lost_ranges_kept; ++i) {
    const auto& r = s.lost_ranges_first[i];
    ranges.push_back({{"first", r.first}, {"count", r.count}, {"reason", feed::to_string(r.reason)}});
  }
  j["lost_ranges_first"] = ranges;
  j["max_buffered"] = s.sequencer.max_buffered;
  j["recovery_requests_sent"] = s.recovery.requests_sent;
  j["recovery_completed"] = s.recovery.completed;
  j["recovery_failed"] = s.recovery.failed;
  j["kernel_drops"] = {s.kernel_drops[0], s.kernel_drops[1], s.kernel_drops[2]};
  j["ring_full_spins"] = s.ring_full_spins;
  json lines = json::array();
  const char* names[3] = {"A", "B", "recovery"};
  for (int i = 0; i < 3; ++i) {
    const auto& l = s.lines[i];
    lines.push_back({{"line", names[i]},
                     {"packets", l.packets},
                     {"messages", l.messages},
                     {"lost_messages", l.lost_messages},
                     {"duplicate_packets", l.duplicate_packets},
                     {"reordered_packets", l.reordered_packets},
                     {"too_late_packets", l.too_late_packets},
                     {"control_packets", l.control_packets},
                     {"other_session_packets", l.other_session_packets},
                     {"far_future_packets", l.far_future_packets},
                     {"malformed_packets", l.malformed_packets},
                     {"led", l.led},
                     {"lead_by_read_order", l.lead_by_read_order}});
  }
  j["lines"] = lines;
  return j;
}

}  // namespace

std::string Pipeline::report_json(const std::string& extra) const {
  json j;
  j["format"] = "tickinfer-run-1";
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  j["host"] = host;
  j["config"] = {{"source", cfg_.source},
                 {"threading", cfg_.threading == ThreadingMode::Inline ? "inline" : "rings"},
                 {"agents", cfg_.agents},
                 {"feed_idle", cfg_.feed_idle},
                 {"compute_idle", cfg_.compute_idle},
                 {"feed_cpu", cfg_.feed_cpu},
                 {"compute_cpu", cfg_.compute_cpu},
                 {"feature_spec", cfg_.feature_spec},
                 {"decision_log", cfg_.log_path},
                 {"flush", to_string(cfg_.flush)}};
  const RunTotals t = totals();
  j["totals"] = {{"seconds", t.seconds},
                 {"events", t.events},
                 {"ticks_per_second", t.seconds > 0 ? static_cast<double>(t.events) / t.seconds : 0.0},
                 {"signals", t.signals},
                 {"udp_send_failures", t.udp_send_failures},
                 {"tx_timestamps", t.tx_stamps_on},
                 {"tx_stamps_matched", t.tx_stamps_matched},
                 {"tx_stamps_missing", t.tx_stamps_missing},
                 {"tx_stamps_stray", t.tx_stamps_stray},
                 {"shm_on", t.shm_on},
                 {"shm_published", t.shm_published},
                 {"features_shm_on", t.features_shm_on},
                 {"features_published", t.features_published},
                 {"features_ring_on", t.features_ring_on},
                 {"features_ring_published", t.features_ring_published},
                 {"features_udp_on", t.features_udp_on},
                 {"features_udp_records", t.features_udp_records},
                 {"features_udp_datagrams", t.features_udp_datagrams},
                 {"features_udp_send_failures", t.features_udp_send_failures},
                 {"shard_on", t.shard_on},
                 {"shard_instruments", t.shard_instruments},
                 {"universe_instruments", t.universe_instruments},
                 {"other_shard_events", t.other_shard_events},
                 {"feature_columns", t.feature_columns},
                 {"feature_pipeline_columns", t.feature_pipeline_columns},
                 {"feature_requested_columns", t.feature_requested_columns},
                 {"feature_views", t.feature_views},
                 {"feature_view_builds", t.feature_view_builds},
                 {"feature_view_reuses", t.feature_view_reuses},
                 {"feature_view_saved_ns", t.feature_view_saved_ns},
                 {"decision_log_on", t.decision_log_on},
                 {"decision_log_records", t.decision_log_records},
                 {"decision_log_bytes", t.decision_log_bytes},
                 {"decision_log_flushes", t.decision_log_flushes},
                 {"decision_log_write_errors", t.decision_log_write_errors},
                 {"decision_log_last_error", t.decision_log_last_errno ? std::strerror(t.decision_log_last_errno) : ""},
                 {"decision_log_dropped", t.decision_log_dropped},
                 {"decision_log_writer_waits", t.decision_log_writer_waits},
                 {"feed_loss_reports", t.feed_loss_reports},
                 {"feed_lost_messages", t.feed_lost_messages},
                 {"allocations_at_ready", t.allocations_at_ready},
                 {"allocations_at_end", t.allocations_at_end},
                 {"allocations_in_steady_state", t.allocations_at_end - t.allocations_at_ready},
                 {"end_of_session", t.end_of_session},
                 {"degraded", t.degraded},
                 {"degraded_reason", t.degraded_reason},
                 {"wall_clock_exchange", t.wall_clock_exchange}};
  json stages = json::array();
  const StageStats& s = stage_stats();
  for (int i = 0; i < kStageCount; ++i) {
    json h = histogram_json(s.stage[i]);
    h["stage"] = stage_name(i);
    h["compute"] = stage_is_compute(i);
    stages.push_back(h);
  }
  j["stages"] = stages;
  json iv = json::array();
  for (std::size_t i = 0; i < intervals_published(); ++i) {
    const IntervalSample& x = intervals()[i];
    iv.push_back({{"t_s", x.t_s},
                  {"ticks", x.ticks},
                  {"signals", x.signals},
                  {"rx_p50_ns", x.rx_p50_ns},
                  {"rx_p99_ns", x.rx_p99_ns},
                  {"rx_max_ns", x.rx_max_ns},
                  {"e2e_p50_ns", x.e2e_p50_ns},
                  {"e2e_p99_ns", x.e2e_p99_ns},
                  {"e2e_max_ns", x.e2e_max_ns},
                  {"e2e_tx_p99_ns", x.e2e_tx_p99_ns},
                  {"allocations", x.allocations},
                  {"feed_lost", x.feed_lost},
                  {"decision_log_write_errors", x.log_write_errors}});
  }
  j["intervals"] = iv;
  j["status_interval_s"] = static_cast<double>(cfg_.status_interval_ns) / 1e9;
  json models = json::array();
  const std::vector<ModelRunStats> ms = model_stats();
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const ModelRunStats& m = ms[i];
    auto summary = [](const stats::LatencyHistogram& h) {
      return json{{"count", h.count()}, {"p50_ns", h.value_at_percentile(50)}, {"p99_ns", h.value_at_percentile(99)},
                  {"p999_ns", h.value_at_percentile(99.9)}, {"max_ns", h.max()}};
    };
    json lat = json::object();
    if (i < s.model_rx.size()) {
      lat["rx_to_signal"] = summary(s.model_rx[i]);
      lat["end_to_end"] = summary(s.model_e2e[i]);
    }
    models.push_back({{"name", m.name},
                      {"latency", lat},
                      {"version", m.version},
                      {"runs", m.runs},
                      {"row_calls", m.row_calls},
                      {"long", m.long_signals},
                      {"short", m.short_signals},
                      {"flat", m.flat_signals},
                      {"score_min", m.score_min},
                      {"score_max", m.score_max},
                      {"score_mean", m.runs ? m.score_sum / static_cast<double>(m.runs) : 0.0}});
  }
  j["models"] = models;
  json agents = json::array();
  for (const auto& a : agent_stats())
    agents.push_back({{"agent", a.index},
                      {"cpu", a.cpu},
                      {"instruments", a.instruments},
                      {"events", a.events},
                      {"signals", a.signals},
                      {"queue_depth_max", a.queue_depth_max},
                      {"rx_to_signal", {{"p50_ns", a.rx_p50_ns}, {"p99_ns", a.rx_p99_ns}, {"p999_ns", a.rx_p999_ns}, {"max_ns", a.rx_max_ns}}}});
  j["agents"] = agents;
  json warm = json::array();
  for (const auto& w : warmup_results())
    warm.push_back({{"model", w.model}, {"iterations", w.iterations}, {"stable", w.stable}, {"p50_ns", w.p50_ns}, {"p99_ns", w.p99_ns}});
  j["warmup"] = warm;
  j["feed"] = feed_json(feed_stats());
  json books = json::array();
  for (const BookSummary& b : book_summaries()) {
    const book::Integrity& t = b.integrity;
    books.push_back({{"symbol", b.symbol}, {"instrument", b.instrument}, {"seen", b.seen}, {"synced", b.synced},
                     {"bid_levels", b.bid_levels}, {"ask_levels", b.ask_levels}, {"orders", b.orders},
                     {"integrity", {{"unknown_ref", t.unknown_ref}, {"duplicate_ref", t.duplicate_ref},
                                    {"overfill", t.overfill}, {"bad_side", t.bad_side}, {"zero_shares", t.zero_shares},
                                    {"locate_mismatch", t.locate_mismatch}, {"crossed", t.crossed},
                                    {"locked", t.locked}, {"capacity_rejects", t.capacity_rejects},
                                    {"while_unsynced", t.while_unsynced}}}});
  }
  j["books"] = books;  // [feed] protocol = "itch50": each configured symbol's book at the end
  if (!extra.empty()) j["bench"] = json::parse(extra);
  return j.dump(1);
}

}  // namespace tickinfer::pipeline
