// The whole product as real processes on loopback: `tickinfer feed serve` (lines A and B with loss,
// reordering and duplicates, re-requests) -> `tickinfer run` on the bundled default model ->
// signals read by a UDP listener and a shared-memory reader (two more processes); counts match,
// nothing allocates after ready, the decision log replays with zero differences through the same
// model and with differences through the changed one (v2). Then a run killed with SIGKILL, and
// the ways a run must refuse to start.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <sys/stat.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "features/feature_spec.hpp"
#include "features/shm_feature_store.hpp"
#include "pipeline/decision_log.hpp"
#include "pipeline/signal_format.hpp"
#include "pipeline_test_support.hpp"
#include "support/source_paths.hpp"

using namespace pipeline_test;

namespace {

long long signals_of(const std::string& run_out) { return number_after(run_out, "signals: model 'default' v1: "); }
long long received(const std::string& reader_out) { return number_after(reader_out, "signals: "); }

// The feature store the run left behind, read by this (another) process, against two channels
// the run wrote independently: its counts (stdout, report) and the decision log's full input
// vectors. Each instrument's entry must be the vector of its last tick that made a signal:
// same tick sequence, and standardized with the spec's fixed parameters it is the logged input.
void check_feature_store(const std::string& name, const std::string& out, const nlohmann::json& report,
                         const tickinfer::pipeline::DecisionLogContents& log) {
  using namespace tickinfer::features;
  const FeatureSpec spec = load_feature_spec(kDefault + "/features.toml");
  const ShmFeatureReader store("/" + name, spec);
  ASSERT_EQ(store.slots(), spec.instruments.size());
  ASSERT_EQ(store.names().size(), spec.width());
  for (std::size_t f = 0; f < spec.width(); ++f) EXPECT_EQ(store.names()[f], spec.features[f].name);
  EXPECT_EQ(store.set_name(), spec.name);
  EXPECT_EQ(store.ttl_ns(), 60'000'000'000LL);
  const long long published = number_after(out, "feature store shm:" + name + ": ");
  EXPECT_EQ(report["totals"]["features_published"].get<long long>(), published);
  // Every accepted tick (30,000 less the trades that came before an instrument's first quote).
  EXPECT_GT(published, 29900) << out;
  EXPECT_LE(published, 30000) << out;
  std::vector<const tickinfer::pipeline::DecisionRecord*> last(spec.instruments.size(), nullptr);
  for (const auto& d : log.decisions) {
    for (std::size_t s = 0; s < spec.instruments.size(); ++s)
      if (spec.instruments[s] == d.instrument) last[s] = &d;
  }
  long long updates = 0;
  std::vector<double> v(spec.width());
  for (std::size_t s = 0; s < store.slots(); ++s) {
    EXPECT_EQ(store.instrument_at(s), spec.instruments[s]);
    ShmRowMeta m;
    ASSERT_EQ(store.read(s, v.data(), &m), ShmRead::Ok) << s;
    updates += static_cast<long long>(m.updates);
    EXPECT_NE(m.flags & kShmAllWarm, 0u);
    ASSERT_NE(last[s], nullptr) << s;
    // The default model signals on every accepted tick once the features are warm, so the last
    // signal of an instrument is its last publication.
    ASSERT_EQ(m.tick_seq, last[s]->tick_seq) << "instrument " << spec.instruments[s];
    EXPECT_EQ(m.ts_ns, last[s]->exchange_ts_ns);
    ASSERT_EQ(last[s]->inputs.size(), spec.width());
    for (std::size_t f = 0; f < spec.width(); ++f) {
      const double z = (v[f] - spec.standardize.mean[f]) / spec.standardize.scale[f];
      EXPECT_EQ(static_cast<float>(z), last[s]->inputs[f]) << "instrument " << spec.instruments[s] << " feature " << f;
    }
  }
  EXPECT_EQ(updates, published);
}

void check_full_run(const std::string& threading, const std::string& udp_batch) {
  RunConfig rc;
  rc.threading = threading;
  rc.udp_batch = udp_batch;
  rc.log = temp(threading + ".tdl");
  rc.shm = "tickinfer-e2e-" + std::to_string(getpid());
  rc.features_shm = "tickinfer-e2e-features-" + std::to_string(getpid());
  rc.features_ring = "tickinfer-e2e-ring-" + std::to_string(getpid());
  rc.ready = temp(threading + ".ready");
  rc.report = temp(threading + ".json");
  const std::string cfg = write_config(rc, threading + ".toml");
  unlink(rc.ready.c_str());

  const std::string udp_ready = temp("udp.attached");
  unlink(udp_ready.c_str());
  Process udp = start({"signals", "udp:127.0.0.1:" + std::to_string(base_port() + 3), "--summary", "--idle-exit", "3",
                       "--seconds", "90", "--ready-file", udp_ready},
                      temp("udp.out"));
  ASSERT_TRUE(wait_file(udp_ready, 30));
  Process run = start({"run", cfg}, temp(threading + ".run.out"));
  ASSERT_TRUE(wait_file(rc.ready, 60)) << slurp(run.out_path);
  Process shm = start({"signals", "shm:" + rc.shm, "--from-start", "--summary", "--idle-exit", "3", "--seconds", "90"},
                      temp("shm.out"));
  // Two consumers of the feature ring at once, each at its own position.
  Process ring1 = start({"features", "--watch", "ring:" + rc.features_ring, "--from-start", "--summary", "--idle-exit",
                         "3"}, temp("ring1.out"));
  Process ring2 = start({"features", "--watch", "ring:" + rc.features_ring, "--from-start", "--summary", "--idle-exit",
                         "3"}, temp("ring2.out"));
  Process serve = start(serve_args(30000, 20000, true), temp("serve.out"));
  ASSERT_EQ(wait_for(serve, 60), 0) << slurp(serve.out_path);
  ASSERT_EQ(wait_for(run, 60), 0) << slurp(run.out_path);
  ASSERT_EQ(wait_for(udp, 60), 0);
  ASSERT_EQ(wait_for(shm, 60), 0);
  ASSERT_EQ(wait_for(ring1, 60), 0) << slurp(ring1.out_path);
  ASSERT_EQ(wait_for(ring2, 60), 0) << slurp(ring2.out_path);
  const std::string out = slurp(run.out_path);
  const long long n = signals_of(out);
  ASSERT_GT(n, 25000) << out;  // 30,000 ticks; a few before each instrument's features are warm
  EXPECT_NE(out.find("30000 ticks"), std::string::npos) << out;
  EXPECT_NE(out.find("End of Session, everything delivered"), std::string::npos) << out;
  EXPECT_NE(out.find(" 0 lost;"), std::string::npos) << out;   // every gap filled (both lines or re-request)
  EXPECT_EQ(number_after(out, "allocations after ready: "), 0) << out;
  // Where the threads ran: the CPUs this process may use, and no pinning (the config sets no cpu).
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  ASSERT_EQ(sched_getaffinity(0, sizeof cpus, &cpus), 0);
  EXPECT_EQ(number_after(out, "cpus: "), CPU_COUNT(&cpus)) << out;
  EXPECT_NE(out.find(threading == "inline" ? "the pipeline thread not pinned" : "feed thread not pinned, compute thread not pinned"),
            std::string::npos) << out;
  EXPECT_EQ(received(slurp(udp.out_path)), n) << slurp(udp.out_path);
  EXPECT_NE(slurp(udp.out_path).find("0 malformed, 0 sequence gaps"), std::string::npos);
  // udp_batch: one datagram per signal, or the signals of one inbound packet (1-4 messages) together.
  // With packet batching the tick-mode MLP runs once per datagram (Plan::run_rows), and the
  // replay below (Plan::run per decision) still finds every score equal.
  const long long datagrams = number_after(slurp(udp.out_path), ", in ");
  const long long row_calls = number_after(out, "computed in ");
  if (udp_batch == "message") {
    EXPECT_EQ(datagrams, n) << slurp(udp.out_path);
    EXPECT_EQ(row_calls, -1) << out;
  } else {
    EXPECT_LT(datagrams, n * 3 / 4) << slurp(udp.out_path);
    EXPECT_GT(row_calls, 0) << out;
    EXPECT_LT(row_calls, n * 3 / 4) << out;
  }
  EXPECT_EQ(received(slurp(shm.out_path)), n) << slurp(shm.out_path);
  EXPECT_NE(slurp(shm.out_path).find("0 overwritten before read, 0 behind at exit"), std::string::npos) << slurp(shm.out_path);

  // The run report: per-stage histograms, steady-state allocations, feed statistics.
  std::ifstream rf(rc.report);
  const auto j = nlohmann::json::parse(rf);
  EXPECT_EQ(j["totals"]["allocations_in_steady_state"].get<long long>(), 0);
  EXPECT_EQ(j["totals"]["signals"].get<long long>(), n);
  EXPECT_TRUE(j["totals"]["wall_clock_exchange"].get<bool>());
  EXPECT_EQ(j["stages"].size(), 11u);
  // Every UDP datagram's kernel transmit stamp came back and matched: one per signal in both stages.
  EXPECT_TRUE(j["totals"]["tx_timestamps"].get<bool>());
  EXPECT_EQ(j["totals"]["tx_stamps_missing"].get<long long>(), 0);
  EXPECT_EQ(j["totals"]["tx_stamps_matched"].get<long long>(), datagrams);
  EXPECT_GT(j["feed"]["duplicates_dropped"].get<long long>(), 25000);  // every message came twice
  EXPECT_GT(j["feed"]["recovered_messages"].get<long long>(), 0);       // 0.04% lost on both lines: re-requested
  for (const auto& s : j["stages"]) {
    if (s["stage"] == "model" || s["stage"] == "rx_to_tx" || s["stage"] == "end_to_end_tx") {
      EXPECT_EQ(s["count"].get<long long>(), n) << s["stage"];
    }
    if (s["stage"] == "book") {
      EXPECT_EQ(s["count"].get<long long>(), 0);  // Q/T messages have no books
    }
  }

  // The decision log: every signal, in order, and it replays.
  const auto log = tickinfer::pipeline::read_decision_log(rc.log);
  EXPECT_FALSE(log.torn_tail);
  ASSERT_EQ(static_cast<long long>(log.decisions.size()), n);
  for (std::size_t i = 0; i < log.decisions.size(); ++i) ASSERT_EQ(log.decisions[i].signal_seq, i + 1);
  std::string rep;
  ASSERT_EQ(run_cli({"replay", rc.log, "--model", kDefault + "/model.keras"}, rep), 0) << rep;
  EXPECT_NE(rep.find("differences: 0 scores differ by more than 0, 0 decisions change"), std::string::npos) << rep;
  EXPECT_EQ(number_after(rep, "decisions: "), n);
  ASSERT_EQ(run_cli({"replay", rc.log, "--model", kDefault + "/model_v2/model.keras", "--examples", "3"}, rep), 0) << rep;
  EXPECT_GT(number_after(rep, "differences: "), n / 2) << rep;  // a retrained model moves nearly every score
  EXPECT_NE(rep.find("first differences:"), std::string::npos) << rep;
  EXPECT_NE(rep.find("largest |diff|"), std::string::npos) << rep;

  check_feature_store(rc.features_shm, out, j, log);
  // Every vector the store got also went through the ring, and both consumers read all of them.
  const long long ring_published = number_after(out, "feature ring shm:" + rc.features_ring + ": ");
  EXPECT_EQ(ring_published, number_after(out, "feature store shm:" + rc.features_shm + ": ")) << out;
  EXPECT_EQ(j["totals"]["features_ring_published"].get<long long>(), ring_published);
  for (const auto& path : {temp("ring1.out"), temp("ring2.out")}) {
    const std::string r = slurp(path);
    EXPECT_EQ(number_after(r, "feature ring shm:" + rc.features_ring + ": "), ring_published) << r;
    EXPECT_NE(r.find(" 0 lost to overrun, 0 behind at exit"), std::string::npos) << r;
  }

  std::string html;
  ASSERT_EQ(run_cli({"report", rc.report, "-o", temp(threading + ".html")}, html), 0) << html;
  const std::string page = slurp(temp(threading + ".html"));
  EXPECT_NE(page.find("<svg"), std::string::npos);
  EXPECT_NE(page.find("p99 over time") == std::string::npos ? page.find("Latency over time") : 0, std::string::npos);
  EXPECT_EQ(page.find("http://"), page.find("http://www.w3.org/2000/svg"));  // no external assets
  shm_unlink(("/" + rc.shm).c_str());
  shm_unlink(("/" + rc.features_shm).c_str());
  shm_unlink(("/" + rc.features_ring).c_str());
}

}  // namespace

TEST(PipelineEndToEnd, InlineSignalsReachUdpAndShmReadersCountsMatchAndReplay) { check_full_run("inline", "packet"); }

// Rings, and one UDP datagram per signal.
TEST(PipelineEndToEnd, RingsThreadingGivesTheSameAccounting) { check_full_run("rings", "message"); }

// kill -9 in the middle of a run: the decision log up to the last flush reads back and replays.
TEST(PipelineEndToEnd, KilledRunLeavesALogThatReplays) {
  RunConfig rc;
  rc.log = temp("killed.tdl");
  rc.ready = temp("killed.ready");
  rc.udp = false;
  const std::string cfg = write_config(rc, "killed.toml");
  unlink(rc.ready.c_str());
  Process run = start({"run", cfg}, temp("killed.run.out"));
  ASSERT_TRUE(wait_file(rc.ready, 60)) << slurp(run.out_path);
  Process serve = start(serve_args(400000, 40000, false), temp("killed.serve.out"));
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  kill(run.pid, SIGKILL);
  EXPECT_EQ(wait_for(run, 10), -2);  // died of the signal
  kill(serve.pid, SIGTERM);
  wait_for(serve, 30);
  const auto log = tickinfer::pipeline::read_decision_log(rc.log);
  ASSERT_GT(log.decisions.size(), 1000u) << "the run should have logged for ~2 s";
  for (std::size_t i = 0; i < log.decisions.size(); ++i) ASSERT_EQ(log.decisions[i].signal_seq, i + 1);
  std::string rep;
  ASSERT_EQ(run_cli({"replay", rc.log, "--model", kDefault + "/model.keras"}, rep), 0) << rep;
  EXPECT_NE(rep.find(" 0 scores differ"), std::string::npos) << rep;
  EXPECT_EQ(number_after(rep, "decisions: "), static_cast<long long>(log.decisions.size())) << rep;
}

TEST(PipelineEndToEnd, FingerprintOnlyLogSaysItCannotReplay) {
  const std::string path = temp("fp.tdl");
  {
    tickinfer::pipeline::DecisionLogWriter w(path, tickinfer::pipeline::FlushPolicy::Exit, 0, false, 1 << 16);
    tickinfer::pipeline::LoggedModel m;
    m.name = "default";
    m.input_size = 10;
    w.declare(m);
    tickinfer::pipeline::DecisionRecord r;
    r.score_count = 1;
    const float in[10] = {};
    r.input_fingerprint = tickinfer::pipeline::fingerprint(in, 10);
    w.append(r, nullptr, 10, 0);
  }
  std::string rep;
  ASSERT_EQ(run_cli({"replay", path, "--model", kDefault + "/model.keras"}, rep), 0) << rep;
  EXPECT_NE(rep.find("1 with only a fingerprint"), std::string::npos) << rep;
  EXPECT_NE(rep.find("cannot be re-run"), std::string::npos) << rep;
}

namespace {

// A [[feature]] table that parses back to f (kind and parameters; the name is not written).
std::string feature_toml(const tickinfer::features::FeatureDef& f) {
  using tickinfer::features::FeatureKind;
  std::ostringstream o;
  o.precision(17);
  o << "[[feature]]\nkind = \"" << tickinfer::features::feature_kind_name(f.kind) << "\"\n";
  if (f.count)
    o << (f.kind == FeatureKind::TradeImbalance || f.kind == FeatureKind::VwapDeviation ? "trades" : "ticks") << " = "
      << f.count << "\n";
  if (f.window_ns) o << "window_ns = " << f.window_ns << "\ncapacity = " << f.capacity << "\n";
  if (f.alpha > 0) o << "alpha = " << f.alpha << "\n";
  return o.str() + "\n";
}

std::string array_toml(const std::vector<double>& v) {
  std::ostringstream o;
  o.precision(17);
  o << "[";
  for (std::size_t i = 0; i < v.size(); ++i) o << (i ? ", " : "") << v[i];
  return o.str() + "]";
}

// A model directory: a copy of model_path and the signature text beside it.
std::string model_dir(const std::string& name, const std::string& model_path, const std::string& signature) {
  const std::string dir = temp(name);
  mkdir(dir.c_str(), 0755);
  std::ifstream src(model_path, std::ios::binary);
  std::ofstream(dir + "/model.keras", std::ios::binary) << src.rdbuf();
  std::ofstream(dir + "/features.toml") << signature;
  return dir + "/model.keras";
}

}  // namespace

// Four tick-mode models on one feed, each with its own feature signature: "default" (the
// pipeline spec itself), "rev" and "rev2" (the same ten features in reverse order, the same
// standardization), and "six" (a 6-input model: three of the spec's features with its own fixed
// mean and scale, and three the spec lacks). The plan computes the 13 distinct features once per
// tick; "rev" and "rev2" share one view, built once per tick. Checked against what was written
// into the test: every logged "rev" input is the reversed "default" input of the same tick; the
// last "six" input of each instrument is its own standardization of the raw vector the feature
// store holds; the view counters equal the signal counts they must equal.
TEST(PipelineEndToEnd, FeaturesSharedByModelsAreComputedOnceAndEachModelReadsItsOwnOrder) {
  using namespace tickinfer::features;
  const FeatureSpec spec = load_feature_spec(kDefault + "/features.toml");
  const std::string head = "[feature_set]\nname = \"other\"\ninstruments = [1]\n\n";
  std::string rev = head;
  std::vector<double> mean(spec.standardize.mean.rbegin(), spec.standardize.mean.rend());
  std::vector<double> scale(spec.standardize.scale.rbegin(), spec.standardize.scale.rend());
  rev += "[standardize]\nmode = \"fixed\"\nmean = " + array_toml(mean) + "\nscale = " + array_toml(scale) + "\n\n";
  for (std::size_t i = spec.width(); i-- > 0;) rev += feature_toml(spec.features[i]);
  // "six": spread_bps, log_return_20, momentum_50 (positions 0, 3, 5 of the spec) and three new.
  const std::vector<double> six_mean = {5.0, 0.001, -0.002, 700.0, 700.0, 701.0};
  const std::vector<double> six_scale = {20.0, 0.05, 0.03, 900.0, 800.0, 950.0};
  std::string six = head + "[standardize]\nmode = \"fixed\"\nmean = " + array_toml(six_mean) + "\nscale = " +
                    array_toml(six_scale) + "\n\n" + feature_toml(spec.features[0]) + feature_toml(spec.features[3]) +
                    feature_toml(spec.features[5]) +
                    "[[feature]]\nkind = \"mid\"\n\n[[feature]]\nkind = \"microprice\"\n\n"
                    "[[feature]]\nkind = \"ewma_mean\"\nalpha = 0.1\n";
  ASSERT_EQ(spec.features[0].kind, FeatureKind::SpreadBps);
  ASSERT_EQ(spec.features[3].name, "log_return_20");
  ASSERT_EQ(spec.features[5].name, "momentum_50");
  const std::string rev_model = model_dir("rev", kDefault + "/model.keras", rev);
  const std::string rev2_model = model_dir("rev2", kDefault + "/model.keras", rev);
  const std::string six_model =
      model_dir("six", std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/dense_activations_k3/model.keras", six);

  RunConfig rc;
  rc.log = temp("shared.tdl");
  rc.ready = temp("shared.ready");
  rc.report = temp("shared.json");
  rc.udp = false;
  rc.features_shm = "tickinfer-e2e-shared-" + std::to_string(getpid());
  for (const auto& [name, path] : {std::pair{"rev", rev_model}, {"rev2", rev2_model}, {"six", six_model}})
    rc.extra += std::string("\n[[model]]\nname = \"") + name + "\"\npath = \"" + path + "\"\nmode = \"tick\"\n";
  const std::string cfg = write_config(rc, "shared.toml");
  unlink(rc.ready.c_str());
  Process run = start({"run", cfg}, temp("shared.run.out"));
  ASSERT_TRUE(wait_file(rc.ready, 60)) << slurp(run.out_path);
  Process serve = start(serve_args(20000, 20000, false), temp("shared.serve.out"));
  ASSERT_EQ(wait_for(serve, 60), 0) << slurp(serve.out_path);
  ASSERT_EQ(wait_for(run, 60), 0) << slurp(run.out_path);
  const std::string out = slurp(run.out_path);
  EXPECT_NE(out.find("features: 13 columns computed once per tick (10 from the spec, 3 added by models) for 4 model(s) "
                     "that declare 36 in all; 3 distinct views"),
            std::string::npos) << out;
  EXPECT_EQ(number_after(out, "allocations after ready: "), 0) << out;  // the gathers allocate nothing

  const auto log = tickinfer::pipeline::read_decision_log(rc.log);
  ASSERT_EQ(log.models.size(), 4u);
  // Signals per model, and the last of each tick per model.
  std::map<std::uint64_t, const tickinfer::pipeline::DecisionRecord*> by_tick[4];
  long long signals[4] = {0, 0, 0, 0};
  for (const auto& d : log.decisions) {
    ++signals[d.model];
    by_tick[d.model][d.tick_seq] = &d;
  }
  ASSERT_GT(signals[0], 15000) << out;
  for (int m = 1; m < 4; ++m) EXPECT_EQ(signals[m], signals[0]) << m;  // the same ticks are warm for all
  long long reversed = 0;
  for (const auto& [seq, d0] : by_tick[0]) {
    const auto* d1 = by_tick[1].at(seq);
    const auto* d2 = by_tick[2].at(seq);
    ASSERT_EQ(d1->inputs.size(), 10u);
    for (std::size_t f = 0; f < 10; ++f) {
      ASSERT_EQ(d1->inputs[f], d0->inputs[9 - f]) << "tick " << seq << " feature " << f;
      ASSERT_EQ(d2->inputs[f], d1->inputs[f]) << "tick " << seq << " feature " << f;
    }
    ++reversed;
  }
  EXPECT_EQ(reversed, signals[0]);

  // The feature store holds the plan's 13 raw columns: the spec's ten, then mid, microprice, ewma.
  const ShmFeatureReader store("/" + rc.features_shm);
  ASSERT_EQ(store.width(), 13u);
  EXPECT_EQ(store.names()[10], "mid");
  EXPECT_EQ(store.names()[12], "ewma_mean_0.1");
  const std::size_t six_columns[6] = {0, 3, 5, 10, 11, 12};
  std::vector<double> raw(13);
  for (std::size_t s = 0; s < store.slots(); ++s) {
    ShmRowMeta m;
    ASSERT_EQ(store.read(s, raw.data(), &m), ShmRead::Ok);
    const tickinfer::pipeline::DecisionRecord* last = nullptr;
    for (const auto& [seq, d] : by_tick[3])
      if (d->instrument == store.instrument_at(s)) last = d;
    ASSERT_NE(last, nullptr);
    ASSERT_EQ(last->tick_seq, m.tick_seq);
    ASSERT_EQ(last->inputs.size(), 6u);
    for (std::size_t j = 0; j < 6; ++j)
      EXPECT_EQ(last->inputs[j], static_cast<float>((raw[six_columns[j]] - six_mean[j]) / six_scale[j]))
          << "instrument " << store.instrument_at(s) << " column " << j;
  }

  // View counters: "rev" builds its group's buffer on every tick it runs, "rev2" reuses it, "six"
  // builds its own, "default" reads the plan in place.
  std::ifstream rf(rc.report);
  const auto j = nlohmann::json::parse(rf);
  EXPECT_EQ(j["totals"]["feature_view_builds"].get<long long>(), signals[1] + signals[3]);
  EXPECT_EQ(j["totals"]["feature_view_reuses"].get<long long>(), signals[2]);
  EXPECT_EQ(j["totals"]["feature_columns"].get<long long>(), 13);
  EXPECT_EQ(j["totals"]["feature_requested_columns"].get<long long>(), 36);
  EXPECT_GT(j["totals"]["feature_view_saved_ns"].get<double>(), 0.0);  // each reuse saved one timed gather
  shm_unlink(("/" + rc.features_shm).c_str());
}

// Sharding across processes: `feed serve` publishes lines A and B to two multicast groups; three
// `tickinfer run` processes join both: shard 0/2 (even instrument ids, from [shard]), shard 1/2
// (odd ids, from --shard) and an unsharded one. The two shards' decisions partition the
// unsharded run's: every (tick, instrument) decision of the whole run is made by exactly the shard
// owning the instrument, with the same score and the same input; each shard counts the other's
// events as skipped.
TEST(PipelineEndToEnd, ShardsSplitTheInstrumentsAndTogetherDecideWhatOneProcessDecides) {
  const int b = base_port();
  const std::string group_a = "239.255." + std::to_string(90 + getpid() % 100) + ".1";
  const std::string group_b = "239.255." + std::to_string(90 + getpid() % 100) + ".2";
  const std::string group_v = "239.255." + std::to_string(90 + getpid() % 100) + ".3";  // feature vectors
  struct Shard {
    std::string name, extra_args;
    std::string cfg, log, ready, report;
  } shards[3] = {{"even", "", "", "", "", ""}, {"odd", "1/2", "", "", "", ""}, {"whole", "", "", "", "", ""}};
  std::vector<Process> runs;
  for (auto& sh : shards) {
    RunConfig rc;
    rc.udp = false;
    rc.log = temp("shard_" + sh.name + ".tdl");
    rc.ready = temp("shard_" + sh.name + ".ready");
    rc.report = temp("shard_" + sh.name + ".json");
    if (sh.name == "even") rc.extra = "\n[shard]\nindex = 0\ncount = 2\n";
    if (sh.name == "whole") rc.features_udp = group_v + ":" + std::to_string(b + 3);
    std::string text = slurp(write_config(rc, "shard_" + sh.name + ".toml"));
    text.replace(text.find("127.0.0.1:" + std::to_string(b) + "\""), ("127.0.0.1:" + std::to_string(b)).size(),
                 group_a + ":" + std::to_string(b));
    text.replace(text.find("127.0.0.1:" + std::to_string(b + 1)), ("127.0.0.1:" + std::to_string(b + 1)).size(),
                 group_b + ":" + std::to_string(b + 1));
    text.replace(text.find("recovery = \"127.0.0.1:" + std::to_string(b + 2) + "\""),
                 ("recovery = \"127.0.0.1:" + std::to_string(b + 2) + "\"").size(), "recovery = \"none\"");
    sh.cfg = temp("shard_" + sh.name + "2.toml");
    std::ofstream(sh.cfg) << text;
    sh.log = rc.log;
    sh.ready = rc.ready;
    sh.report = rc.report;
    unlink(sh.ready.c_str());
    std::vector<std::string> args = {"run", sh.cfg};
    if (!sh.extra_args.empty()) args.insert(args.end(), {"--shard", sh.extra_args});
    runs.push_back(start(args, temp("shard_" + sh.name + ".run.out")));
  }
  for (std::size_t i = 0; i < 3; ++i) ASSERT_TRUE(wait_file(shards[i].ready, 60)) << slurp(runs[i].out_path);
  // Two consumers of the unsharded run's feature vectors, on the multicast group.
  std::vector<Process> vector_readers;
  for (int r = 0; r < 2; ++r) {
    const std::string ready = temp("vec" + std::to_string(r) + ".ready");
    unlink(ready.c_str());
    vector_readers.push_back(start({"features", "--watch", "udp:" + group_v + ":" + std::to_string(b + 3), "--summary",
                                    "--idle-exit", "3", "--ready-file", ready},
                                   temp("vec" + std::to_string(r) + ".out")));
    ASSERT_TRUE(wait_file(ready, 30)) << slurp(vector_readers.back().out_path);
  }
  std::vector<std::string> serve = serve_args(20000, 10000, false);
  for (auto& a : serve) {
    if (a == "127.0.0.1:" + std::to_string(b)) a = group_a + ":" + std::to_string(b);
    if (a == "127.0.0.1:" + std::to_string(b + 1)) a = group_b + ":" + std::to_string(b + 1);
  }
  Process feed = start(serve, temp("shard.serve.out"));
  ASSERT_EQ(wait_for(feed, 60), 0) << slurp(feed.out_path);
  std::string outs[3];
  for (std::size_t i = 0; i < 3; ++i) {
    const int rc = wait_for(runs[i], 60);
    outs[i] = slurp(runs[i].out_path);
    if (rc != 0 && outs[i].find("no market data") != std::string::npos)
      GTEST_SKIP() << "multicast is not looped back on this host: " << outs[i];
    ASSERT_EQ(rc, 0) << outs[i];
    EXPECT_NE(outs[i].find("20000 ticks"), std::string::npos) << outs[i];  // each received the whole feed
  }
  EXPECT_NE(outs[0].find("shard: 10 of the spec's 20 instruments computed here"), std::string::npos) << outs[0];
  EXPECT_NE(outs[1].find("shard: 10 of the spec's 20 instruments computed here"), std::string::npos) << outs[1];
  EXPECT_EQ(outs[2].find("shard:"), std::string::npos) << outs[2];
  // Feature vectors over multicast: both consumers got every record the run sent, none lost.
  const std::string vec_key = "feature vectors udp " + group_v + ":" + std::to_string(b + 3) + ": ";
  const long long sent = number_after(outs[2], vec_key);
  EXPECT_GT(sent, 19900) << outs[2];  // every accepted tick
  EXPECT_NE(outs[2].find("datagrams, 0 datagrams refused"), std::string::npos) << outs[2];
  for (auto& vr : vector_readers) {
    ASSERT_EQ(wait_for(vr, 30), 0) << slurp(vr.out_path);
    const std::string o = slurp(vr.out_path);
    EXPECT_EQ(number_after(o, "feature vectors udp:" + group_v + ":" + std::to_string(b + 3) + ": "), sent) << o;
    EXPECT_NE(o.find("records read, 0 lost, 0 late or duplicate, 0 malformed datagrams"), std::string::npos) << o;
  }

  using tickinfer::pipeline::DecisionRecord;
  std::map<std::uint64_t, DecisionRecord> by_tick[3];
  for (int i = 0; i < 3; ++i)
    for (const auto& d : tickinfer::pipeline::read_decision_log(shards[i].log).decisions) by_tick[i][d.tick_seq] = d;
  ASSERT_GT(by_tick[2].size(), 15000u);
  for (const auto& [seq, d] : by_tick[0]) EXPECT_EQ(d.instrument % 2, 0u) << seq;
  for (const auto& [seq, d] : by_tick[1]) EXPECT_EQ(d.instrument % 2, 1u) << seq;
  EXPECT_EQ(by_tick[0].size() + by_tick[1].size(), by_tick[2].size());
  for (const auto& [seq, whole] : by_tick[2]) {
    const auto& part = by_tick[whole.instrument % 2];
    const auto it = part.find(seq);
    ASSERT_NE(it, part.end()) << "tick " << seq << " instrument " << whole.instrument;
    ASSERT_EQ(it->second.instrument, whole.instrument);
    ASSERT_EQ(it->second.scores[0], whole.scores[0]) << "tick " << seq;
    ASSERT_EQ(it->second.input_fingerprint, whole.input_fingerprint) << "tick " << seq;
  }
  // Each shard skipped exactly the events the other computed: accepted or not, every event of
  // an instrument it does not own.
  nlohmann::json j[3];
  for (int i = 0; i < 3; ++i) {
    std::ifstream f(shards[i].report);
    j[i] = nlohmann::json::parse(f);
  }
  const long long skipped0 = j[0]["totals"]["other_shard_events"].get<long long>();
  const long long skipped1 = j[1]["totals"]["other_shard_events"].get<long long>();
  EXPECT_EQ(skipped0 + skipped1, 20000);
  EXPECT_GT(skipped0, 5000);
  EXPECT_GT(skipped1, 5000);
  EXPECT_EQ(j[2]["totals"]["other_shard_events"].get<long long>(), 0);
  EXPECT_EQ(j[0]["totals"]["shard_instruments"].get<long long>(), 10);
}

TEST(PipelineRefusals, AShardThatCannotBeServedIsRefused) {
  RunConfig rc;
  const std::string cfg = write_config(rc, "shard_refusal.toml");
  std::string out;
  EXPECT_EQ(run_cli({"run", cfg, "--check", "--shard", "2/2"}, out), 2);
  EXPECT_NE(out.find("--shard expects K/N with 0 <= K < N <= 4096, got '2/2'"), std::string::npos) << out;
  EXPECT_EQ(run_cli({"run", cfg, "--check", "--shard", "1/40"}, out), 0) << out;  // it owns instrument 1 alone
  rc.extra = "\n[shard]\ninstruments = [3, 99]\n";
  EXPECT_EQ(run_cli({"run", write_config(rc, "shard_refusal2.toml"), "--check"}, out), 1);
  EXPECT_NE(out.find("[shard] instruments: 99 is not in the feature spec"), std::string::npos) << out;
  EXPECT_EQ(run_cli({"run", cfg, "--check", "--shard", "30/40"}, out), 1);
  EXPECT_NE(out.find("[shard] 30 of 40 owns none of the feature spec's 20 instruments"), std::string::npos) << out;
}

// The spec's own features in another order, for a window model: its rows come standardized from
// the pipeline's window, in the pipeline's scaling, which is not the one the model was trained
// with. Refused, naming the fix. (A tick-mode model in the same position reads its own order and
// scaling from the raw vector; the test above runs one.)
TEST(PipelineRefusals, SignatureMismatchIsRefusedBeforeStarting) {
  // The same features in another order, the standardization arrays left as they were: the
  // pipeline's fixed scaling of each column is not the model's.
  std::string spec = slurp(kDefault + "/features.toml");
  const auto a = spec.find("kind = \"spread_bps\""), b = spec.find("kind = \"book_imbalance\"");
  ASSERT_NE(a, std::string::npos);
  spec.replace(b, std::string("kind = \"book_imbalance\"").size(), "kind = \"spread_bps\"");
  spec.replace(a, std::string("kind = \"spread_bps\"").size(), "kind = \"book_imbalance\"");
  const std::string spec_path = temp("swapped.toml");
  std::ofstream(spec_path) << spec;
  RunConfig rc;
  std::string cfg_text = slurp(write_config(rc, "sig.toml"));
  cfg_text.replace(cfg_text.find(kDefault + "/features.toml"), (kDefault + "/features.toml").size(), spec_path);
  const std::string cfg = temp("sig2.toml");
  std::ofstream(cfg) << cfg_text;
  std::string out;
  EXPECT_EQ(run_cli({"run", cfg, "--check"}, out), 0) << out;  // tick mode: served from the raw vector
  cfg_text.replace(cfg_text.find("mode = \"tick\""), 13, "mode = \"window\"");
  std::ofstream(cfg) << cfg_text;
  EXPECT_EQ(run_cli({"run", cfg}, out), 1);
  EXPECT_NE(out.find("a window or stream model reads standardized rows from the pipeline's window, but its "
                     "features.toml standardizes them differently"),
            std::string::npos) << out;
}

TEST(PipelineRefusals, MissingModelWrongWidthBadConfigAndSilentFeed) {
  std::string out;
  RunConfig rc;
  rc.extra = "";
  std::string text = slurp(write_config(rc, "missing.toml"));
  text.replace(text.find(kDefault + "/model.keras"), (kDefault + "/model.keras").size(), "/nonexistent/model.keras");
  std::ofstream(temp("missing2.toml")) << text;
  EXPECT_EQ(run_cli({"run", temp("missing2.toml")}, out), 1);
  EXPECT_NE(out.find("model 'default' (/nonexistent/model.keras): file not found"), std::string::npos) << out;

  // A model of another input width, signature check off: the width check still refuses it.
  text = slurp(write_config(rc, "width.toml"));
  text.replace(text.find(kDefault + "/model.keras"), (kDefault + "/model.keras").size(),
               std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/relu_layers_k3/model.keras");
  text.replace(text.find("threshold = 0.1"), 15, "threshold = 0.1\ncheck_signature = false");
  std::ofstream(temp("width2.toml")) << text;
  EXPECT_EQ(run_cli({"run", temp("width2.toml")}, out), 1);
  EXPECT_NE(out.find("does not match"), std::string::npos) << out;

  std::ofstream(temp("bad.toml")) << "[feed]\nline_a = \"127.0.0.1\"\n";
  EXPECT_EQ(run_cli({"run", temp("bad.toml")}, out), 1);
  EXPECT_NE(out.find("line 2: [feed] line_a: expected HOST:PORT"), std::string::npos) << out;

  // Nobody publishes: the run reports the silence and stops with an error, never hangs.
  RunConfig silent;
  silent.extra = "";
  text = slurp(write_config(silent, "silent.toml"));
  text.replace(text.find("feed_silence_s = 3"), 18, "feed_silence_s = 0.3");
  std::ofstream(temp("silent2.toml")) << text;
  EXPECT_EQ(run_cli({"run", temp("silent2.toml")}, out, 30), 1);
  EXPECT_NE(out.find("degraded: no market data"), std::string::npos) << out;
  EXPECT_NE(out.find("the feed delivered no market data"), std::string::npos) << out;
}

namespace {
// GET / from the metrics endpoint.
std::string http_get(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    const char req[] = "GET / HTTP/1.0\r\n\r\n";
    (void)!write(fd, req, sizeof req - 1);
    char buf[4096];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  }
  close(fd);
  return out;
}
}  // namespace

// Several models on one feed: the default MLP routed to instruments 1-10, its v2 to 11-20, and an
// LSTM over the last 32 bars three times (window mode, stream mode with per-instrument state, and
// window mode with incremental updates through per-instrument plans) on all of them. Every decision carries the right model for its instrument; window and stream
// decisions replay exactly; the metrics endpoint reports ready.
TEST(PipelineEndToEnd, SeveralModelsRoutedByInstrumentWindowAndStreamModesMetrics) {
  std::string spec = slurp(kDefault + "/features.toml");
  spec.replace(spec.find("window = 1"), 10, "window = 32");
  const std::string spec_path = temp("w32.toml");
  std::ofstream(spec_path) << spec;
  const std::string lstm = std::string(::tickinfer::test::source_dir()) + "/bench/models/lstm_window/model.keras";
  RunConfig rc;
  rc.spec = spec_path;
  rc.log = temp("multi.tdl");
  rc.ready = temp("multi.ready");
  rc.udp = false;
  rc.model_extra = "instruments = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\ncheck_signature = false\n";
  const int metrics_port = base_port() + 4;
  rc.extra = "metrics = \"127.0.0.1:" + std::to_string(metrics_port) + "\"\n"
             "\n[[model]]\nname = \"v2\"\nversion = 2\npath = \"" + kDefault + "/model_v2/model.keras\"\n"
             "instruments = [11, 12, 13, 14, 15, 16, 17, 18, 19, 20]\ncheck_signature = false\n"
             "\n[[model]]\nname = \"lstm_w\"\npath = \"" + lstm + "\"\nmode = \"window\"\ncheck_signature = false\n"
             "\n[[model]]\nname = \"lstm_s\"\npath = \"" + lstm + "\"\nmode = \"stream\"\ncheck_signature = false\n"
             "\n[[model]]\nname = \"lstm_i\"\npath = \"" + lstm + "\"\nmode = \"window\"\nincremental = true\n"
             "check_signature = false\n";
  const std::string cfg = write_config(rc, "multi.toml");
  unlink(rc.ready.c_str());
  Process run = start({"run", cfg}, temp("multi.run.out"));
  ASSERT_TRUE(wait_file(rc.ready, 60)) << slurp(run.out_path);
  const std::string metrics = http_get(metrics_port);
  EXPECT_NE(metrics.find("200 OK"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("tickinfer_ready 1"), std::string::npos) << metrics;
  Process serve = start(serve_args(60000, 40000, false), temp("multi.serve.out"));  // 1.5 s: ~150 bars of 10 ms
  // Once a status interval (500 ms here) has passed, the endpoint serves its figures
  // (format_metrics: HELP/TYPE, seconds; promtool-checked in pipeline_metrics_text_test).
  std::string during;
  for (int i = 0; i < 40 && during.find("tickinfer_interval_ticks") == std::string::npos; ++i) {
    usleep(100'000);
    during = http_get(metrics_port);
  }
  EXPECT_NE(during.find("# TYPE tickinfer_interval_ticks gauge"), std::string::npos) << during;
  EXPECT_NE(during.find("\ntickinfer_rx_to_signal_p99_seconds "), std::string::npos) << during;
  EXPECT_NE(during.find("\ntickinfer_allocations_since_ready 0\n"), std::string::npos) << during;
  ASSERT_EQ(wait_for(serve, 60), 0);
  ASSERT_EQ(wait_for(run, 60), 0) << slurp(run.out_path);
  const std::string out = slurp(run.out_path);
  EXPECT_EQ(number_after(out, "allocations after ready: "), 0) << out;  // metrics published and scraped too
  const auto log = tickinfer::pipeline::read_decision_log(rc.log);
  ASSERT_EQ(log.models.size(), 5u);
  std::size_t per_model[5] = {0, 0, 0, 0, 0};
  for (const auto& r : log.decisions) {
    ASSERT_LT(r.model, 5);
    ++per_model[r.model];
    if (r.model == 0) {
      EXPECT_LE(r.instrument, 10u);
    }
    if (r.model == 1) {
      EXPECT_GE(r.instrument, 11u);
    }
  }
  EXPECT_GT(per_model[0], 10000u) << out;
  EXPECT_GT(per_model[1], 10000u) << out;
  EXPECT_GT(per_model[2], 500u) << out;  // one per closed bar once 32 bars are in the window
  EXPECT_EQ(per_model[3], per_model[2]) << out;
  EXPECT_EQ(per_model[4], per_model[2]) << out;  // the incremental plans: one decision per bar too
  std::string rep;
  ASSERT_EQ(run_cli({"replay", rc.log, "--name", "lstm_w", "--model", lstm}, rep), 0) << rep;
  EXPECT_NE(rep.find(" 0 scores differ"), std::string::npos) << rep;
  ASSERT_EQ(run_cli({"replay", rc.log, "--name", "lstm_s", "--model", lstm}, rep), 0) << rep;
  EXPECT_NE(rep.find(" 0 scores differ"), std::string::npos) << rep;
  // Each instrument's window slid through its own incremental plan: the whole-window replay of
  // the logged windows gives the same scores to float rounding.
  ASSERT_EQ(run_cli({"replay", rc.log, "--name", "lstm_i", "--model", lstm, "--tolerance", "1e-5"}, rep), 0) << rep;
  EXPECT_NE(rep.find(" 0 scores differ"), std::string::npos) << rep;
  ASSERT_EQ(run_cli({"replay", rc.log, "--name", "v2", "--model", kDefault + "/model_v2/model.keras"}, rep), 0) << rep;
  EXPECT_NE(rep.find(" 0 scores differ"), std::string::npos) << rep;
}

// --check loads and checks everything but touches no output: an existing decision log survives.
TEST(PipelineRefusals, CheckOnlyTouchesNothing) {
  RunConfig rc;
  rc.log = temp("keep.tdl");
  std::ofstream(rc.log) << "previous run";
  const std::string cfg = write_config(rc, "check.toml");
  std::string out;
  ASSERT_EQ(run_cli({"run", cfg, "--check"}, out), 0) << out;
  EXPECT_NE(out.find("consistent"), std::string::npos) << out;
  EXPECT_EQ(slurp(rc.log), "previous run");
}

// `tickinfer pipeline bench` end to end on a short run: both paths measured in one process, the
// bar evaluated (PASS exits 0, FAIL 3: the verdict depends on the machine, the mechanics do not),
// and its report renders the against-the-floor table.
TEST(PipelineBench, ShortRunMeasuresBothPathsAndReports) {
  const std::string report = temp("bench.json");
  std::string out;
  const int rc = run_cli({"pipeline", "bench", "--config", kDefault + "/config.toml", "--seconds", "0.5", "--rounds", "1",
                          "--rate", "5000", "--port", std::to_string(base_port()), "--exchange-cpu", "-1", "--cpu", "0",
                          "--feed-cpu", "-1", "--stall-probe", "0.2", "--report", report},
                         out, 120);
  EXPECT_TRUE(rc == 0 || rc == 3) << out;
  EXPECT_NE(out.find("bare UDP hop: send -> user"), std::string::npos) << out;
  EXPECT_NE(out.find("pipeline inline: send -> kernel TX"), std::string::npos) << out;
  EXPECT_NE(out.find("pipeline inline: send -> send() ret"), std::string::npos) << out;
  EXPECT_NE(out.find("pipeline rings: send -> kernel TX"), std::string::npos) << out;
  EXPECT_NE(out.find("(exchange send -> kernel TX of the signal)"), std::string::npos) << out;
  EXPECT_NE(out.find("bar (inline): end-to-end p99"), std::string::npos) << out;
  EXPECT_EQ(rc == 0, out.find("FAIL") == std::string::npos) << out;
  // The machine's stops of the pinned core, measured first, and each path's exposure to them.
  EXPECT_NE(out.find("cpu 0 stops (clock-read gaps > 1 us while spinning): "), std::string::npos) << out;
  EXPECT_NE(out.find("packets whose path a core stop overlaps (at p50 durations): bare hop "), std::string::npos) << out;
  std::ifstream rf(report);
  const auto j = nlohmann::json::parse(rf);
  EXPECT_EQ(j["bench"]["bare_hop"]["count"].get<long long>(), number_after(out, "bare UDP hop: send -> user"));
  EXPECT_GT(j["bench"]["modes"]["inline"]["signals"].get<long long>(), 50);
  ASSERT_EQ(j["bench"]["cpu_stops"].size(), 1u);
  const auto& stops = j["bench"]["cpu_stops"][0];
  EXPECT_EQ(stops["cpu"].get<int>(), 0);
  EXPECT_GE(stops["fraction"].get<double>(), 0.0);
  EXPECT_LE(stops["fraction"].get<double>(), 1.0);
  EXPECT_GE(stops["per_second"].get<double>(), 0.0);
  if (stops["per_second"].get<double>() > 0) {
    EXPECT_GT(stops["p50_ns"].get<long long>(), 1000);  // only gaps above the 1 us threshold count
    EXPECT_LE(stops["p50_ns"].get<long long>(), stops["max_ns"].get<long long>());
  }
  const double exposure = j["bench"]["modes"]["inline"]["stop_exposure"]["pipeline"].get<double>();
  EXPECT_GE(exposure, 0.0);
  EXPECT_LE(exposure, 1.0);  // a probability, however often a loaded machine stops the core
  std::string html;
  ASSERT_EQ(run_cli({"report", report, "-o", temp("bench.html")}, html), 0) << html;
  EXPECT_NE(slurp(temp("bench.html")).find("Against the floor"), std::string::npos);
}
