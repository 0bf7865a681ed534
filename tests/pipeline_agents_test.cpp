// The pipeline's agents and their time: every duty cycle gets its time as now_ns from an injected
// clock, so a ManualClock moves status intervals, stop conditions, feed silence and the decision
// log's flush interval without a sleep. The compute side runs here without a feed or threads
// (market events from the exchange's generator, delivered as the feed would); the whole Pipeline
// runs with its real threads and sockets but a ManualClock. The decision log's write errors are
// checked against what the file really holds, on a destination that fills up (RLIMIT_FSIZE).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "features/feature_pipeline.hpp"
#include "feed/market_generator.hpp"
#include "pipeline/agents.hpp"
#include "pipeline/clock.hpp"
#include "pipeline/metrics_text.hpp"
#include "pipeline/model_router.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/signal_publisher.hpp"
#include "pipeline/tick_processor.hpp"
#include "pipeline_test_support.hpp"
#include "stats/clock.hpp"

using namespace tickinfer;
using namespace tickinfer::pipeline;
using namespace pipeline_test;

namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

// The default model on the bundled spec, no UDP, no feed lines beyond an ephemeral line A.
PipelineConfig base_config(const std::string& name, RunConfig rc = {}) {
  rc.udp = false;
  PipelineConfig cfg = load_pipeline_config(write_config(rc, name));
  cfg.quiet = true;
  cfg.line_a = {"127.0.0.1", 0};
  cfg.line_b = {"", 0};
  cfg.recovery = {"", 0};
  cfg.status_interval_ns = kSecond;
  return cfg;
}

PipelineConfig config_with_log(const std::string& name, FlushPolicy flush) {
  RunConfig rc;
  rc.log = temp(name + ".tdl");
  PipelineConfig cfg = base_config(name + ".toml", rc);
  cfg.flush = flush;
  cfg.flush_interval_ns = 10'000'000;
  cfg.log_writer_thread = false;  // the writes happen where the test can see them
  return cfg;
}

// The compute side of a pipeline as the Pipeline wires it, driven by the test's own thread.
struct ComputeSide {
  explicit ComputeSide(PipelineConfig c, std::size_t max_intervals = 64)
      : cfg(std::move(c)),
        plan(plan_run_features(cfg)),
        features(plan.spec),
        router(cfg, plan, features),
        shared(cfg),
        out(cfg, router.logged_models(), router.widest_input(), stats, shared),
        compute(features, router, out, stats, cfg.status_interval_ns, max_intervals, status.lost_messages) {}

  // n market events, in sequence, as the feed delivers them (kernel receive = now).
  void deliver(int n) {
    for (int i = 0; i < n; ++i) compute.on_event(next_event());
    compute.end_batch();
  }
  feed::FeedEvent next_event() {
    feed::FeedEvent e;
    e.seq = ++seq;
    e.event = market.next();
    e.ts.kernel_rx_ns = e.ts.sequenced_ns = e.ts.delivered_ns = stats::realtime_ns();
    return e;
  }

  PipelineConfig cfg;
  features::FeaturePlan plan;
  features::FeaturePipeline features;
  ModelRouter router;
  StageStats stats;
  RunStatus status;
  SharedSignals shared;
  SignalPublisher out;
  TickProcessor compute;
  feed::MarketGenerator market{feed::GeneratorConfig{7, 20}};
  std::uint64_t seq = 0;
};

// While it lives, files of this process cannot grow past `bytes` (a destination that is full):
// write(2) fails with EFBIG. SIGXFSZ is ignored meanwhile, so the failure is an error code.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &old_);
    old_handler_ = signal(SIGXFSZ, SIG_IGN);
    rlimit r = old_;
    r.rlim_cur = bytes;
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &r), 0);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &old_);
    signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit old_{};
  sighandler_t old_handler_ = SIG_DFL;
};

off_t file_size(const std::string& path) {
  struct stat st{};
  return stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

// Waits (real time, bounded) for another thread to make `done` true.
template <class F>
bool eventually(F done, double timeout_s = 20) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// ---- TickProcessor: status intervals on the agent's clock ----

// [[model]] device = "cuda" on a machine whose GPU is not there (CI, the development machines):
// the router refuses at start, naming the model and why, and never runs it on the CPU instead.
TEST(PipelineAgents, AModelOnAMissingGpuFailsAtStartNamingIt) {
  PipelineConfig cfg = base_config("missing_gpu.toml");
  cfg.models.at(0).device = "cuda:7";
  const features::FeaturePlan plan = plan_run_features(cfg);
  features::FeaturePipeline features(plan.spec);
  try {
    ModelRouter router(cfg, plan, features);
    FAIL() << "compiled onto a GPU that is not there";
  } catch (const tickinfer::Error& e) {
    const std::string why = e.what();
    EXPECT_NE(why.find("model '" + cfg.models[0].name + "'"), std::string::npos) << why;
    EXPECT_NE(why.find("--device cuda"), std::string::npos) << why;
  }
}

TEST(PipelineAgents, StatusIntervalClosesWhenTheClockReachesItsEnd) {
  ComputeSide cs(base_config("intervals.toml"));
  cs.compute.start(0);
  cs.deliver(3000);
  const std::uint64_t signals = cs.out.signals();
  ASSERT_GT(signals, 0u);
  EXPECT_EQ(cs.compute.housekeeping(kSecond - 1, true), 0);
  EXPECT_EQ(cs.compute.published(), 0u);
  EXPECT_EQ(cs.compute.housekeeping(kSecond, true), 1);
  ASSERT_EQ(cs.compute.published(), 1u);
  const IntervalSample& first = cs.compute.intervals()[0];
  EXPECT_DOUBLE_EQ(first.t_s, 1.0);
  EXPECT_EQ(first.ticks, 3000u);
  EXPECT_EQ(first.signals, signals);
  EXPECT_GT(first.rx_p99_ns, 0);

  // A clock that jumps 2.5 intervals closes one, and the next ends one interval after the jump.
  cs.deliver(500);
  EXPECT_EQ(cs.compute.housekeeping(3 * kSecond + kSecond / 2, true), 1);
  ASSERT_EQ(cs.compute.published(), 2u);
  EXPECT_DOUBLE_EQ(cs.compute.intervals()[1].t_s, 3.5);
  EXPECT_EQ(cs.compute.intervals()[1].ticks, 500u);
  EXPECT_EQ(cs.compute.intervals()[1].signals, cs.out.signals() - signals);
  EXPECT_EQ(cs.compute.housekeeping(4 * kSecond + kSecond / 2 - 1, true), 0);
  EXPECT_EQ(cs.compute.housekeeping(4 * kSecond + kSecond / 2, true), 1);
  EXPECT_EQ(cs.compute.intervals()[2].ticks, 0u);
}

// [shard]: an event of an instrument another shard computes is counted as skipped; one of an
// instrument in no shard at all is not (the features count it as unknown).
TEST(PipelineAgents, OnlyOtherShardsInstrumentsCountAsSkipped) {
  PipelineConfig cfg = base_config("shard_count.toml", RunConfig{});
  cfg.shard.index = 0;
  cfg.shard.count = 2;  // this shard: the even instruments of 1-20
  ComputeSide side(cfg);
  std::vector<std::uint32_t> others;
  for (std::uint32_t id = 1; id <= 20; id += 2) others.push_back(id);
  side.compute.set_other_shards(others);
  auto quote_of = [&](std::uint32_t instrument) {
    feed::FeedEvent e;
    e.seq = ++side.seq;
    md::Quote q;
    q.instrument = instrument;
    q.exchange_ts_ns = 1'700'000'000'000'000'000 + static_cast<std::int64_t>(side.seq);
    q.bid_price = 100'00000000;
    q.ask_price = 100'01000000;
    q.bid_size = q.ask_size = 10;
    e.event = md::Event::of(q);
    e.ts.kernel_rx_ns = e.ts.sequenced_ns = e.ts.delivered_ns = stats::realtime_ns();
    return e;
  };
  for (std::uint32_t id : {3u, 5u, 999u, 4u, 17u, 1000u}) side.compute.on_event(quote_of(id));
  EXPECT_EQ(side.compute.other_shard_events(), 3u);  // 3, 5, 17; not 999 or 1000 (in no shard), not 4 (ours)
  EXPECT_EQ(side.compute.events(), 6u);
}

TEST(PipelineAgents, IntervalsBeyondTheCapacityAreNotPublished) {
  ComputeSide cs(base_config("capacity.toml"), 2);
  cs.compute.start(0);
  for (int s = 1; s <= 5; ++s) cs.compute.housekeeping(s * kSecond, true);
  EXPECT_EQ(cs.compute.published(), 2u);
  EXPECT_DOUBLE_EQ(cs.compute.intervals()[1].t_s, 2.0);
}

// ---- SignalPublisher: the decision log's flush interval and its write errors ----

TEST(PipelineAgents, DecisionLogFlushIntervalRunsOnTheAgentClock) {
  ComputeSide cs(config_with_log("flush_clock", FlushPolicy::Interval));
  const std::uint64_t declared = cs.out.totals().decision_log_bytes;  // header and model declaration
  EXPECT_EQ(static_cast<off_t>(declared), file_size(cs.cfg.log_path));
  cs.compute.start(0);
  cs.compute.begin_cycle(0);  // the records of this cycle are appended at clock time 0
  cs.deliver(3000);
  ASSERT_GT(cs.out.signals(), 0u);
  cs.compute.housekeeping(10'000'000 - 1, true);
  EXPECT_EQ(cs.out.totals().decision_log_bytes, declared);  // not yet 10 ms old on the clock
  cs.compute.housekeeping(10'000'000, true);
  const WriterTotals t = cs.out.totals();
  EXPECT_GT(t.decision_log_bytes, declared);
  EXPECT_EQ(static_cast<off_t>(t.decision_log_bytes), file_size(cs.cfg.log_path));
  EXPECT_EQ(t.decision_log_records, cs.out.signals() + 1);
  EXPECT_EQ(t.decision_log_write_errors, 0u);
  EXPECT_EQ(read_decision_log(cs.cfg.log_path).decisions.size(), cs.out.signals());
}

TEST(PipelineAgents, DecisionLogWriteErrorsMatchWhatTheFullFileMisses) {
  ComputeSide cs(config_with_log("full_log", FlushPolicy::Record));  // one write(2) per record
  const off_t limit = file_size(cs.cfg.log_path) + 1000;
  {
    FileSizeLimit full(static_cast<rlim_t>(limit));
    cs.deliver(3000);
  }
  const std::uint64_t signals = cs.out.signals();
  ASSERT_GT(signals, 100u);  // far more than 1000 bytes of records
  const WriterTotals t = cs.out.totals();
  const DecisionLogContents c = read_decision_log(cs.cfg.log_path);
  EXPECT_EQ(file_size(cs.cfg.log_path), limit);
  EXPECT_GT(t.decision_log_write_errors, 0u);
  EXPECT_EQ(t.decision_log_write_errors, signals - c.decisions.size());  // every missing record counted once
  EXPECT_EQ(t.decision_log_bytes, c.valid_bytes);                       // what reached the file whole
  EXPECT_EQ(t.decision_log_last_errno, EFBIG);

  // Reported on: the next status interval and the metrics text made from it.
  cs.compute.start(0);
  cs.compute.housekeeping(kSecond, true);
  ASSERT_EQ(cs.compute.published(), 1u);
  const IntervalSample& s = cs.compute.intervals()[0];
  EXPECT_EQ(s.log_write_errors, t.decision_log_write_errors);
  const std::string metrics = format_metrics(true, &s, 0);
  EXPECT_NE(metrics.find("\ntickinfer_decision_log_write_errors_total " + std::to_string(t.decision_log_write_errors) + "\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("# TYPE tickinfer_decision_log_write_errors_total counter\n"), std::string::npos);
}

// ---- Agents, one duty cycle at a time ----

TEST(PipelineAgents, ComputeAgentDrainsAtMost256EventsPerCycle) {
  ComputeSide cs(base_config("compute_agent.toml"));
  SpscRing<feed::FeedEvent> ring(1024);
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(ring.try_push(cs.next_event()));
  ComputeAgent agent(ring, cs.compute, cs.status);
  cs.compute.start(0);
  EXPECT_EQ(agent.do_work(7), 256);
  EXPECT_EQ(cs.compute.events(), 256u);
  EXPECT_EQ(cs.status.last_event_ns.load(), 7);
  EXPECT_EQ(agent.do_work(8), 44);
  EXPECT_EQ(agent.do_work(9), 0);
  EXPECT_EQ(cs.status.last_event_ns.load(), 8);  // the last cycle that processed an event
  EXPECT_EQ(cs.compute.events(), 300u);
  ASSERT_TRUE(ring.try_push(cs.next_event()));
  agent.on_close();  // drains what the feed already delivered
  EXPECT_EQ(cs.compute.events(), 301u);
}

TEST(PipelineAgents, SupervisorStopsOnFeedSilenceOnlyAfterTwiceTheTimeout) {
  PipelineConfig cfg = base_config("silence.toml");
  cfg.feed_silence_s = 10;
  ComputeSide cs(cfg);
  std::atomic<bool> stop{false}, ready{true};
  SupervisorAgent sup(cs.cfg, cs.status, stop, {&cs.compute}, {{-1, 20}}, ready, nullptr, nullptr, 0);
  cs.status.last_event_ns.store(0);
  sup.do_work(10 * kSecond);
  EXPECT_FALSE(sup.degraded());
  sup.do_work(10 * kSecond + 1'000'000);
  EXPECT_TRUE(sup.degraded());
  EXPECT_EQ(sup.degraded_reason(), "feed silent for 10001 ms");
  EXPECT_EQ(sup.stop_reason(), StopReason::None);
  sup.do_work(20 * kSecond);
  EXPECT_EQ(sup.stop_reason(), StopReason::None);
  cs.status.last_event_ns.store(15 * kSecond);  // data again: the silence restarts from there
  sup.do_work(35 * kSecond);
  EXPECT_EQ(sup.stop_reason(), StopReason::None);
  sup.do_work(35 * kSecond + 1'000'000);
  EXPECT_EQ(sup.stop_reason(), StopReason::FeedSilent);
  EXPECT_EQ(sup.degraded_reason(), "feed silent for 20001 ms: stopped");
}

TEST(PipelineAgents, SupervisorStopsAfterTheConfiguredSecondsOfTheClock) {
  PipelineConfig cfg = base_config("seconds.toml");
  cfg.seconds = 5;
  cfg.feed_silence_s = 100;
  ComputeSide cs(cfg);
  std::atomic<bool> stop{false}, ready{true};
  const std::int64_t start = 123'456;
  SupervisorAgent sup(cs.cfg, cs.status, stop, {&cs.compute}, {{-1, 20}}, ready, nullptr, nullptr, start);
  cs.status.last_event_ns.store(start);
  sup.do_work(start + 5 * kSecond - 1);
  EXPECT_EQ(sup.stop_reason(), StopReason::None);
  sup.do_work(start + 5 * kSecond);
  EXPECT_EQ(sup.stop_reason(), StopReason::Seconds);
  EXPECT_FALSE(sup.degraded());
}

TEST(PipelineAgents, SupervisorStopsOnRequestAndAtEndOfSession) {
  ComputeSide cs(base_config("requests.toml"));
  std::atomic<bool> stop{false}, ready{true};
  SupervisorAgent on_request(cs.cfg, cs.status, stop, {&cs.compute}, {{-1, 20}}, ready, nullptr, nullptr, 0);
  on_request.do_work(1);
  EXPECT_EQ(on_request.stop_reason(), StopReason::None);
  stop.store(true);
  on_request.do_work(2);
  EXPECT_EQ(on_request.stop_reason(), StopReason::Requested);
  stop.store(false);
  SupervisorAgent at_end(cs.cfg, cs.status, stop, {&cs.compute}, {{-1, 20}}, ready, nullptr, nullptr, 0);
  cs.status.end_of_session.store(true);
  at_end.do_work(1);
  EXPECT_EQ(at_end.stop_reason(), StopReason::EndOfSession);
}

TEST(PipelineAgents, SupervisorReportsEachPublishedIntervalOnce) {
  ComputeSide cs(base_config("report.toml"));
  std::atomic<bool> stop{false}, ready{true};
  SupervisorAgent sup(cs.cfg, cs.status, stop, {&cs.compute}, {{-1, 20}}, ready, nullptr, nullptr, 0);
  cs.compute.start(0);
  EXPECT_EQ(sup.do_work(0), 0);
  cs.compute.housekeeping(kSecond, true);
  cs.compute.housekeeping(2 * kSecond, true);
  EXPECT_EQ(sup.do_work(2 * kSecond), 2);
  EXPECT_EQ(sup.do_work(2 * kSecond), 0);
}

TEST(PipelineAgents, RefitAgentWorksWhileRowsWait) {
  // The bundled spec with rolling standardization: every accepted row goes to the refit side.
  std::string spec = slurp(kDefault + "/features.toml");
  const auto a = spec.find("mode = \"fixed\""), b = spec.find("[[feature]]");
  ASSERT_NE(a, std::string::npos);
  spec.replace(a, b - a, "mode = \"rolling\"\nwindow = 50\nrefit_every = 10\n\n");
  const std::string path = temp("rolling_features.toml");
  std::ofstream(path) << spec;
  features::FeaturePipeline fp(features::load_feature_spec(path));
  RefitAgent refit(fp);
  EXPECT_EQ(refit.do_work(0), 0);
  feed::GeneratorConfig g;
  g.instruments = 20;
  g.mean_gap_ns = 2'000'000;  // several 10 ms bars per instrument
  feed::MarketGenerator market(g);
  for (int i = 0; i < 4000; ++i) fp.on_event(market.next(), 0);
  int work = 0, cycles = 0;
  for (int w; (w = refit.do_work(0)) > 0 && cycles < 100000; ++cycles) work += w;
  EXPECT_GT(work, 0);
  EXPECT_EQ(refit.do_work(0), 0);  // drained
}

// ---- The whole Pipeline, its threads running on a ManualClock ----

// Pipeline::run on its own thread, the clock moved by the test.
struct ClockedRun {
  ClockedRun(const PipelineConfig& cfg, ManualClock& clock) : clock(clock), pipeline(cfg, clock) {
    thread = std::thread([this] {
      pipeline.run(stop);
      returned.store(true);
    });
    EXPECT_TRUE(eventually([this] { return pipeline.polling(); }));  // run() has read its start time
  }
  ~ClockedRun() {
    if (thread.joinable()) join();
  }
  // Sets the clock and waits until `k` status intervals are published.
  bool advance_to(std::int64_t ns, std::size_t k) {
    clock.set_ns(ns);
    return eventually([this, k] { return pipeline.intervals_published() >= k; });
  }
  // True if run() returned by itself; otherwise it is stopped after a real-time guard.
  bool join(double timeout_s = 20) {
    const bool by_itself = eventually([this] { return returned.load(); }, timeout_s);
    stop.store(true);
    thread.join();
    return by_itself;
  }
  ManualClock& clock;
  Pipeline pipeline;
  std::atomic<bool> stop{false}, returned{false};
  std::thread thread;
};

class PipelineOnAManualClock : public ::testing::TestWithParam<const char*> {
 protected:
  PipelineConfig config(const std::string& name) {
    PipelineConfig cfg = base_config(std::string(GetParam()) + "_" + name);
    cfg.threading = std::string(GetParam()) == "rings" ? ThreadingMode::Rings : ThreadingMode::Inline;
    return cfg;
  }
};

TEST_P(PipelineOnAManualClock, StopsOnFeedSilenceMeasuredOnTheClock) {
  PipelineConfig cfg = config("silent.toml");
  cfg.feed_silence_s = 10;
  ManualClock clock(0);
  ClockedRun run(cfg, clock);
  clock.set_ns(9 * kSecond);  // silent, not yet degraded: the run goes on
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  EXPECT_FALSE(run.returned.load());
  clock.set_ns(20 * kSecond + 1'000'000);
  ASSERT_TRUE(run.join()) << "the silence on the clock did not stop the run";
  const RunTotals t = run.pipeline.totals();
  EXPECT_TRUE(t.degraded);
  EXPECT_EQ(t.degraded_reason, "feed silent for 20001 ms: stopped");
  EXPECT_DOUBLE_EQ(t.seconds, 20.001);
  EXPECT_EQ(t.events, 0u);
  EXPECT_FALSE(t.end_of_session);
}

TEST_P(PipelineOnAManualClock, StopsAfterTheConfiguredSecondsWithAnIntervalPerClockSecond) {
  PipelineConfig cfg = config("seconds.toml");
  cfg.seconds = 3;
  cfg.feed_silence_s = 100;
  ManualClock clock(1000 * kSecond);
  ClockedRun run(cfg, clock);
  // Nothing here allocates while the run is on (the allocation counts are compared below).
  const bool first = run.advance_to(1001 * kSecond, 1);
  const bool second = run.advance_to(1002 * kSecond, 2);
  const bool running = !run.returned.load();
  clock.set_ns(1003 * kSecond);
  ASSERT_TRUE(run.join()) << "[run] seconds on the clock did not stop the run";
  ASSERT_TRUE(first && second);
  EXPECT_TRUE(running);
  EXPECT_DOUBLE_EQ(run.pipeline.intervals()[0].t_s, 1.0);
  EXPECT_DOUBLE_EQ(run.pipeline.intervals()[1].t_s, 2.0);
  EXPECT_EQ(run.pipeline.intervals()[1].ticks, 0u);
  const RunTotals t = run.pipeline.totals();
  EXPECT_DOUBLE_EQ(t.seconds, 3.0);
  EXPECT_FALSE(t.degraded) << t.degraded_reason;
  EXPECT_EQ(t.allocations_at_end, t.allocations_at_ready);
}

INSTANTIATE_TEST_SUITE_P(Threading, PipelineOnAManualClock, ::testing::Values("inline", "rings"));

// A decision log whose destination is full from the first record: the run reports the failed
// write in its totals, its run report and its status interval (hence its metrics).
TEST(PipelineAgents, FullDecisionLogDestinationIsReportedByTheRun) {
  PipelineConfig cfg = config_with_log("full_destination", FlushPolicy::Interval);
  ManualClock clock(0);
  std::unique_ptr<ClockedRun> run;
  {
    FileSizeLimit full(16);  // the 8-byte file header fits, the model declaration does not
    run = std::make_unique<ClockedRun>(cfg, clock);
  }
  ASSERT_TRUE(run->advance_to(kSecond, 1));
  EXPECT_EQ(run->pipeline.intervals()[0].log_write_errors, 1u);
  clock.set_ns(21 * kSecond);  // past twice the feed silence: the run stops
  ASSERT_TRUE(run->join());
  const RunTotals t = run->pipeline.totals();
  EXPECT_TRUE(t.decision_log_on);
  EXPECT_EQ(t.decision_log_write_errors, 1u);
  EXPECT_EQ(t.decision_log_last_errno, EFBIG);
  EXPECT_EQ(t.decision_log_records, 1u);  // the declaration, appended but not written
  EXPECT_EQ(t.decision_log_bytes, 8u);
  const DecisionLogContents c = read_decision_log(cfg.log_path);
  EXPECT_EQ(c.file_bytes, 16u);  // the header and the first 8 bytes of the declaration
  EXPECT_TRUE(c.torn_tail);
  EXPECT_TRUE(c.models.empty());
  const auto j = nlohmann::json::parse(run->pipeline.report_json());
  EXPECT_EQ(j["totals"]["decision_log_write_errors"].get<long long>(), 1);
  EXPECT_EQ(j["totals"]["decision_log_last_error"].get<std::string>(), std::strerror(EFBIG));
  EXPECT_EQ(j["intervals"][0]["decision_log_write_errors"].get<long long>(), 1);
}

TEST(PipelineAgents, TheShmRingCountsEverySignalItPublishes) {
  RunConfig rc;
  rc.shm = "tickinfer-agents-shm-" + std::to_string(getpid());
  ComputeSide cs(base_config("shm_count.toml", rc));
  cs.compute.start(0);
  cs.deliver(3000);
  const std::uint64_t signals = cs.out.signals();
  ASSERT_GT(signals, 0u);
  EXPECT_EQ(cs.out.totals().shm_published, signals);
  shm_unlink(("/" + rc.shm).c_str());
}

TEST(PipelineAgents, WriterCountsReachTheRunReport) {
  RunConfig rc;
  rc.log = temp("counts.tdl");
  rc.shm = "tickinfer-agents-" + std::to_string(getpid());
  PipelineConfig cfg = base_config("counts.toml", rc);
  cfg.seconds = 1;
  ManualClock clock(0);
  ClockedRun run(cfg, clock);
  clock.set_ns(kSecond);
  ASSERT_TRUE(run.join());
  const RunTotals t = run.pipeline.totals();
  EXPECT_TRUE(t.shm_on);
  EXPECT_EQ(t.shm_published, t.signals);
  EXPECT_TRUE(t.decision_log_on);
  EXPECT_EQ(t.decision_log_records, 1u);  // the model declaration: no market data came
  EXPECT_EQ(static_cast<off_t>(t.decision_log_bytes), file_size(cfg.log_path));
  EXPECT_EQ(t.decision_log_write_errors, 0u);
  const auto j = nlohmann::json::parse(run.pipeline.report_json());
  for (const char* key : {"shm_published", "decision_log_records", "decision_log_bytes", "decision_log_flushes",
                          "decision_log_write_errors", "decision_log_dropped", "decision_log_writer_waits",
                          "tx_stamps_stray"})
    EXPECT_TRUE(j["totals"].contains(key)) << key;
  EXPECT_EQ(j["totals"]["decision_log_bytes"].get<long long>(), file_size(cfg.log_path));
  shm_unlink(("/" + rc.shm).c_str());
}

}  // namespace
