// `tickinfer pipeline bench`: the pipeline's exchange-send -> signal-sent latency against the floor
// of a bare UDP loopback hop, measured in ONE run, in alternating rounds with the same exchange,
// rate, instruments and cores:
//
//   bare:    the synthetic exchange (wall-clock message timestamps) -> a busy-poll
//            recvfrom(MSG_DONTWAIT) loop on a plain socket; latency = user receive - exchange ts
//   inline:  the same exchange (lines A and B) -> `tickinfer run`'s Pipeline, one thread
//   rings:   the same, feed thread -> SPSC ring -> compute thread
//
// Every latency is a difference of CLOCK_REALTIME readings on one host. The exchange stamps the
// messages of a packet when it builds it, immediately before sending it on line A.
//
// "Signal sent", for the bar, is the kernel's transmit stamp of the signal's UDP datagram (the
// hand-off to the device, src/pipeline/tx_stamps.hpp); the return of send() is reported beside it.
// On loopback send() returns about 1.6 us later: the kernel runs the receiving socket's stack
// inside the sender's syscall before returning.
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "cli/commands.hpp"
#include "cli/cpu_stall_probe.hpp"
#include "feed/byte_order.hpp"
#include "feed/exchange.hpp"
#include "feed/market_generator.hpp"
#include "feed/moldudp64.hpp"
#include "feed/udp_socket.hpp"
#include "stats/clock.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/spin_budget.hpp"
#include "stats/cpu_quota.hpp"
#include "stats/latency_histogram.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::cli {

using namespace tickinfer::feed;

namespace {

constexpr std::size_t kFirstTsOffset = kHeaderBytes + 2 + 5;  // first message's exchange timestamp

struct Summary {
  stats::LatencyHistogram h{10'000'000'000};
  void add(const stats::LatencyHistogram& o) { h.merge(o); }
};

void row(const char* name, const stats::LatencyHistogram& h) {
  std::printf("%-34s %9lld %9.2f %9.2f %9.2f %9.2f %9.2f\n", name, static_cast<long long>(h.count()),
              h.value_at_percentile(50) / 1e3, h.value_at_percentile(90) / 1e3, h.value_at_percentile(99) / 1e3,
              h.value_at_percentile(99.9) / 1e3, h.max() / 1e3);
}

std::string hist_json(const stats::LatencyHistogram& h) {
  char b[256];
  std::snprintf(b, sizeof b, "{\"count\":%lld,\"p50_ns\":%lld,\"p90_ns\":%lld,\"p99_ns\":%lld,\"p999_ns\":%lld,\"max_ns\":%lld}",
                static_cast<long long>(h.count()), static_cast<long long>(h.value_at_percentile(50)),
                static_cast<long long>(h.value_at_percentile(90)), static_cast<long long>(h.value_at_percentile(99)),
                static_cast<long long>(h.value_at_percentile(99.9)), static_cast<long long>(h.max()));
  return b;
}

}  // namespace

ArgParser pipeline_parser() {
  ArgParser p("pipeline bench", "bench: exchange->signal latency vs a bare UDP hop, same run | agents: one slow model and two fast ones through 1 and 2 compute agents | ticks: market as tick CSV");
  p.option("config", "FILE", "pipeline configuration (models, features, threading)", "examples/default/config.toml");
  p.option("rate", "MSG/S", "exchange messages per second", "50000");
  p.option("seconds", "S", "per round and mode", "4");
  p.option("rounds", "N", "alternating rounds (bare, then each threading mode)", "3");
  p.option("threading", "MODES", "inline, rings or both", "both");
  p.option("instruments", "N", "instruments the exchange publishes (must be in the feature spec)", "20");
  p.option("exchange-cpu", "C", "pin the exchange thread (-1: no)", "0");
  p.option("cpu", "C", "pin the receiving / compute thread (-1: no)", "1");
  p.option("feed-cpu", "C", "rings: pin the feed thread (-1: no)", "0");
  p.option("port", "P", "base UDP port: line A = P, line B = P+1, signals = P+2", "32101");
  p.option("report", "FILE", "write the last inline round's run report with the bench results", "");
  p.option("udp-batch", "MODE", "UDP signals: packet (one datagram per inbound packet) or message (one per signal); default: the config's", "");
  p.flag("no-udp", "signals to the shm ring only (no UDP send: the co-located strategy's path)");
  p.option("stall-probe", "S", "first measure how often the pinned cores are taken away from a spinning thread (0: skip)", "1");
  return p;
}

int run_pipeline(const ArgParser&) { throw UsageError("usage: tickinfer pipeline bench [options]"); }

namespace {

// The bench's settings, parsed once.
struct BenchOptions {
  double rate = 0, seconds = 0;
  int rounds = 0;
  std::uint32_t instruments = 0;
  int ex_cpu = -1, cpu = -1, feed_cpu = -1;
  std::uint16_t port = 0;
};

// What one threading mode accumulated over the rounds.
struct ModeResult {
  Summary e2e, rx, e2e_tx;
  pipeline::StageStats stages;
  std::uint64_t tx_read = 0, tx_missing = 0, tx_stray = 0;
  std::uint64_t signals = 0, events = 0, allocs = 0, lost = 0;
};

// The configuration every round's pipeline starts from: the user's models and features, the
// bench's sockets, nothing written to disk, spinning agents on the chosen cores.
pipeline::PipelineConfig bench_config(const ArgParser& a, const BenchOptions& o) {
  pipeline::PipelineConfig base = pipeline::load_pipeline_config(a.value("config"));
  base.line_a = {"127.0.0.1", o.port};
  base.line_b = {"127.0.0.1", static_cast<std::uint16_t>(o.port + 1)};
  base.recovery = {"", 0};  // no faults are injected: nothing to recover
  base.udp = {"127.0.0.1", static_cast<std::uint16_t>(o.port + 2)};
  if (a.given("udp-batch")) {
    const std::string b = a.value("udp-batch");
    if (b == "packet") base.udp_batch = pipeline::SignalBatching::Packet;
    else if (b == "message") base.udp_batch = pipeline::SignalBatching::Message;
    else throw UsageError("--udp-batch: packet or message");
  }
  if (a.flag_set("no-udp")) {
    base.udp = {"", 0};
    if (base.shm.empty()) base.shm = "tickinfer-bench";
  }
  base.log_path.clear();     // the decision log is measured by `tickinfer run`, not here
  base.ready_file.clear();
  base.metrics = {"", 0};
  base.report.clear();
  base.quiet = true;
  base.seconds = o.seconds + 30;  // End of Session stops a round; this is a guard
  base.feed_idle = base.compute_idle = "spin";
  base.compute_cpu = o.cpu;
  base.feed_cpu = o.feed_cpu;
  base.feed_silence_s = 10;
  return base;
}

ExchangeConfig bench_exchange(const BenchOptions& o, int session, bool line_b) {
  ExchangeConfig c;
  c.session = Session::from("BENCH" + std::to_string(session));
  c.market.instruments = o.instruments;
  c.market.seed = static_cast<std::uint64_t>(session + 1);
  c.messages = static_cast<std::uint64_t>(o.rate * o.seconds);
  c.rate = o.rate;
  c.line_a = make_address("127.0.0.1", o.port);
  c.line_b_enabled = line_b;
  c.line_b = make_address("127.0.0.1", static_cast<std::uint16_t>(o.port + 1));
  c.rerequest_bind = "127.0.0.1";
  c.rerequest_port = 0;
  c.linger_ns = 300'000'000;
  c.end_of_session_interval_ns = 20'000'000;
  c.wall_clock_timestamps = true;
  return c;
}

// One round of the floor: the exchange on line A into a busy-poll recvfrom loop.
void run_bare_round(const BenchOptions& o, int session, Summary& bare) {
  ReceiverConfig rc;
  rc.bind_address = "127.0.0.1";
  rc.port = o.port;
  rc.kernel_timestamps = false;
  UdpSocket s = UdpSocket::receiver(rc);
  Exchange ex(bench_exchange(o, session, false));
  std::atomic<bool> done{false};
  std::thread t([&] {
    stats::pin_current_thread(o.ex_cpu);
    ex.run();
    done = true;
  });
  stats::pin_current_thread(o.cpu);
  std::uint8_t buf[2048];
  while (!done.load(std::memory_order_relaxed)) {
    const ssize_t n = ::recvfrom(s.fd(), buf, sizeof buf, MSG_DONTWAIT, nullptr, nullptr);
    if (n >= static_cast<ssize_t>(kFirstTsOffset + 8) && load_be16(buf + 18) != 0 && load_be16(buf + 18) != 0xFFFF) {
      const std::int64_t t1 = stats::realtime_ns();
      bare.h.record(t1 - static_cast<std::int64_t>(load_be64(buf + kFirstTsOffset)));
    }
  }
  t.join();
}

// One round of the pipeline in config c's threading mode, added to m. Returns the round's run
// report when asked for one (its "bench" object is filled in later), else "".
std::string run_pipeline_round(const pipeline::PipelineConfig& c, const BenchOptions& o, int session,
                               ModeResult& m, bool want_report) {
  pipeline::Pipeline p(c);
  p.warmup();
  p.mark_ready();
  Exchange ex(bench_exchange(o, session, true));
  std::atomic<bool> stop{false};
  std::thread t([&] {
    stats::pin_current_thread(o.ex_cpu);
    // Start publishing once the pipeline reads its sockets: not part of the measurement.
    while (!p.polling()) std::this_thread::sleep_for(std::chrono::microseconds(100));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ex.run();
  });
  p.run(stop);
  t.join();
  const auto& st = p.stage_stats();
  m.e2e.add(st.stage[pipeline::kEndToEnd]);
  m.e2e_tx.add(st.stage[pipeline::kEndToEndTx]);
  m.rx.add(st.stage[pipeline::kRxToSignal]);
  for (int s = 0; s < pipeline::kStageCount; ++s) m.stages.stage[s].merge(st.stage[s]);
  const auto tot = p.totals();
  m.signals += tot.signals;
  m.events += tot.events;
  m.allocs += tot.allocations_at_end - tot.allocations_at_ready;
  m.lost += tot.feed_lost_messages;
  m.tx_read += tot.tx_stamps_matched;
  m.tx_missing += tot.tx_stamps_missing;
  m.tx_stray += tot.tx_stamps_stray;
  return want_report ? p.report_json("{}") : std::string();
}

std::string stalls_json(const std::vector<CpuStalls>& stalls) {
  std::string out = "[";
  for (std::size_t i = 0; i < stalls.size(); ++i) {
    char b[256];
    std::snprintf(b, sizeof b, "%s{\"cpu\":%d,\"per_second\":%.1f,\"fraction\":%.5f,\"p50_ns\":%lld,\"p90_ns\":%lld,\"max_ns\":%lld}",
                  i ? "," : "", stalls[i].cpu, stalls[i].per_second, stalls[i].fraction,
                  static_cast<long long>(stalls[i].p50_ns), static_cast<long long>(stalls[i].p90_ns),
                  static_cast<long long>(stalls[i].max_ns));
    out += b;
  }
  return out + "]";
}

// The machine's own stops of a busy core, measured on the pinned cores together before the run.
std::vector<CpuStalls> probe_stalls(const BenchOptions& o, double probe_s) {
  std::vector<CpuStalls> stalls;
  if (probe_s <= 0) return stalls;
  std::vector<int> cpus;
  if (o.ex_cpu >= 0) cpus.push_back(o.ex_cpu);
  if (o.cpu >= 0 && o.cpu != o.ex_cpu) cpus.push_back(o.cpu);
  if (!cpus.empty()) stalls = probe_cpu_stalls(cpus, probe_s);
  for (const auto& s : stalls)
    std::printf("cpu %d stops (clock-read gaps > 1 us while spinning): %.0f/s, %.2f %% of the time, p50 %.1f us, "
                "p90 %.1f us, max %.1f us\n",
                s.cpu, s.per_second, 100 * s.fraction, s.p50_ns / 1e3, s.p90_ns / 1e3, s.max_ns / 1e3);
  return stalls;
}

// Share of packets whose path overlaps a stop: the exchange core for the wire part, the
// receiving core for the rest (p50 durations), the cores' stops independent. Above 1 %, that
// path's p99 carries a stop.
double stop_exposure(const std::vector<CpuStalls>& stalls, const BenchOptions& o, double wire_ns, double total_ns) {
  double clear = 1.0;  // probability that no core on the path stops during it
  for (const auto& s : stalls) {
    if (s.cpu == o.ex_cpu) clear *= 1.0 - s.hit_probability(wire_ns, false);
    if (s.cpu == o.cpu) clear *= 1.0 - s.hit_probability(std::max(0.0, total_ns - wire_ns), true);
  }
  return 1.0 - clear;
}

// Prints one mode's results and its verdict against the bar; returns the mode's JSON object.
std::string report_mode(const std::string& name, const ModeResult& m, const Summary& bare,
                        const std::vector<CpuStalls>& stalls, const BenchOptions& o, bool& pass) {
  const std::int64_t bar = bare.h.value_at_percentile(99) + 10'000;
  // Signal sent = its datagram's kernel transmit stamp, where there is one (UDP signals with
  // tx_timestamps on); otherwise the return of send() / the shm publish.
  const bool at_tx = m.e2e_tx.h.count() > 0;
  const stats::LatencyHistogram& end = at_tx ? m.e2e_tx.h : m.e2e.h;
  const std::int64_t got = end.value_at_percentile(99);
  pass = got <= bar && end.count() > 0;
  std::printf("\n%s: %llu ticks, %llu signals, %llu feed messages lost, %llu process allocations after ready "
              "(the in-process exchange allocates; `tickinfer run` reports the pipeline alone)\n",
              name.c_str(), static_cast<unsigned long long>(m.events), static_cast<unsigned long long>(m.signals),
              static_cast<unsigned long long>(m.lost), static_cast<unsigned long long>(m.allocs));
  std::fputs(pipeline::format_stage_table(m.stages).c_str(), stdout);
  if (m.tx_read + m.tx_missing > 0)
    std::printf("kernel TX stamps of the signal datagrams: %llu read, %llu missing, %llu unmatched\n",
                static_cast<unsigned long long>(m.tx_read), static_cast<unsigned long long>(m.tx_missing),
                static_cast<unsigned long long>(m.tx_stray));
  std::printf("bar (%s): end-to-end p99 %.2f us (exchange send -> %s) <= bare hop p99 %.2f us + 10 us = %.2f us: %s\n",
              name.c_str(), got / 1e3, at_tx ? "kernel TX of the signal" : "signal sent",
              bare.h.value_at_percentile(99) / 1e3, bar / 1e3, pass ? "PASS" : "FAIL");
  if (at_tx)
    std::printf("           to the return of send(): p99 %.2f us (%s)\n", m.e2e.h.value_at_percentile(99) / 1e3,
                m.e2e.h.value_at_percentile(99) <= bar ? "also within" : "over the bar");
  std::string exposure_json = "null";
  if (!stalls.empty()) {
    const double wire = static_cast<double>(m.stages.stage[pipeline::kWire].value_at_percentile(50));
    const double bare_x = stop_exposure(stalls, o, wire, static_cast<double>(bare.h.value_at_percentile(50)));
    const double pipe_x = stop_exposure(stalls, o, wire, static_cast<double>(end.value_at_percentile(50)));
    std::printf("           packets whose path a core stop overlaps (at p50 durations): bare hop %.1f %%, pipeline %.1f %%"
                "%s\n",
                100 * bare_x, 100 * pipe_x,
                pipe_x > 0.01 ? " (above 1 %: its p99 carries a stop)" : "");
    exposure_json = "{\"bare\":" + std::to_string(bare_x) + ",\"pipeline\":" + std::to_string(pipe_x) + "}";
  }
  return "\"" + name + "\":{\"end_to_end\":" + hist_json(m.e2e.h) +
         ",\"end_to_end_tx\":" + hist_json(m.e2e_tx.h) + ",\"bar_at\":\"" + (at_tx ? "kernel_tx" : "send_return") + "\"" +
         ",\"rx_to_signal\":" + hist_json(m.rx.h) + ",\"signals\":" + std::to_string(m.signals) +
         ",\"allocations_after_ready\":" + std::to_string(m.allocs) + ",\"stop_exposure\":" + exposure_json +
         ",\"pass\":" + (pass ? "true" : "false") + "}";
}

// Splices the bench object into the run report (it was written with an empty "bench").
void write_report(const std::string& path, std::string report, const std::string& bench) {
  const auto pos = report.rfind("\"bench\"");
  if (pos != std::string::npos) {
    const auto open = report.find('{', pos);
    const auto close = report.find('}', open);
    report.replace(open, close - open + 1, bench);
  }
  std::ofstream f(path);
  if (!f) throw Error("report '" + path + "': cannot create");
  f << report << "\n";
  std::printf("run report with bench results: %s\n", path.c_str());
}

}  // namespace

int run_pipeline_bench(const ArgParser& a) {
  BenchOptions o;
  o.rate = a.number("rate", 100, 1e7);
  o.seconds = a.number("seconds", 0.5, 3600);
  o.rounds = static_cast<int>(a.integer("rounds", 1, 1000));
  const std::string modes = a.value("threading");
  if (modes != "inline" && modes != "rings" && modes != "both") throw UsageError("--threading: inline, rings or both");
  o.instruments = static_cast<std::uint32_t>(a.integer("instruments", 1, 100000));
  o.ex_cpu = static_cast<int>(a.integer("exchange-cpu", -1, 4095));
  o.cpu = static_cast<int>(a.integer("cpu", -1, 4095));
  o.feed_cpu = static_cast<int>(a.integer("feed-cpu", -1, 4095));
  o.port = static_cast<std::uint16_t>(a.integer("port", 1024, 65000));
  const pipeline::PipelineConfig base = bench_config(a, o);
  ReceiverConfig sink_cfg;  // absorbs the UDP signals (never read: the kernel drops the overflow)
  sink_cfg.bind_address = "127.0.0.1";
  sink_cfg.port = static_cast<std::uint16_t>(o.port + 2);
  sink_cfg.kernel_timestamps = false;
  UdpSocket sink = UdpSocket::receiver(sink_cfg);

  Summary bare;
  ModeResult results[2];
  std::string last_report;
  std::vector<std::string> mode_list;
  if (modes != "rings") mode_list.push_back("inline");
  if (modes != "inline") mode_list.push_back("rings");
  std::printf("pipeline bench: %s, %.0f msg/s, %u instruments, %.1f s per round and mode, %d rounds; exchange on cpu %d, "
              "receiver/compute on cpu %d; signals to %s%s%s\n",
              base.source.c_str(), o.rate, o.instruments, o.seconds, o.rounds, o.ex_cpu, o.cpu,
              !base.udp.enabled() ? ""
              : base.udp_batch == pipeline::SignalBatching::Packet ? "udp (a datagram per inbound packet)"
                                                                   : "udp (a datagram per signal)",
              base.udp.enabled() && !base.shm.empty() ? " + " : "", base.shm.empty() ? "" : ("shm " + base.shm).c_str());
  const std::vector<CpuStalls> stalls = probe_stalls(o, a.number("stall-probe", 0, 60));
  const bool want_report = !a.value("report").empty();
  int session = 0;
  for (int r = 0; r < o.rounds; ++r) {
    run_bare_round(o, session++, bare);
    for (std::size_t mi = 0; mi < mode_list.size(); ++mi) {
      pipeline::PipelineConfig c = base;
      c.threading = mode_list[mi] == "inline" ? pipeline::ThreadingMode::Inline : pipeline::ThreadingMode::Rings;
      // The exchange thread spins too (it paces sends by polling the clock).
      const std::string w = pipeline::fit_spinning_to_cpus(c, stats::usable_cpus(), 1);
      if (!w.empty() && r == 0) std::printf("pipeline bench: %s mode: warning: %s\n", mode_list[mi].c_str(), w.c_str());
      // The report is the first mode's run in the last round.
      std::string report = run_pipeline_round(c, o, session++, results[mi], want_report && mi == 0 && r == o.rounds - 1);
      if (!report.empty()) last_report = std::move(report);
    }
  }
  std::printf("\n%-34s %9s %9s %9s %9s %9s %9s\n", "latency (us)", "samples", "p50", "p90", "p99", "p99.9", "max");
  row("bare UDP hop: send -> user", bare.h);
  for (std::size_t k = 0; k < mode_list.size(); ++k) {
    if (results[k].e2e_tx.h.count() > 0) row(("pipeline " + mode_list[k] + ": send -> kernel TX").c_str(), results[k].e2e_tx.h);
    row(("pipeline " + mode_list[k] + ": send -> send() ret").c_str(), results[k].e2e.h);
    row(("pipeline " + mode_list[k] + ": kernel rx -> signal").c_str(), results[k].rx.h);
  }
  std::string bench = "{\"rate\":" + std::to_string(o.rate) + ",\"seconds_per_round\":" + std::to_string(o.seconds) +
                      ",\"rounds\":" + std::to_string(o.rounds) + ",\"instruments\":" + std::to_string(o.instruments) +
                      ",\"bare_hop\":" + hist_json(bare.h) + ",\"cpu_stops\":" + stalls_json(stalls) + ",\"modes\":{";
  int status = 0;
  for (std::size_t k = 0; k < mode_list.size(); ++k) {
    bool pass = false;
    bench += std::string(k ? "," : "") + report_mode(mode_list[k], results[k], bare, stalls, o, pass);
    if (!pass) status = 3;
  }
  bench += "}}";
  if (want_report && !last_report.empty()) write_report(a.value("report"), last_report, bench);
  return status;
}

// `tickinfer pipeline ticks --out FILE`: the synthetic exchange's market (the same generator
// `feed serve` publishes) as a tick CSV for `tickinfer features`: training data for models that
// will run on that feed (tools/make_default_model.py).
ArgParser pipeline_ticks_parser() {
  ArgParser p("pipeline ticks", "write the synthetic market's events as a tick CSV (for tickinfer features)");
  p.option("out", "FILE", "CSV to write (ts_ns,instrument,type,bid,ask,bid_size,ask_size,price,size,side)", "ticks.csv");
  p.option("messages", "N", "events", "200000");
  p.option("instruments", "N", "instruments (ids 1..N)", "20");
  p.option("seed", "N", "market seed", "1");
  p.option("events-per-regime", "N", "events before the next regime", "50000");
  return p;
}

int run_pipeline_ticks(const ArgParser& a) {
  GeneratorConfig g;
  g.seed = static_cast<std::uint64_t>(a.integer("seed", 0, 1L << 62));
  g.instruments = static_cast<std::uint32_t>(a.integer("instruments", 1, 100000));
  g.events_per_regime = static_cast<std::uint64_t>(a.integer("events-per-regime", 1, 1L << 40));
  const long n = a.integer("messages", 1, 1L << 30);
  MarketGenerator gen(g);
  std::FILE* f = std::fopen(a.value("out").c_str(), "w");
  if (!f) throw Error("ticks '" + a.value("out") + "': cannot create");
  std::fprintf(f, "ts_ns,instrument,type,bid,ask,bid_size,ask_size,price,size,side\n");
  for (long i = 0; i < n; ++i) {
    const md::Event e = gen.next();
    if (e.kind == md::Event::Kind::Quote) {
      const auto& q = e.quote;
      std::fprintf(f, "%lld,%u,Q,%.8f,%.8f,%u,%u,,,\n", static_cast<long long>(q.exchange_ts_ns), q.instrument,
                   md::price_to_double(q.bid_price), md::price_to_double(q.ask_price), q.bid_size, q.ask_size);
    } else {
      const auto& t = e.trade;
      const char side = t.aggressor == md::Side::Buy ? 'B' : (t.aggressor == md::Side::Sell ? 'S' : 'U');
      std::fprintf(f, "%lld,%u,T,,,,,%.8f,%u,%c\n", static_cast<long long>(t.exchange_ts_ns), t.instrument,
                   md::price_to_double(t.price), t.size, side);
    }
  }
  if (std::fclose(f) != 0) throw Error("ticks '" + a.value("out") + "': write failed");
  std::printf("%ld events of %u instruments -> %s\n", n, g.instruments, a.value("out").c_str());
  return 0;
}

int run_pipeline_main(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "ticks") {
    ArgParser p = pipeline_ticks_parser();
    p.parse(std::vector<std::string>(args.begin() + 1, args.end()));
    if (p.help_requested()) {
      std::fputs(p.help().c_str(), stdout);
      return 0;
    }
    return run_pipeline_ticks(p);
  }
  if (!args.empty() && args[0] == "agents") {
    ArgParser p = pipeline_agents_parser();
    p.parse(std::vector<std::string>(args.begin() + 1, args.end()));
    if (p.help_requested()) {
      std::fputs(p.help().c_str(), stdout);
      return 0;
    }
    return run_pipeline_agents(p);
  }
  if (args.empty() || args[0] != "bench") throw UsageError("usage: tickinfer pipeline bench|agents|ticks [options]");
  ArgParser p = pipeline_parser();
  p.parse(std::vector<std::string>(args.begin() + 1, args.end()));
  if (p.help_requested()) {
    std::fputs(p.help().c_str(), stdout);
    return 0;
  }
  return run_pipeline_bench(p);
}

}  // namespace tickinfer::cli
