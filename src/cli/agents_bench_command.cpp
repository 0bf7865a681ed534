// `tickinfer pipeline agents`: does one slow model delay the fast ones? The same market (200
// instruments, 100,000 messages/s from the in-process synthetic exchange over loopback UDP) runs
// through one compute agent and through two, in alternating rounds of one run:
//
//   slow model:  lstm_window in window mode (a [32, 10] LSTM per closed 1 ms bar) on the first
//                `load` instruments: its load is the knob (0, 10, 20, 40 instruments);
//   fast models: mlp_small and mlp_large in tick mode on the instruments after the first 40, the
//                same work at every load;
//   1 agent:     the feed thread on --feed-cpu-one (beside the exchange), every model on one compute
//                thread (--cpu);
//   2 agents:    agent 0 owns the first 40 instruments (the slow model's) on --slow-cpu beside the
//                exchange, agent 1 the others on --cpu beside the feed thread (--feed-cpu).
// The exchange paces asleep: it leaves its core to the thread beside it.
//
// Reported: each model group's exchange-send -> signal-sent latency (CLOCK_REALTIME on one host;
// the exchange stamps a packet's messages when it builds it). The bar: with two agents the fast
// models' p99 at the highest load stays within 1.3x of their p99 without the slow model; with
// one agent it does not. Medians over the rounds of each round's p99.
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli/commands.hpp"
#include "feed/exchange.hpp"
#include "feed/udp_socket.hpp"
#include "pipeline/pipeline.hpp"
#include "stats/clock.hpp"
#include "stats/latency_histogram.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::cli {

using namespace tickinfer::feed;

namespace {

constexpr std::uint32_t kSlowInstruments = 40;  // agent 0's part in the 2-agent setup

struct AgentsBenchOptions {
  std::string models_dir, spec_path, features_template;
  double rate = 0, seconds = 0;
  int rounds = 0;
  std::uint32_t instruments = 0;
  std::vector<int> loads;
  int ex_cpu = 0, feed_cpu = 1, feed_cpu_one = 0, cpu = 1, slow_cpu = 0;
  std::string idle;
  std::uint16_t port = 0;
  std::int64_t bar_ns = 0;
  std::uint32_t per_packet = 8;
};

std::string id_list(std::uint32_t from, std::uint32_t to) {
  std::string s = "[";
  for (std::uint32_t i = from; i <= to; ++i) s += (i > from ? ", " : "") + std::to_string(i);
  return s + "]";
}

// --features' (the default model's) 10 features and fixed standardization, over `instruments` ids and the
// LSTM's 32-bar window: written next to the bench's other outputs.
std::string write_spec(const AgentsBenchOptions& o, const std::string& dir) {
  std::ifstream in(o.features_template);
  if (!in) throw Error("pipeline agents: cannot read the feature spec '" + o.features_template + "' (--features)");
  std::ostringstream out;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("instruments =", 0) == 0) line = "instruments = " + id_list(1, o.instruments);
    else if (line.rfind("bar_ns =", 0) == 0) line = "bar_ns = " + std::to_string(o.bar_ns);
    else if (line.rfind("window =", 0) == 0) line = "window = 32";
    out << line << "\n";
  }
  const std::string path = dir + "/agents-bench-features.toml";
  std::ofstream(path) << out.str();
  return path;
}

pipeline::PipelineConfig bench_config(const AgentsBenchOptions& o, int load, int agents) {
  std::ostringstream t;
  t << "[feed]\nline_a = \"127.0.0.1:" << o.port << "\"\nline_b = \"none\"\nrecovery = \"none\"\nidle = \"" << o.idle
    << "\"\n[features]\nspec = \"" << o.spec_path << "\"\n";
  if (load > 0)
    t << "[[model]]\nname = \"slow\"\npath = \"" << o.models_dir << "/lstm_window/model.keras\"\nmode = \"window\"\n"
      << "check_signature = false\ninstruments = " << id_list(1, static_cast<std::uint32_t>(load)) << "\n";
  for (const char* m : {"mlp_small", "mlp_large"})
    t << "[[model]]\nname = \"" << m << "\"\npath = \"" << o.models_dir << "/" << m << "/model.keras\"\nmode = \"tick\"\n"
      << "check_signature = false\ninstruments = " << id_list(kSlowInstruments + 1, o.instruments) << "\n";
  t << "[threading]\nmode = \"rings\"\ncompute_idle = \"" << o.idle << "\"\nfeed_cpu = " << (agents == 1 ? o.feed_cpu_one : o.feed_cpu)
    << "\ncompute_cpu = " << (agents == 1 ? o.cpu : o.slow_cpu) << "\nring_capacity = 65536\n";
  if (agents == 2)
    t << "agents = 2\nagent_cpus = [" << o.slow_cpu << ", " << o.cpu << "]\nagent_instruments = ["
      << id_list(1, kSlowInstruments) << ", " << id_list(kSlowInstruments + 1, o.instruments) << "]\n";
  t << "[signals]\nudp = \"127.0.0.1:" << o.port + 2 << "\"\ntx_timestamps = false\n"
    << "[warmup]\nmin_iterations = 2000\nmax_iterations = 50000\n"
    << "[run]\nquiet = true\nseconds = " << o.seconds + 30 << "\nfeed_silence_s = 10\n";
  return pipeline::parse_pipeline_config(t.str(), "agents-bench.toml");
}

ExchangeConfig bench_exchange(const AgentsBenchOptions& o, int session) {
  ExchangeConfig c;
  c.session = Session::from("AGENTS" + std::to_string(session));
  c.market.instruments = o.instruments;
  c.market.seed = static_cast<std::uint64_t>(session + 1);
  c.messages = static_cast<std::uint64_t>(o.rate * o.seconds);
  c.rate = o.rate;
  c.line_a = make_address("127.0.0.1", o.port);
  c.line_b_enabled = false;
  c.rerequest_bind = "127.0.0.1";
  c.rerequest_port = 0;
  c.linger_ns = 300'000'000;
  c.end_of_session_interval_ns = 20'000'000;
  c.wall_clock_timestamps = true;
  c.sleep_pacing = true;  // it shares a core with a compute agent
  c.max_per_packet = o.per_packet;
  return c;
}

// One configuration's latency, over the rounds.
struct Cell {
  std::vector<std::int64_t> fast_p99, slow_p99, fast_p50;  // one per round
  stats::LatencyHistogram fast{10'000'000'000}, slow{10'000'000'000};
  std::uint64_t slow_runs = 0, events = 0, allocs = 0, ring_spins = 0;
  double seconds = 0;
};

std::int64_t median(std::vector<std::int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::atomic<bool> fifo_ok{false};

void run_round(const AgentsBenchOptions& o, int load, int agents, int session, Cell& cell) {
  const pipeline::PipelineConfig cfg = bench_config(o, load, agents);
  pipeline::Pipeline p(cfg);
  p.warmup();
  p.mark_ready();
  Exchange ex(bench_exchange(o, session));
  std::atomic<bool> stop{false};
  std::thread t([&] {
    stats::pin_current_thread(o.ex_cpu);
    prctl(PR_SET_TIMERSLACK, 1000UL);  // 1 us: wake-ups close to each packet's due time
    // The exchange is another machine: a compute agent on its core must not hold its packets
    // back (bursts after a delay would load the other agent too). SCHED_FIFO when allowed.
    sched_param sp{};
    sp.sched_priority = 1;
    fifo_ok.store(sched_setscheduler(0, SCHED_FIFO, &sp) == 0);
    while (!p.polling()) std::this_thread::sleep_for(std::chrono::microseconds(100));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ex.run();
  });
  p.run(stop);
  t.join();
  const pipeline::StageStats& st = p.stage_stats();
  stats::LatencyHistogram fast(10'000'000'000), slow(10'000'000'000);
  for (std::size_t i = 0; i < cfg.models.size(); ++i) (cfg.models[i].name == "slow" ? slow : fast).merge(st.model_e2e[i]);
  cell.fast.merge(fast);
  cell.slow.merge(slow);
  cell.fast_p99.push_back(fast.value_at_percentile(99));
  cell.fast_p50.push_back(fast.value_at_percentile(50));
  if (slow.count() > 0) cell.slow_p99.push_back(slow.value_at_percentile(99));
  const pipeline::RunTotals tot = p.totals();
  cell.slow_runs += static_cast<std::uint64_t>(slow.count());
  cell.events += tot.events;
  cell.allocs += tot.allocations_at_end - tot.allocations_at_ready;
  cell.ring_spins += p.feed_stats().ring_full_spins;
  cell.seconds += tot.seconds;
}

}  // namespace

ArgParser pipeline_agents_parser() {
  ArgParser p("pipeline agents", "one slow model and two fast ones, through 1 and 2 compute agents, same run");
  p.option("models", "DIR", "the bench models (lstm_window, mlp_small, mlp_large)", "bench/models");
  p.option("features", "FILE", "feature spec to take the 10 features and their scaling from (instruments, bar and window are the bench's)",
           "examples/default/features.toml");
  p.option("rate", "MSG/S", "exchange messages per second", "100000");
  p.option("instruments", "N", "instruments (ids 1..N; the first 40 are the slow model's)", "200");
  p.option("loads", "LIST", "the slow model's instruments per setting (0: no slow model)", "0,10,20,40");
  p.option("bar-us", "US", "bar length: the slow model runs once per closed bar of each of its instruments", "1000");
  p.option("per-packet", "N", "messages per packet: uniform in [1, N]", "8");
  p.option("seconds", "S", "per round and setting", "3");
  p.option("rounds", "N", "alternating rounds", "3");
  p.option("exchange-cpu", "C", "pin the exchange thread", "0");
  p.option("feed-cpu", "C", "2 agents: pin the feed thread (beside the fast agent)", "1");
  p.option("feed-cpu-one", "C", "1 agent: pin the feed thread (beside the exchange)", "0");
  p.option("cpu", "C", "1 agent: the compute thread; 2 agents: the fast models' agent", "1");
  p.option("slow-cpu", "C", "2 agents: the slow model's agent", "0");
  p.option("idle", "KIND", "idle strategy of the feed and compute threads (they share cores here)", "yield");
  p.option("port", "P", "base UDP port: feed = P, signals = P+2", "32201");
  p.option("json", "FILE", "write the results as JSON", "");
  return p;
}

int run_pipeline_agents(const ArgParser& a) {
  AgentsBenchOptions o;
  o.models_dir = a.value("models");
  o.features_template = a.value("features");
  o.rate = a.number("rate", 1000, 1e7);
  o.instruments = static_cast<std::uint32_t>(a.integer("instruments", kSlowInstruments + 1, 100000));
  o.seconds = a.number("seconds", 0.5, 3600);
  o.rounds = static_cast<int>(a.integer("rounds", 1, 1000));
  o.bar_ns = a.integer("bar-us", 1, 10'000'000) * 1000;
  o.per_packet = static_cast<std::uint32_t>(a.integer("per-packet", 1, 64));
  o.ex_cpu = static_cast<int>(a.integer("exchange-cpu", -1, 4095));
  o.feed_cpu = static_cast<int>(a.integer("feed-cpu", -1, 4095));
  o.feed_cpu_one = static_cast<int>(a.integer("feed-cpu-one", -1, 4095));
  o.cpu = static_cast<int>(a.integer("cpu", -1, 4095));
  o.slow_cpu = static_cast<int>(a.integer("slow-cpu", -1, 4095));
  o.idle = a.value("idle");
  o.port = static_cast<std::uint16_t>(a.integer("port", 1024, 65000));
  std::stringstream ls(a.value("loads"));
  for (std::string v; std::getline(ls, v, ',');) {
    const long n = std::strtol(v.c_str(), nullptr, 10);
    if (n < 0 || n > kSlowInstruments) throw UsageError("--loads: each between 0 and 40");
    o.loads.push_back(static_cast<int>(n));
  }
  if (o.loads.empty()) throw UsageError("--loads: at least one");
  char dir[] = "/tmp/tickinfer-agents-XXXXXX";
  if (!mkdtemp(dir)) throw Error("pipeline agents: cannot create a temporary directory");
  o.spec_path = write_spec(o, dir);

  ReceiverConfig sink_cfg;  // absorbs the UDP signals (never read: the kernel drops the overflow)
  sink_cfg.bind_address = "127.0.0.1";
  sink_cfg.port = static_cast<std::uint16_t>(o.port + 2);
  sink_cfg.kernel_timestamps = false;
  UdpSocket sink = UdpSocket::receiver(sink_cfg);

  std::printf("pipeline agents: %.0f msg/s (1..%u per packet), %u instruments, bars of %lld us; slow = lstm_window (window mode) on the "
              "first LOAD instruments, fast = mlp_small + mlp_large (tick mode) on instruments %u..%u\n"
              "  1 agent: feed cpu %d, compute cpu %d | 2 agents: feed cpu %d, slow agent cpu %d, fast agent cpu %d | "
              "exchange cpu %d | idle %s | %.1f s per round, %d rounds\n",
              o.rate, o.per_packet, o.instruments, static_cast<long long>(o.bar_ns / 1000), kSlowInstruments + 1, o.instruments,
              o.feed_cpu_one, o.cpu, o.feed_cpu, o.slow_cpu, o.cpu, o.ex_cpu, o.idle.c_str(), o.seconds, o.rounds);
  std::vector<Cell> cells(o.loads.size() * 2);
  int session = 0;
  for (int r = 0; r < o.rounds; ++r)
    for (std::size_t l = 0; l < o.loads.size(); ++l)
      for (int agents : {1, 2}) {
        std::fprintf(stderr, "round %d: load %d, %d agent(s)\n", r + 1, o.loads[l], agents);
        run_round(o, o.loads[l], agents, session++, cells[l * 2 + static_cast<std::size_t>(agents - 1)]);
      }

  std::printf("\nexchange send -> signal sent, us (median over rounds of each round's p99; p50 and max over all rounds)\n");
  std::printf("%5s %11s | %11s %11s %11s %11s | %11s %11s %11s %11s\n", "load", "slow runs/s", "1a fast p50", "1a fast p99",
              "1a fast max", "1a slow p99", "2a fast p50", "2a fast p99", "2a fast max", "2a slow p99");
  std::string json = "{\"rate\":" + std::to_string(o.rate) + ",\"instruments\":" + std::to_string(o.instruments) +
                     ",\"bar_ns\":" + std::to_string(o.bar_ns) + ",\"rounds\":" + std::to_string(o.rounds) + ",\"loads\":[";
  std::uint64_t allocs = 0;
  for (std::size_t l = 0; l < o.loads.size(); ++l) {
    const Cell& one = cells[l * 2];
    const Cell& two = cells[l * 2 + 1];
    allocs += one.allocs + two.allocs;
    const double slow_rate = one.seconds > 0 ? static_cast<double>(one.slow_runs) / one.seconds : 0;
    std::printf("%5d %11.0f | %11.1f %11.1f %11.1f %11.1f | %11.1f %11.1f %11.1f %11.1f\n", o.loads[l], slow_rate,
                median(one.fast_p50) / 1e3, median(one.fast_p99) / 1e3, one.fast.max() / 1e3, median(one.slow_p99) / 1e3,
                median(two.fast_p50) / 1e3, median(two.fast_p99) / 1e3, two.fast.max() / 1e3, median(two.slow_p99) / 1e3);
    json += std::string(l ? "," : "") + "{\"load\":" + std::to_string(o.loads[l]) +
            ",\"slow_runs_per_s\":" + std::to_string(slow_rate) +
            ",\"one_agent\":{\"fast_p99_ns\":" + std::to_string(median(one.fast_p99)) +
            ",\"fast_p50_ns\":" + std::to_string(median(one.fast_p50)) + ",\"slow_p99_ns\":" + std::to_string(median(one.slow_p99)) +
            "},\"two_agents\":{\"fast_p99_ns\":" + std::to_string(median(two.fast_p99)) +
            ",\"fast_p50_ns\":" + std::to_string(median(two.fast_p50)) + ",\"slow_p99_ns\":" + std::to_string(median(two.slow_p99)) +
            ",\"feed_ring_full_spins\":" + std::to_string(two.ring_spins) + "}}";
  }
  const double g1 = static_cast<double>(median(cells[cells.size() - 2].fast_p99)) / static_cast<double>(std::max<std::int64_t>(1, median(cells[0].fast_p99)));
  const double g2 = static_cast<double>(median(cells[cells.size() - 1].fast_p99)) / static_cast<double>(std::max<std::int64_t>(1, median(cells[1].fast_p99)));
  const bool pass = g2 <= 1.3 && g1 > 1.3;
  std::printf("\nfast models' p99 at load %d vs load %d: 1 agent %.2fx, 2 agents %.2fx\n", o.loads.back(), o.loads.front(), g1, g2);
  std::printf("bar: with 2 agents the fast p99 does not grow with the slow model's load (<= 1.3x), with 1 agent it does "
              "(> 1.3x): %s\n", pass ? "PASS" : "FAIL");
  std::printf("allocations after ready in all rounds: %llu; exchange thread %s\n", static_cast<unsigned long long>(allocs),
              fifo_ok.load() ? "SCHED_FIFO 1 (preempts the agent beside it)" : "SCHED_OTHER (SCHED_FIFO refused: not root?)");
  json += "],\"growth_one_agent\":" + std::to_string(g1) + ",\"growth_two_agents\":" + std::to_string(g2) +
          ",\"pass\":" + (pass ? "true" : "false") + "}";
  if (!a.value("json").empty()) {
    std::ofstream f(a.value("json"));
    if (!f) throw Error("--json '" + a.value("json") + "': cannot create");
    f << json << "\n";
  }
  unlink(o.spec_path.c_str());
  rmdir(dir);
  return pass ? 0 : 3;
}

}  // namespace tickinfer::cli
