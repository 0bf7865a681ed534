// `tickinfer run CONFIG`: the tick-to-signal pipeline (src/pipeline/, docs/pipeline.md). Loads and
// checks everything first (a bad configuration, a missing model or a signature mismatch is an
// error before any socket is read), warms the models up, reports ready, runs, and prints the
// per-stage latency table, the feed statistics and a summary of the signals.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <thread>

#include "cli/commands.hpp"
#include "feed/exchange.hpp"
#include "feed/udp_socket.hpp"
#include "itch/itch_source.hpp"
#include "cli/machine_info.hpp"
#include "pipeline/alloc_counter.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/spin_budget.hpp"
#include "stats/cpu_quota.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::cli {
namespace {

std::atomic<bool> g_run_stop{false};
void on_stop_signal(int) { g_run_stop = true; }

// Where the pipeline's threads ran: the latency table means little without it.
std::string cpu_line(const pipeline::PipelineConfig& cfg) {
  const auto where = [](int cpu) { return cpu >= 0 ? "pinned to cpu " + std::to_string(cpu) : std::string("not pinned"); };
  std::string s = "cpus: " + std::to_string(usable_cpus()) + " usable (" + cpu_model_name() + "); ";
  if (cfg.threading == pipeline::ThreadingMode::Inline) return s + "the pipeline thread " + where(cfg.compute_cpu);
  return s + "feed thread " + where(cfg.feed_cpu) + ", compute thread " + where(cfg.compute_cpu);
}

}  // namespace

ArgParser run_parser() {
  ArgParser p("run", "run the tick-to-signal pipeline on a configuration (docs/pipeline.md)");
  p.positional("CONFIG", "pipeline configuration (.toml)");
  p.option("seconds", "S", "override [run] seconds (0: until End of Session)");
  p.option("report", "FILE", "override [run] report: the run statistics JSON");
  p.option("threading", "MODE", "override [threading] mode: inline or rings");
  p.option("log", "FILE", "override [decision_log] path");
  p.option("ready-file", "FILE", "override [run] ready_file");
  p.flag("quiet", "no status lines");
  p.flag("check", "load and check the configuration, models and signatures, then exit");
  p.option("agents", "N", "override [threading] agents: N compute agents (implies rings threading)");
  p.option("shard", "K/N", "compute only shard K of N of the instruments (instrument id % N == K); overrides [shard]");
  p.option("source", "FILE", "[feed] protocol = \"itch50\": replay this ITCH day file (raw or gzip) or capture into the "
           "run's own lines, over loopback, from an exchange in this process (re-requests answered); the run ends "
           "at its End of Session");
  p.option("source-rate", "MSG/S", "--source: messages per second", "100000");
  return p;
}

void print_feed_summary(const feed::FeedStats& s, std::FILE* out) {
  const auto u = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
  std::fprintf(out, "feed: %llu messages delivered from %llu datagrams; duplicates dropped %llu, stale %llu\n",
               u(s.sequencer.delivered), u(s.datagrams), u(s.sequencer.duplicates), u(s.sequencer.stale));
  std::fprintf(out, "      gaps: %llu triggers, %llu ranges (%llu messages) re-requested, %llu messages recovered, "
               "%llu lost; max reorder buffer %llu\n",
               u(s.sequencer.gap_triggers_time + s.sequencer.gap_triggers_count + s.sequencer.gap_triggers_overrun),
               u(s.sequencer.gap_ranges_requested), u(s.sequencer.gap_messages_requested), u(s.lines[2].messages),
               u(s.sequencer.lost), u(s.sequencer.max_buffered));
  for (int l = 0; l < 2; ++l)
    if (s.lines[l].packets)
      std::fprintf(out, "      line %c: %llu packets, %llu messages missed, %llu reordered, %llu duplicate, led %llu\n",
                   "AB"[l], u(s.lines[l].packets), u(s.lines[l].lost_messages), u(s.lines[l].reordered_packets),
                   u(s.lines[l].duplicate_packets), u(s.lines[l].led));
  std::fprintf(out, "      malformed %llu, undecodable %llu, kernel drops %llu/%llu\n", u(s.malformed), u(s.undecodable),
               u(s.kernel_drops[0]), u(s.kernel_drops[1]));
  const auto& q = s.sequencer;
  if (q.joined_at > 1) {  // a late joiner: what came before its first packet was re-requested
    if (q.in_sync_seq)
      std::fprintf(out, "      joined at sequence %llu: messages 1..%llu re-requested; in sync at sequence %llu, %.1f ms "
                   "after the first packet\n", u(q.joined_at), u(q.joined_at - 1), u(q.in_sync_seq),
                   static_cast<double>(q.in_sync_ns - q.first_packet_ns) / 1e6);
    else
      std::fprintf(out, "      joined at sequence %llu: messages 1..%llu re-requested; never in sync\n", u(q.joined_at),
                   u(q.joined_at - 1));
  }
}

// What the signal writers counted (shm ring, decision log); a failed log write also on stderr:
// the log then misses records, and replay cannot explain them.
void print_writer_summary(const pipeline::RunTotals& t, const pipeline::PipelineConfig& cfg, std::FILE* out) {
  const auto u = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
  if (t.shm_on) std::fprintf(out, "shm ring: %llu messages published\n", u(t.shm_published));
  if (t.shard_on)
    std::fprintf(out, "shard: %llu of the spec's %llu instruments computed here; %llu events of other shards' "
                 "instruments skipped\n", u(t.shard_instruments), u(t.universe_instruments), u(t.other_shard_events));
  std::fprintf(out, "features: %llu columns computed once per tick (%llu from the spec, %llu added by models) for %zu "
               "model(s) that declare %llu in all; %llu distinct views, gathered %llu times, reused %llu times "
               "(%.1f us of gathers saved)\n",
               u(t.feature_columns), u(t.feature_pipeline_columns), u(t.feature_columns - t.feature_pipeline_columns),
               cfg.models.size(), u(t.feature_requested_columns), u(t.feature_views), u(t.feature_view_builds),
               u(t.feature_view_reuses), t.feature_view_saved_ns / 1e3);
  if (t.features_ring_on)
    std::fprintf(out, "feature ring shm:%s: %llu records published\n", cfg.features_ring.c_str(),
                 u(t.features_ring_published));
  if (t.features_udp_on)
    std::fprintf(out, "feature vectors udp %s:%u: %llu records in %llu datagrams, %llu datagrams refused\n",
                 cfg.features_udp.host.c_str(), cfg.features_udp.port, u(t.features_udp_records),
                 u(t.features_udp_datagrams), u(t.features_udp_send_failures));
  if (t.features_shm_on)
    std::fprintf(out, "feature store shm:%s: %llu vectors published\n", cfg.features_shm.c_str(),
                 u(t.features_published));
  if (!t.decision_log_on) return;
  std::fprintf(out, "decision log: %llu records, %llu bytes in %llu flushes, %llu write errors, %llu dropped, "
               "%llu writer waits\n", u(t.decision_log_records), u(t.decision_log_bytes), u(t.decision_log_flushes),
               u(t.decision_log_write_errors), u(t.decision_log_dropped), u(t.decision_log_writer_waits));
  if (t.decision_log_write_errors > 0)
    std::fprintf(stderr, "tickinfer run: decision log '%s': %llu writes failed (last: %s); the log is incomplete\n",
                 cfg.log_path.c_str(), u(t.decision_log_write_errors), std::strerror(t.decision_log_last_errno));
}

// `--source FILE`: an exchange publishing the file's ITCH messages on the run's own lines A and B
// and answering re-requests on its recovery address: the live path end to end, from a file.
feed::ExchangeConfig source_exchange(const pipeline::PipelineConfig& cfg, const ArgParser& args) {
  if (cfg.protocol != "itch50")
    throw UsageError("--source replays NASDAQ ITCH 5.0: the configuration needs [feed] protocol = \"itch50\"");
  feed::ExchangeConfig c;
  auto records = std::make_shared<const std::vector<std::uint8_t>>(
      itch::load_day_records(args.value("source"), std::uint64_t{1} << 40));
  std::uint64_t n = 0;
  for (std::size_t at = 0; at + 2 <= records->size(); at += 2 + ((std::size_t{(*records)[at]} << 8) | (*records)[at + 1])) ++n;
  if (n == 0) throw Error("--source '" + args.value("source") + "': no messages");
  c.framed_messages = std::move(records);
  c.messages = n;
  c.rate = args.number("source-rate", 1, 1e8);
  c.line_a = feed::make_address(cfg.line_a.host, cfg.line_a.port);
  c.line_b_enabled = cfg.line_b.enabled();
  if (c.line_b_enabled) c.line_b = feed::make_address(cfg.line_b.host, cfg.line_b.port);
  if (cfg.recovery.enabled()) {
    c.rerequest_bind = cfg.recovery.host;
    c.rerequest_port = cfg.recovery.port;
  }
  // Re-requests answered and End of Session repeated until the run has ended (it stops the
  // exchange then): a run that fell behind still learns of the end, and of what it missed.
  c.linger_ns = std::int64_t{3600} * 1'000'000'000;
  c.sleep_pacing = true;      // the exchange leaves its core to the run's threads
  return c;
}

int run_run(const ArgParser& args) {
  pipeline::PipelineConfig cfg = pipeline::load_pipeline_config(args.positional_value("CONFIG"));
  if (args.given("seconds")) cfg.seconds = args.number("seconds", 0, 1e7);
  if (args.given("report")) cfg.report = args.value("report");
  if (args.given("log")) cfg.log_path = args.value("log");
  if (args.given("ready-file")) cfg.ready_file = args.value("ready-file");
  if (args.given("threading")) {
    const std::string t = args.value("threading");
    if (t == "inline") cfg.threading = pipeline::ThreadingMode::Inline;
    else if (t == "rings") cfg.threading = pipeline::ThreadingMode::Rings;
    else throw UsageError("--threading must be inline or rings");
  }
  if (args.flag_set("quiet")) cfg.quiet = true;
  if (args.given("agents")) {
    cfg.agents = static_cast<int>(args.integer("agents", 1, 64));
    if (cfg.agents > 1) cfg.threading = pipeline::ThreadingMode::Rings;
    // Fewer agents than the file pins: the extra CPUs go (the Pipeline refuses what cannot work).
    if (cfg.agent_cpus.size() > static_cast<std::size_t>(cfg.agents)) cfg.agent_cpus.resize(static_cast<std::size_t>(cfg.agents));
  }
  if (args.given("shard")) {
    const std::string v = args.value("shard");
    const auto slash = v.find('/');
    char* end = nullptr;
    const long k = slash == std::string::npos ? -1 : std::strtol(v.c_str(), &end, 10);
    const long n = slash == std::string::npos ? -1 : std::strtol(v.c_str() + slash + 1, nullptr, 10);
    if (slash == std::string::npos || end != v.c_str() + slash || n < 1 || n > 4096 || k < 0 || k >= n)
      throw UsageError("--shard expects K/N with 0 <= K < N <= 4096, got '" + v + "'");
    cfg.shard = pipeline::ShardConfig{static_cast<int>(k), static_cast<int>(n), {}};
  }
  cfg.check_only = args.flag_set("check");
  // Spinning threads need a core each: over budget they back off instead, with a warning.
  if (const std::string w = pipeline::fit_spinning_to_cpus(cfg, stats::usable_cpus()); !w.empty()) {
    std::fprintf(stderr, "tickinfer run: warning: %s\n", w.c_str());
  }

  pipeline::Pipeline p(cfg);
  if (args.flag_set("check")) {
    std::printf("%s: configuration, %zu model(s) and their feature signatures are consistent\n", cfg.source.c_str(),
                cfg.models.size());
    std::fputs(p.feature_plan_text().c_str(), stdout);
    return 0;
  }
  if (!cfg.quiet) std::fputs(p.feature_plan_text().c_str(), stdout);
  for (const auto& w : p.warmup())
    std::printf("warmup: model '%s' %d runs, p50 %.2f us p99 %.2f us, %s\n", w.model.c_str(), w.iterations,
                static_cast<double>(w.p50_ns) / 1e3, static_cast<double>(w.p99_ns) / 1e3,
                w.stable ? "stable" : "NOT stable within max_iterations (continuing)");
  p.mark_ready();
  std::printf("tickinfer run: ready (%s threading%s, feed on port %u%s, %zu model(s)%s%s%s)\n",
              cfg.threading == pipeline::ThreadingMode::Inline ? "inline" : "rings",
              cfg.agents > 1 ? (", " + std::to_string(cfg.agents) + " compute agents").c_str() : "", p.feed_port(0),
              cfg.line_b.enabled() ? (" and " + std::to_string(p.feed_port(1))).c_str() : "", cfg.models.size(),
              cfg.udp.enabled() ? (", signals to udp " + cfg.udp.host + ":" + std::to_string(cfg.udp.port)).c_str() : "",
              cfg.shm.empty() ? "" : (", shm ring " + cfg.shm).c_str(),
              cfg.log_path.empty() ? "" : (", decision log " + cfg.log_path).c_str());
  std::fflush(stdout);

  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  std::unique_ptr<feed::Exchange> source;
  std::thread source_thread;
  std::atomic<bool> source_stop{false};
  if (args.given("source")) {
    source = std::make_unique<feed::Exchange>(source_exchange(cfg, args));
    std::printf("source: replaying %s at %.0f msg/s into lines A%s\n", args.value("source").c_str(),
                args.number("source-rate", 1, 1e8), cfg.line_b.enabled() ? " and B" : "");
    std::fflush(stdout);
    source_thread = std::thread([&p, &source, &source_stop] {
      pipeline::exclude_this_thread_from_allocation_count();  // the exchange is not the run
      while (!p.polling() && !source_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      source->run(&source_stop);
    });
  }
  p.run(g_run_stop);
  if (source) {
    source_stop.store(true);
    source_thread.join();
  }

  const pipeline::RunTotals t = p.totals();
  std::printf("\nper-stage latency (%llu ticks in %.1f s = %.0f ticks/s, %llu signals)%s\n",
              static_cast<unsigned long long>(t.events), t.seconds,
              t.seconds > 0 ? static_cast<double>(t.events) / t.seconds : 0.0,
              static_cast<unsigned long long>(t.signals),
              t.wall_clock_exchange ? "" : "; exchange clock is synthetic: no wire / end_to_end");
  std::fputs(pipeline::format_stage_table(p.stage_stats()).c_str(), stdout);
  std::printf("%s\n", cpu_line(cfg).c_str());
  if (t.tx_stamps_on)
    std::printf("signal sent: rx_to_tx / end_to_end_tx end at the kernel's transmit stamp of each UDP datagram "
                "(%llu read, %llu missing); rx_to_signal / end_to_end at the return of send()\n",
                static_cast<unsigned long long>(t.tx_stamps_matched), static_cast<unsigned long long>(t.tx_stamps_missing));
  print_feed_summary(p.feed_stats(), stdout);
  std::fputs(p.books_text().c_str(), stdout);
  for (const auto& m : p.model_stats()) {
    std::printf("signals: model '%s' v%u: %llu (long %llu, short %llu, flat %llu), score min %.4f mean %.4f max %.4f",
                m.name.c_str(), m.version, static_cast<unsigned long long>(m.runs),
                static_cast<unsigned long long>(m.long_signals), static_cast<unsigned long long>(m.short_signals),
                static_cast<unsigned long long>(m.flat_signals), m.score_min,
                m.runs ? m.score_sum / static_cast<double>(m.runs) : 0.0, m.score_max);
    if (m.row_calls > 0)
      std::printf("; computed in %llu run_rows calls (one per inbound datagram)", static_cast<unsigned long long>(m.row_calls));
    std::printf("\n");
  }
  const auto agents = p.agent_stats();
  if (agents.size() > 1)
    for (const auto& a : agents)
      std::printf("agent %d (cpu %d): %zu instruments, %llu ticks, %llu signals, rx->signal p50 %.2f us p99 %.2f us "
                  "p99.9 %.2f us max %.2f us, queue max %zu\n",
                  a.index, a.cpu, a.instruments, static_cast<unsigned long long>(a.events),
                  static_cast<unsigned long long>(a.signals), a.rx_p50_ns / 1e3, a.rx_p99_ns / 1e3, a.rx_p999_ns / 1e3,
                  a.rx_max_ns / 1e3, a.queue_depth_max);
  std::printf("allocations after ready: %llu%s\n",
              static_cast<unsigned long long>(t.allocations_at_end - t.allocations_at_ready),
              t.udp_send_failures ? (", udp send failures " + std::to_string(t.udp_send_failures)).c_str() : "");
  print_writer_summary(t, cfg, stdout);
  if (t.degraded) std::printf("state: DEGRADED (%s)\n", t.degraded_reason.c_str());
  else std::printf("state: ok%s\n", t.end_of_session ? " (End of Session, everything delivered)" : "");
  if (!cfg.report.empty()) {
    std::ofstream f(cfg.report);
    if (!f) throw Error("report '" + cfg.report + "': cannot create");
    f << p.report_json() << "\n";
    std::printf("run statistics: %s (render: tickinfer report %s -o report.html)\n", cfg.report.c_str(),
                cfg.report.c_str());
  }
  if (t.events == 0) {
    std::fprintf(stderr, "tickinfer run: error: the feed delivered no market data (%s)\n",
                 t.degraded_reason.empty() ? "nothing received" : t.degraded_reason.c_str());
    return 1;
  }
  return 0;
}

}  // namespace tickinfer::cli
