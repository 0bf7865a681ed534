// The run configuration: a valid file parses with every key; each kind of mistake is refused
// before anything starts, with the file and line in the message.
#include <gtest/gtest.h>

#include <string>

#include "pipeline/config.hpp"
#include "pipeline/spin_budget.hpp"
#include "tickinfer/error.hpp"

using namespace tickinfer::pipeline;

namespace {

const char* kGood = R"(
[feed]
line_a = "127.0.0.1:31001"
line_b = "none"
recovery = "10.0.0.9:31000"
interface = "10.0.0.5"
idle = "yield"
gap_timeout_us = 500

[features]
spec = "features.toml"
shm = "feature-store"
shm_ttl_ms = 250
ring = "feature-ring"
ring_capacity = 1024

[[model]]
name = "fast"
path = "m1.keras"
version = 3
mode = "tick"
instruments = [1, 2]
outputs = [0]
center = 0.5
threshold = 0.1

[[model]]
name = "seq"
path = "/abs/m2.keras"
mode = "window"
window = 16

[threading]
mode = "rings"
feed_cpu = 0
compute_cpu = 1
ring_capacity = 1024

[signals]
udp = "239.1.1.1:32001"
udp_batch = "message"
tx_timestamps = false
shm = "sig-ring"

[decision_log]
path = "d.tdl"
flush = "record"
fsync = true
full_vectors = false

[warmup]
min_iterations = 100
max_iterations = 1000

[run]
seconds = 20
metrics = "127.0.0.1:9100"
status_interval_ms = 250

[shard]
index = 1
count = 3
)";

std::string error_of(const std::string& text) {
  try {
    parse_pipeline_config(text, "run.toml", "base");
  } catch (const tickinfer::Error& e) {
    return e.what();
  }
  return "";
}

std::string with(const std::string& from, const std::string& to) {
  std::string s = kGood;
  const auto p = s.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  s.replace(p, from.size(), to);
  return s;
}

}  // namespace

TEST(PipelineConfig, ParsesEveryKeyAndResolvesRelativePaths) {
  const PipelineConfig c = parse_pipeline_config(kGood, "run.toml", "base");
  EXPECT_EQ(c.line_a.port, 31001);
  EXPECT_FALSE(c.line_b.enabled());
  EXPECT_EQ(c.recovery.host, "10.0.0.9");
  EXPECT_EQ(c.interface, "10.0.0.5");
  EXPECT_EQ(c.feed_idle, "yield");
  EXPECT_EQ(c.gap_timeout_ns, 500000);
  EXPECT_EQ(c.feature_spec, "base/features.toml");
  EXPECT_EQ(c.features_shm, "feature-store");
  EXPECT_EQ(c.features_shm_ttl_ns, 250'000'000);
  EXPECT_EQ(c.features_ring, "feature-ring");
  EXPECT_EQ(c.features_ring_capacity, 1024u);
  ASSERT_EQ(c.models.size(), 2u);
  EXPECT_EQ(c.models[0].path, "base/m1.keras");
  EXPECT_EQ(c.models[0].version, 3u);
  EXPECT_EQ(c.models[0].instruments, (std::vector<std::uint32_t>{1, 2}));
  EXPECT_DOUBLE_EQ(c.models[0].center, 0.5);
  EXPECT_EQ(c.models[1].path, "/abs/m2.keras");
  EXPECT_EQ(c.models[1].trigger, ModelTrigger::Window);
  EXPECT_EQ(c.models[1].window, 16);
  EXPECT_EQ(c.models[1].tflite_engine, tickinfer::TfliteEngine::Auto);  // the default
  EXPECT_EQ(parse_pipeline_config(with("window = 16", "window = 16\ntflite_engine = \"interpreter\""), "run.toml", "base")
                .models[1]
                .tflite_engine,
            tickinfer::TfliteEngine::Interpreter);
  EXPECT_EQ(c.models[1].device, "");  // the CPU plans
  EXPECT_EQ(parse_pipeline_config(with("window = 16", "window = 16\ndevice = \"cuda:0\""), "run.toml", "base").models[1].device,
            "cuda:0");
  EXPECT_EQ(c.threading, ThreadingMode::Rings);
  EXPECT_EQ(c.ring_capacity, 1024u);
  EXPECT_EQ(c.udp.host, "239.1.1.1");
  EXPECT_EQ(c.udp_batch, SignalBatching::Message);
  EXPECT_FALSE(c.tx_timestamps);
  EXPECT_EQ(c.shm, "sig-ring");
  EXPECT_EQ(c.log_path, "base/d.tdl");
  EXPECT_EQ(c.flush, FlushPolicy::Record);
  EXPECT_TRUE(c.fsync);
  EXPECT_FALSE(c.full_vectors);
  EXPECT_EQ(c.metrics.port, 9100);
  EXPECT_EQ(c.status_interval_ns, 250'000'000);
  EXPECT_DOUBLE_EQ(c.seconds, 20);
  EXPECT_EQ(c.shard.index, 1);
  EXPECT_EQ(c.shard.count, 3);
  EXPECT_TRUE(c.shard.owns(4));
  EXPECT_FALSE(c.shard.owns(5));
  ShardConfig listed;
  listed.instruments = {7, 9};
  EXPECT_TRUE(listed.enabled());
  EXPECT_TRUE(listed.owns(9));
  EXPECT_FALSE(listed.owns(1));
  EXPECT_FALSE(ShardConfig{}.enabled());
}

TEST(PipelineConfig, EveryMistakeNamesFileAndLine) {
  struct Case {
    std::string from, to, expect;
  } cases[] = {
      {"line_a = \"127.0.0.1:31001\"", "line_a = \"127.0.0.1\"", "line 3: [feed] line_a: expected HOST:PORT"},
      {"line_a = \"127.0.0.1:31001\"", "line_a = \"127.0.0.1:70000\"", "line 3: [feed] line_a: port '70000'"},
      {"idle = \"yield\"", "idle = \"sleepy\"", "line 7: [feed] idle = 'sleepy'"},
      {"gap_timeout_us = 500", "gap_timout_us = 500", "line 8: unknown key 'gap_timout_us' in [feed]"},
      {"mode = \"tick\"", "mode = \"sometimes\"", "[[model]] mode = 'sometimes'"},
      {"name = \"fast\"", "name = \"a_name_far_too_long_for_a_signal\"", "longer than 15 characters"},
      {"name = \"seq\"", "name = \"fast\"", "duplicate model name 'fast'"},
      {"outputs = [0]", "outputs = [0, 1, 2, 3, 4]", "outputs must be an array of 1 to 4"},
      {"threshold = 0.1", "threshold = -1", "threshold = -1 is out of range"},
      {"mode = \"rings\"", "mode = \"threads\"", "[threading] mode = 'threads'"},
      {"ring_capacity = 1024", "ring_capacity = 1000", "ring_capacity must be a power of two"},
      {"shm = \"sig-ring\"", "shm = \"../etc\"", "[signals] shm = '../etc'"},
      {"udp_batch = \"message\"", "udp_batch = \"tick\"", "[signals] udp_batch = 'tick': use packet or message"},
      {"tx_timestamps = false", "tx_timestamps = \"no\"", "line 42: [signals] tx_timestamps must be true or false"},
      {"flush = \"record\"", "flush = \"sometimes\"", "[decision_log] flush = 'sometimes'"},
      {"max_iterations = 1000", "max_iterations = 10", "max_iterations is below min_iterations"},
      {"seconds = 20", "seconds = \"twenty\"", "line 56: [run] seconds must be a number"},
      {"[warmup]", "[warmpu]", "unknown section 'warmpu'"},
      {"spec = \"features.toml\"", "spec = 3", "[features] spec must be a string"},
      {"shm = \"feature-store\"", "shm = \"a/b\"", "line 12: [features] shm = 'a/b': use letters"},
      {"shm = \"feature-store\"", "shm = \"\"", "line 12: [features] shm is empty"},
      {"shm_ttl_ms = 250", "shm_ttl_ms = -1", "line 13: [features] shm_ttl_ms = -1 is out of range"},
      {"shm_ttl_ms = 250", "shm_tll_ms = 250", "unknown key 'shm_tll_ms' in [features] (expected spec, shm, shm_ttl_ms, ring, ring_capacity, udp)"},
      {"ring_capacity = 1024", "ring_capacity = 1000", "line 15: [features] ring_capacity must be a power of two"},
      {"version = 3", "version = 3.5", "[[model]] version must be an integer"},
      {"fsync = true", "fsync = 1", "[decision_log] fsync must be true or false"},
      {"[signals]", "[signals", "config 'run.toml': line"},
      {"index = 1\ncount = 3", "index = 3\ncount = 3", "[shard] index 3 is not below count 3"},
      {"index = 1\ncount = 3", "index = 1", "[shard]: index and count go together"},
      {"index = 1\ncount = 3", "index = 1\ncount = 3\ninstruments = [1]", "give either index and count, or instruments"},
      {"index = 1\ncount = 3", "instruments = []", "[shard] instruments must be a non-empty array"},
      {"index = 1\ncount = 3", "size = 3", "unknown key 'size' in [shard]"},
      {"mode = \"tick\"", "mode = \"tick\"\nincremental = true", "[[model]] incremental = true is for mode = \"window\""},
      {"window = 16", "window = 16\nincremental = 1", "[[model]] incremental must be true or false"},
      {"window = 16", "window = 16\ndevice = \"gpu\"", "line 32: [[model]] device: device 'gpu': expected cpu, cuda or cuda:N"},
      {"window = 16", "window = 16\ndevice = \"cuda:1\"\nincremental = true",
       "[[model]] incremental = true runs on the CPU plans; device = \"cuda:1\" does not take it"},
      {"window = 16", "window = 16\ntflite_engine = \"fastest\"",
       "line 32: [[model]] tflite_engine: TFLite engine 'fastest' is not one of auto, interpreter, graph"},
  };
  for (const auto& c : cases) {
    const std::string err = error_of(with(c.from, c.to));
    EXPECT_NE(err.find("config 'run.toml'"), std::string::npos) << err;
    EXPECT_NE(err.find(c.expect), std::string::npos) << "for " << c.to << ": " << err;
  }
}

TEST(PipelineConfig, MissingPiecesAreErrors) {
  EXPECT_NE(error_of("[features]\nspec = \"f.toml\"\n[[model]]\nname = \"m\"\npath = \"m.keras\"\n").find("missing [feed]"),
            std::string::npos);
  EXPECT_NE(error_of("[feed]\nline_a = \"1.2.3.4:5\"\n[[model]]\nname = \"m\"\npath = \"m.keras\"\n").find("missing [features]"),
            std::string::npos);
  EXPECT_NE(error_of("[feed]\nline_a = \"1.2.3.4:5\"\n[features]\nspec = \"f.toml\"\n").find("no [[model]]"),
            std::string::npos);
  EXPECT_NE(error_of("[feed]\nline_a = \"1.2.3.4:5\"\n[features]\nspec = \"f.toml\"\n[[model]]\npath = \"m.keras\"\n")
                .find("needs a name"),
            std::string::npos);
  EXPECT_NE(error_of("[feed]\nline_a = \"1.2.3.4:5\"\n[features]\nspec = \"f.toml\"\n[[model]]\nname = \"x\"\n")
                .find("needs a path"),
            std::string::npos);
  EXPECT_NE(error_of("[feed]\nline_a = \"\xc3\xa9:5\"\n").find("non-ASCII"), std::string::npos);
}

TEST(PipelineConfig, MissingFileIsAnError) {
  try {
    load_pipeline_config("/nonexistent/run.toml");
    FAIL();
  } catch (const tickinfer::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos);
  }
}

// Spinning threads need a core each (pipeline/spin_budget.hpp): over the budget they back off,
// with a warning naming the counts, unless [threading] oversubscribe insists.
TEST(PipelineConfig, SpinningThreadsBeyondTheUsableCpusBackOff) {
  PipelineConfig c = parse_pipeline_config(kGood, "run.toml", "base");
  c.feed_idle = c.compute_idle = "spin";
  c.threading = ThreadingMode::Rings;
  c.agents = 1;
  EXPECT_EQ(spinning_threads(c), 2);
  PipelineConfig fits = c;
  EXPECT_EQ(fit_spinning_to_cpus(fits, 2), "");  // feed + compute on 2 CPUs: as configured
  EXPECT_EQ(fits.feed_idle, "spin");
  EXPECT_EQ(fits.compute_idle, "spin");

  PipelineConfig over = c;  // a bench's exchange spins beside them: 3 on 2
  const std::string w = fit_spinning_to_cpus(over, 2, 1);
  EXPECT_NE(w.find("3 busy-spinning threads (2 of this pipeline, 1 beside it) but 2 usable CPUs"), std::string::npos) << w;
  EXPECT_NE(w.find("spin -> backoff"), std::string::npos) << w;
  EXPECT_EQ(over.feed_idle, "backoff");
  EXPECT_EQ(over.compute_idle, "backoff");

  PipelineConfig one = c;  // one CPU: even feed + compute alone are too many
  EXPECT_NE(fit_spinning_to_cpus(one, 1).find("2 busy-spinning threads (2 of this pipeline) but 1 usable CPU ("),
            std::string::npos);
  EXPECT_EQ(one.compute_idle, "backoff");

  PipelineConfig inline_mode = c;  // inline: one thread
  inline_mode.threading = ThreadingMode::Inline;
  EXPECT_EQ(spinning_threads(inline_mode), 1);
  EXPECT_EQ(fit_spinning_to_cpus(inline_mode, 1), "");

  PipelineConfig yielding = c;  // nothing spins: nothing to fit
  yielding.feed_idle = yielding.compute_idle = "yield";
  EXPECT_EQ(fit_spinning_to_cpus(yielding, 1), "");

  std::string text = kGood;  // the user insists
  text.replace(text.find("compute_cpu = 1\n"), 16, "compute_cpu = 1\noversubscribe = true\n");
  PipelineConfig insist = parse_pipeline_config(text, "run.toml", "base");
  EXPECT_TRUE(insist.oversubscribe);
  insist.feed_idle = insist.compute_idle = "spin";
  insist.threading = ThreadingMode::Rings;
  insist.agents = 4;
  const std::string kept = fit_spinning_to_cpus(insist, 2);
  EXPECT_NE(kept.find("5 busy-spinning threads"), std::string::npos) << kept;
  EXPECT_NE(kept.find("spinning anyway"), std::string::npos) << kept;
  EXPECT_EQ(insist.compute_idle, "spin");
}

// [feed] protocol: the default, ITCH 5.0 with its symbols and date, and each mistake named.
TEST(PipelineConfig, FeedProtocolItch) {
  EXPECT_EQ(parse_pipeline_config(kGood, "run.toml", "base").protocol, "tickinfer");
  const PipelineConfig c = parse_pipeline_config(
      with("gap_timeout_us = 500",
           "gap_timeout_us = 500\nprotocol = \"itch50\"\nsymbols = [\"AAPL\", \"MSFT\"]\ndate = \"2019-12-30\"\n"
           "max_orders = 65536"),
      "run.toml", "base");
  EXPECT_EQ(c.protocol, "itch50");
  EXPECT_EQ(c.itch_symbols, (std::vector<std::string>{"AAPL", "MSFT"}));
  EXPECT_EQ(c.trading_date, "2019-12-30");
  EXPECT_EQ(c.itch_max_orders, 65536u);
  struct Case {
    std::string to, expect;
  } cases[] = {
      {"protocol = \"fix\"", "[feed] protocol = 'fix': expected tickinfer or itch50"},
      {"protocol = \"itch50\"\ndate = \"2019-12-30\"", "needs symbols"},
      {"protocol = \"itch50\"\nsymbols = [\"AAPL\"]", "needs symbols (instrument i + 1 is symbols[i]) and date"},
      {"protocol = \"itch50\"\nsymbols = [\"AAPL\"]\ndate = \"2019-02-30\"", "[feed] date = '2019-02-30': expected a date"},
      {"protocol = \"itch50\"\nsymbols = []\ndate = \"2019-12-30\"", "[feed] symbols must be a non-empty array"},
      {"symbols = [\"AAPL\"]", "symbols and date belong to protocol = 'itch50'"},
  };
  for (const auto& k : cases) {
    const std::string err = error_of(with("gap_timeout_us = 500", "gap_timeout_us = 500\n" + k.to));
    EXPECT_NE(err.find(k.expect), std::string::npos) << "for " << k.to << ": " << err;
  }
}
