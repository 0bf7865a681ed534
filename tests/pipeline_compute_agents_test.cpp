// Compute agents ([threading] agents): the configuration and its refusals, how instruments are
// assigned, the signal ring with several writers, and a real run split over two agents against
// the same feed run by one agent: every event is computed once by the agent that owns its
// instrument (counted against the exchange's own market, regenerated here), every signal is
// numbered once with no gap across the agents, the decision log of both agents is one readable
// file, the scores of every (model, tick) equal the one-agent run's bit for bit (stateful models
// included: each agent's recurrent state is its instruments'), and nothing allocates after ready.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "feed/market_generator.hpp"
#include "features/feature_spec.hpp"
#include "pipeline/compute_unit.hpp"
#include "pipeline/config.hpp"
#include "pipeline/decision_log.hpp"
#include "pipeline/signal_format.hpp"
#include "pipeline/signal_ring.hpp"
#include "pipeline_test_support.hpp"
#include "tickinfer/error.hpp"
#include "support/source_paths.hpp"

using namespace pipeline_test;
using namespace tickinfer::pipeline;

namespace {

std::string base_config(const std::string& threading) {
  return "[feed]\nline_a = \"127.0.0.1:1\"\n[features]\nspec = \"" + kDefault + "/features.toml\"\n" +
         "[[model]]\nname = \"m\"\npath = \"" + kDefault + "/model.keras\"\n[threading]\n" + threading;
}

std::string refusal(const std::string& threading) {
  try {
    parse_pipeline_config(base_config(threading), "agents.toml");
  } catch (const tickinfer::Error& e) {
    return e.what();
  }
  return "";
}

TEST(ComputeAgentsConfig, ParsesAgentsCpusAndExplicitMap) {
  const PipelineConfig c = parse_pipeline_config(
      base_config("mode = \"rings\"\nagents = 3\nagent_cpus = [0, 1]\nagent_instruments = [[1, 2], [], [7]]\n"),
      "agents.toml");
  EXPECT_EQ(c.agents, 3);
  EXPECT_EQ(c.agent_cpus, (std::vector<int>{0, 1}));
  ASSERT_EQ(c.agent_instruments.size(), 3u);
  EXPECT_EQ(c.agent_instruments[0], (std::vector<std::uint32_t>{1, 2}));
  EXPECT_TRUE(c.agent_instruments[1].empty());
  EXPECT_EQ(agent_of(c, 1), 0);
  EXPECT_EQ(agent_of(c, 7), 2);
}

TEST(ComputeAgentsConfig, RefusesWhatCannotWork) {
  EXPECT_NE(refusal("mode = \"inline\"\nagents = 2\n").find("needs mode = \"rings\""), std::string::npos);
  EXPECT_NE(refusal("mode = \"rings\"\nagents = 2\nagent_instruments = [[1], [1]]\n").find("listed for two agents"),
            std::string::npos);
  EXPECT_NE(refusal("mode = \"rings\"\nagents = 2\nagent_instruments = [[1], [2], [3]]\n").find("3 lists for 2 agent"),
            std::string::npos);
  EXPECT_NE(refusal("mode = \"rings\"\nagents = 2\nagent_cpus = [0, 1, 2]\n").find("3 CPUs for 2 agent"),
            std::string::npos);
  EXPECT_NE(refusal("mode = \"rings\"\nagents = 0\n").find("agents"), std::string::npos);
  EXPECT_NE(refusal("mode = \"rings\"\nagents = 2\nagent_instruments = [1, 2]\n").find("array of arrays"),
            std::string::npos);
  // The feature ring and UDP stream are numbered by one writer.
  std::string text = base_config("mode = \"rings\"\nagents = 2\n");
  text.replace(text.find("[[model]]"), 0, "ring = \"x\"\n");
  try {
    parse_pipeline_config(text, "agents.toml");
    ADD_FAILURE() << "accepted a feature ring with two agents";
  } catch (const tickinfer::Error& e) {
    EXPECT_NE(std::string(e.what()).find("not with [threading] agents > 1"), std::string::npos) << e.what();
  }
}

TEST(ComputeAgentsAssign, HashSpreadsIdsEvenWithinAShard) {
  PipelineConfig c;
  c.agents = 4;
  int count[4] = {};
  for (std::uint32_t id = 1; id <= 4000; ++id) ++count[agent_of(c, id)];
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(count[k], 1000, 120) << k;
  // The even ids (shard 0 of 2 by id % 2) still split over 2 agents.
  c.agents = 2;
  int even[2] = {};
  for (std::uint32_t id = 2; id <= 4000; id += 2) ++even[agent_of(c, id)];
  EXPECT_NEAR(even[0], 1000, 120);
  EXPECT_NEAR(even[1], 1000, 120);
}

TEST(ComputeAgentsAssign, ExplicitListsThenHashEveryInstrumentOnce) {
  tickinfer::features::FeaturePlan plan;
  for (std::uint32_t id = 1; id <= 20; ++id) plan.spec.instruments.push_back(id);
  plan.universe = plan.spec.instruments;
  PipelineConfig c;
  c.agents = 2;
  c.agent_instruments = {{3, 5, 7}};
  const auto parts = assign_agents(c, plan);
  ASSERT_EQ(parts.size(), 2u);
  for (std::uint32_t id : {3u, 5u, 7u})
    EXPECT_NE(std::find(parts[0].begin(), parts[0].end(), id), parts[0].end()) << id;
  std::vector<std::uint32_t> all = parts[0];
  all.insert(all.end(), parts[1].begin(), parts[1].end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, plan.spec.instruments);  // each once
  EXPECT_FALSE(parts[1].empty());

  c.agent_instruments = {{99}};
  try {
    assign_agents(c, plan);
    ADD_FAILURE() << "accepted an instrument outside the spec";
  } catch (const tickinfer::Error& e) {
    EXPECT_NE(std::string(e.what()).find("99, which is not in the feature spec"), std::string::npos) << e.what();
  }
  c.agent_instruments.clear();
  c.agents = 64;  // 20 instruments cannot give every agent one
  try {
    assign_agents(c, plan);
    ADD_FAILURE() << "accepted an agent with no instrument";
  } catch (const tickinfer::Error& e) {
    EXPECT_NE(std::string(e.what()).find("owns none of the 20 instruments"), std::string::npos) << e.what();
  }
}

// Two writer threads (two agents) and a reader that keeps up: every message arrives once,
// intact, each writer's in its own order, none counted missed.
TEST(ComputeAgentsSignalRing, TwoWritersOneReaderLosesNothing) {
  const std::string name = "tickinfer-agents-ring-" + std::to_string(getpid());
  SignalRingWriter w(name, 1 << 12, true);  // several writers
  SignalRingReader r(name, true);
  constexpr std::uint64_t kPerWriter = 300'000;
  std::atomic<int> go{0};
  auto writer = [&](std::uint32_t agent) {
    std::uint8_t msg[kSignalBytes];
    Signal s;
    s.score_count = 1;
    s.instrument = agent;
    while (go.load() == 0) {
    }
    for (std::uint64_t i = 1; i <= kPerWriter; ++i) {
      s.tick_seq = i;
      encode_signal(s, msg);
      w.publish(msg);
      // Keep the reader able to follow: at most half a ring ahead of it.
      while (w.published() > r.position() + 2048) std::this_thread::yield();
    }
  };
  std::thread a(writer, 0u), b(writer, 1u);
  go = 1;
  std::uint64_t got = 0, next[2] = {1, 1};
  std::uint8_t buf[kSignalBytes];
  while (got < 2 * kPerWriter) {
    if (!r.poll(buf)) continue;
    Signal s;
    ASSERT_EQ(decode_signal(buf, kSignalBytes, s), SignalStatus::Ok) << got;
    ASSERT_LT(s.instrument, 2u);
    ASSERT_EQ(s.tick_seq, next[s.instrument]) << "writer " << s.instrument;
    ++next[s.instrument];
    ++got;
  }
  a.join();
  b.join();
  EXPECT_EQ(r.missed(), 0u);
  EXPECT_EQ(w.published(), 2 * kPerWriter);
  EXPECT_FALSE(r.poll(buf));
  shm_unlink(("/" + name).c_str());
}

// The exchange's own market (feed serve --seed 5 --instruments 20), regenerated: messages per instrument.
std::map<std::uint32_t, long long> market_counts(long messages) {
  tickinfer::feed::GeneratorConfig g;
  g.seed = 5;
  g.instruments = 20;
  tickinfer::feed::MarketGenerator gen(g);
  std::map<std::uint32_t, long long> n;
  for (long i = 0; i < messages; ++i) ++n[gen.next().instrument()];
  return n;
}

struct RunResult {
  std::string out;
  DecisionLogContents log;
  std::string udp_out, shm_out;
};

RunResult run_once(const std::string& tag, const std::string& threading_extra) {
  RunConfig rc;
  rc.threading = "rings";
  rc.threading_extra = threading_extra;
  rc.log = temp(tag + ".tdl");
  rc.shm = "tickinfer-agents-" + tag + "-" + std::to_string(getpid());
  rc.features_shm = "tickinfer-agents-f-" + tag + "-" + std::to_string(getpid());
  rc.ready = temp(tag + ".ready");
  rc.report = temp(tag + ".json");
  // A stateful model beside the tick-mode default: each agent keeps its instruments' LSTM state.
  rc.extra = "\n[[model]]\nname = \"lstm\"\npath = \"" + std::string(::tickinfer::test::source_dir()) +
             "/bench/models/lstm_window/model.keras\"\nmode = \"stream\"\ncheck_signature = false\n";
  const std::string cfg = write_config(rc, tag + ".toml");
  unlink(rc.ready.c_str());
  const std::string udp_ready = temp(tag + ".udp.attached");
  unlink(udp_ready.c_str());
  RunResult res;
  Process udp = start({"signals", "udp:127.0.0.1:" + std::to_string(base_port() + 3), "--summary", "--idle-exit", "3",
                       "--seconds", "90", "--ready-file", udp_ready},
                      temp(tag + ".udp.out"));
  EXPECT_TRUE(wait_file(udp_ready, 30));
  Process run = start({"run", cfg}, temp(tag + ".run.out"));
  EXPECT_TRUE(wait_file(rc.ready, 60)) << slurp(run.out_path);
  Process shm = start({"signals", "shm:" + rc.shm, "--from-start", "--summary", "--idle-exit", "3", "--seconds", "90"},
                      temp(tag + ".shm.out"));
  // The exchange's own clock, not the wall clock: bars (the LSTM's steps) fall the same in both runs.
  std::vector<std::string> args = serve_args(30000, 20000, true);
  args.erase(std::find(args.begin(), args.end(), "--wall-clock-ts"));
  Process serve = start(args, temp(tag + ".serve.out"));
  EXPECT_EQ(wait_for(serve, 60), 0) << slurp(serve.out_path);
  EXPECT_EQ(wait_for(run, 60), 0) << slurp(run.out_path);
  EXPECT_EQ(wait_for(udp, 60), 0);
  EXPECT_EQ(wait_for(shm, 60), 0);
  res.out = slurp(run.out_path);
  res.udp_out = slurp(udp.out_path);
  res.shm_out = slurp(shm.out_path);
  res.log = read_decision_log(rc.log);
  shm_unlink(("/" + rc.shm).c_str());
  shm_unlink(("/" + rc.features_shm).c_str());
  return res;
}

TEST(ComputeAgentsRun, TwoAgentsComputeWhatOneDoesEachEventOnce) {
  // Agent 0 owns instruments 1..7 (listed), agent 1 the rest (listed): the truth per agent is
  // the exchange's message count of those instruments.
  const RunResult two = run_once("two", "agents = 2\nagent_instruments = [[1, 2, 3, 4, 5, 6, 7], "
                                        "[8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]]\n");
  const RunResult one = run_once("one", "");
  const auto counts = market_counts(30000);
  long long truth0 = 0, truth1 = 0;
  for (const auto& [id, n] : counts) (id <= 7 ? truth0 : truth1) += n;
  ASSERT_EQ(truth0 + truth1, 30000);

  const std::string& out = two.out;
  EXPECT_NE(out.find("compute agents: 2"), std::string::npos) << out;
  EXPECT_NE(out.find("End of Session, everything delivered"), std::string::npos) << out;
  EXPECT_NE(out.find(" 0 lost;"), std::string::npos) << out;
  EXPECT_EQ(number_after(out, "allocations after ready: "), 0) << out;
  EXPECT_EQ(number_after(out, "agent 0 (cpu -1): 7 instruments, "), truth0) << out;
  EXPECT_EQ(number_after(out, "agent 1 (cpu -1): 13 instruments, "), truth1) << out;
  // Status lines: one per agent under each interval.
  EXPECT_NE(out.find("         agent 1 (cpu -1, 13 instruments)"), std::string::npos) << out;

  // Signals: the same count as one agent, numbered 1..n once across both agents, every one
  // received by the UDP listener and the shm ring reader.
  const long long n = number_after(out, "signals: model 'default' v1: ") + number_after(out, "signals: model 'lstm' v1: ");
  ASSERT_GT(n, 25000) << out;
  EXPECT_EQ(n, number_after(one.out, "signals: model 'default' v1: ") + number_after(one.out, "signals: model 'lstm' v1: "));
  EXPECT_EQ(number_after(two.udp_out, "signals: "), n) << two.udp_out;
  EXPECT_NE(two.udp_out.find("0 malformed, 0 sequence gaps"), std::string::npos) << two.udp_out;
  EXPECT_EQ(number_after(two.shm_out, "signals: "), n) << two.shm_out;
  EXPECT_NE(two.shm_out.find("0 sequence gaps"), std::string::npos) << two.shm_out;
  EXPECT_NE(two.shm_out.find("0 overwritten before read, 0 behind at exit"), std::string::npos) << two.shm_out;

  // One decision log from both agents: the models declared once, every signal once.
  EXPECT_FALSE(two.log.torn_tail) << two.log.tail_problem;
  EXPECT_EQ(two.log.models.size(), 2u);
  ASSERT_EQ(static_cast<long long>(two.log.decisions.size()), n);
  std::vector<std::uint64_t> seqs;
  for (const auto& d : two.log.decisions) seqs.push_back(d.signal_seq);
  std::sort(seqs.begin(), seqs.end());
  for (std::size_t i = 0; i < seqs.size(); ++i) ASSERT_EQ(seqs[i], i + 1);

  // Bit for bit what one agent computed for the same (model, tick), inputs included.
  std::map<std::pair<std::uint16_t, std::uint64_t>, const DecisionRecord*> by_tick;
  for (const auto& d : one.log.decisions) by_tick[{d.model, d.tick_seq}] = &d;
  ASSERT_EQ(by_tick.size(), one.log.decisions.size());
  std::size_t compared = 0, stream = 0;
  for (const auto& d : two.log.decisions) {
    const auto it = by_tick.find({d.model, d.tick_seq});
    ASSERT_NE(it, by_tick.end()) << "model " << d.model << " tick " << d.tick_seq;
    const DecisionRecord& e = *it->second;
    EXPECT_EQ(d.instrument, e.instrument);
    EXPECT_EQ(d.input_fingerprint, e.input_fingerprint) << "tick " << d.tick_seq;
    ASSERT_EQ(d.score_count, e.score_count);
    for (int k = 0; k < d.score_count; ++k) ASSERT_EQ(std::memcmp(&d.scores[k], &e.scores[k], 4), 0) << "tick " << d.tick_seq;
    ++compared;
    stream += d.model == 1;
  }
  EXPECT_EQ(compared, one.log.decisions.size());
  EXPECT_GT(stream, 100u);  // the LSTM's bars: its state went through many steps on both agents

  std::string rep;
  ASSERT_EQ(run_cli({"replay", temp("two.tdl"), "--model", kDefault + "/model.keras"}, rep), 0) << rep;
  EXPECT_NE(rep.find("differences: 0 scores differ by more than 0, 0 decisions change"), std::string::npos) << rep;
}

// `tickinfer pipeline agents` on a short run: both setups measured at every load, the table and
// the verdict printed, the exit status the verdict's, nothing allocated after ready.
TEST(ComputeAgentsBench, ShortRunMeasuresOneAndTwoAgentsAtEveryLoad) {
  const std::string json = temp("agents-bench.json");
  std::string out;
  const int rc = run_cli({"pipeline", "agents", "--models", std::string(::tickinfer::test::source_dir()) + "/bench/models",
                          "--features", kDefault + "/features.toml", "--loads", "0,10", "--rounds", "1", "--seconds", "1", "--rate", "20000",
                          // 50 instruments: each gets the ticks its features need to warm up in a second
                          "--instruments", "50", "--port",
                          std::to_string(base_port()), "--exchange-cpu", "-1", "--feed-cpu", "-1", "--feed-cpu-one",
                          "-1", "--cpu", "-1", "--slow-cpu", "-1", "--json", json},
                         out, 300);
  EXPECT_TRUE(rc == 0 || rc == 3) << out;
  EXPECT_EQ(rc == 0, out.find(": PASS") != std::string::npos) << out;
  EXPECT_NE(out.find("fast models' p99 at load 10 vs load 0: 1 agent "), std::string::npos) << out;
  EXPECT_NE(out.find("allocations after ready in all rounds: 0;"), std::string::npos) << out;
  std::ifstream in(json);
  const auto j = nlohmann::json::parse(in);
  ASSERT_EQ(j["loads"].size(), 2u);
  EXPECT_EQ(j["loads"][0]["slow_runs_per_s"].get<double>(), 0.0);  // load 0: no slow model
  EXPECT_GT(j["loads"][1]["slow_runs_per_s"].get<double>(), 100.0);
  for (const auto& l : j["loads"]) {
    EXPECT_GT(l["one_agent"]["fast_p99_ns"].get<long long>(), 0);
    EXPECT_GT(l["two_agents"]["fast_p99_ns"].get<long long>(), 0);
  }
}

}  // namespace
