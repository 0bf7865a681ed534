#pragma once
// The `tickinfer run` configuration: one TOML file (docs/pipeline.md lists every key) naming the
// feed lines, the feature specification, the models and how they are routed, the threading mode,
// the signal outputs, the decision log, warmup, readiness, metrics and run length.
//
// Errors: parse_pipeline_config throws tickinfer::Error naming the file, the 1-based line and the
// problem ("config 'run.toml': line 7: [feed] line_a: expected HOST:PORT, got '127.0.0.1'"),
// before anything is started. Unknown keys are errors (a typo never silently becomes a default).
// Relative paths are resolved against the configuration file's directory.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tickinfer/tickinfer.hpp"

namespace tickinfer::pipeline {

struct Endpoint {
  std::string host;
  std::uint16_t port = 0;
  bool enabled() const { return port != 0; }
};

enum class ModelTrigger : std::uint8_t {
  Tick,    // every accepted event: the instrument's current feature vector (width floats)
  Window,  // every closed bar: the [window, width] block of the last rows
  Stream,  // every closed bar: the newest row, through a stream-mode (stateful) plan
};
const char* to_string(ModelTrigger t);

struct ModelConfig {
  std::string name;          // <= 15 characters: it travels in every signal
  std::string path;          // .keras / .h5
  std::uint32_t version = 1;
  ModelTrigger trigger = ModelTrigger::Tick;
  int window = 0;            // Window mode: time steps (0: the model's own, or the spec's window)
  std::vector<std::uint32_t> instruments;  // routed instruments; empty = every instrument of the spec
  std::vector<int> outputs = {0};          // model output elements that become the signal's scores (<= 4)
  double center = 0.0;       // decision: +1 when score0 > center + threshold, -1 when < center - threshold
  double threshold = 0.0;
  bool check_signature = true;  // refuse the model unless features.toml beside it equals the spec
  TfliteEngine tflite_engine = TfliteEngine::Auto;  // a float TFLite model: graph engine or interpreter
  // Window mode: incremental window updates (docs/incremental.md), one plan per instrument so each
  // instrument's window slides through its own plan.
  bool incremental = false;
  // Where its plans run: "" (the CPU plans), "cuda" or "cuda:N" (that GPU, docs/gpu.md).
  std::string device;
  int line = 0;
};

enum class SignalBatching { Packet, Message };

enum class ThreadingMode : std::uint8_t {
  Inline,  // one thread: receive, sequence, features, model, signal
  Rings,   // feed thread -> SpscRing<FeedEvent> -> compute thread (features, model, signal)
};

enum class FlushPolicy : std::uint8_t {
  Record,    // write(2) after every record (the hot thread pays one syscall per signal)
  Interval,  // write(2) when the buffer is older than flush_interval_ms or half full
  Exit,      // only when the buffer is full and at exit (fastest; a crash loses the most)
};
const char* to_string(FlushPolicy p);

// [shard]: this process handles a part of the instrument universe; several processes behind the
// same feed (a multicast group, or each its own) split it with no change to the models.
struct ShardConfig {
  int index = 0, count = 1;                 // shard `index` of `count` (count 1: the whole universe)
  std::vector<std::uint32_t> instruments;   // explicit: exactly these (index/count then unused)
  bool enabled() const { return count > 1 || !instruments.empty(); }
  // Whether this shard owns `instrument`: the explicit list, else instrument % count == index.
  bool owns(std::uint32_t instrument) const;
};

struct PipelineConfig {
  std::string source;  // the file it came from (for messages)

  // [feed]
  Endpoint line_a{"127.0.0.1", 31001};
  Endpoint line_b{"127.0.0.1", 31002};  // port 0: no line B
  std::string interface = "0.0.0.0";
  Endpoint recovery{"127.0.0.1", 31000};  // port 0: no re-requests (gaps are skipped)
  std::string session;
  std::string feed_idle = "spin";
  std::int64_t gap_timeout_ns = 1'000'000;
  std::int64_t recovery_timeout_ns = 5'000'000;
  int recovery_attempts = 4;
  int rcvbuf_bytes = 16 << 20;
  // The payload inside MoldUDP64: "tickinfer" (its own Q/T messages) or "itch50" (NASDAQ
  // TotalView-ITCH 5.0 through full-depth books; instrument i + 1 is itch_symbols[i]).
  std::string protocol = "tickinfer";
  std::vector<std::string> itch_symbols;
  std::string trading_date;             // itch50: YYYY-MM-DD (ITCH times are ns since midnight)
  std::uint32_t itch_max_orders = 1u << 22;  // itch50: live orders the books preallocate

  // [features]
  std::string feature_spec;
  std::string features_shm;            // shared-memory feature store name ("" = off)
  std::int64_t features_shm_ttl_ns = 0;  // an entry older than this reads as stale (0: never)
  std::string features_ring;            // shared-memory feature ring name: every vector, in order ("" = off)
  std::size_t features_ring_capacity = 65536;  // records, power of two
  Endpoint features_udp;                // feature vectors over UDP (a multicast group); port 0: off

  // [[model]]
  std::vector<ModelConfig> models;

  // [shard]
  ShardConfig shard;

  // [threading]
  ThreadingMode threading = ThreadingMode::Inline;
  std::string compute_idle = "spin";
  // Keep "spin" idle strategies even when the spinning threads outnumber the usable CPUs
  // (pipeline/spin_budget.hpp); false: they fall back to "backoff", with a warning.
  bool oversubscribe = false;
  int feed_cpu = -1;     // -1: not pinned
  int compute_cpu = -1;  // Rings: the compute thread; Inline: the one thread
  std::size_t ring_capacity = 4096;
  // Compute agents (Rings only): the instruments split over `agents` compute threads, each fed by
  // its own SpscRing from the feed thread and owning its instruments' features, recurrent state
  // and model plans (clones sharing the weights). agent_cpus[k] pins agent k (-1 or absent:
  // compute_cpu for agent 0, unpinned for the others). agent_instruments[k] lists instruments
  // agent k owns; every other instrument goes to agent hash(id) % agents (AgentMap).
  int agents = 1;
  std::vector<int> agent_cpus;
  std::vector<std::vector<std::uint32_t>> agent_instruments;

  // [signals]
  Endpoint udp;                       // port 0: off
  std::string multicast_interface;    // for a multicast destination
  std::string shm;                    // shared-memory ring name ("" = off)
  std::size_t shm_capacity = 65536;   // slots, power of two
  // Packet: the signals one inbound datagram produced leave together, in one UDP datagram (up to
  // kMaxSignalsPerDatagram), after the last of them is computed; Message: one datagram per signal,
  // sent as soon as it is computed.
  SignalBatching udp_batch = SignalBatching::Packet;
  // Read the kernel's transmit timestamp of every UDP signal datagram back (tx_stamps.hpp): the
  // rx_to_tx and end_to_end_tx stages. Read only in idle rounds, several per syscall.
  bool tx_timestamps = true;

  // [decision_log]
  std::string log_path;               // "" = off
  FlushPolicy flush = FlushPolicy::Interval;
  std::int64_t flush_interval_ns = 10'000'000;
  bool fsync = false;
  bool full_vectors = true;
  std::size_t log_buffer_bytes = 4 << 20;
  bool log_writer_thread = true;      // write(2) on a writer thread, never on the compute thread

  // [warmup]
  int warmup_min_iterations = 2000;
  int warmup_max_iterations = 200000;
  int warmup_block = 500;             // iterations per latency block
  double warmup_tolerance = 0.10;     // stable: consecutive block p50s within this fraction
  int warmup_stable_blocks = 3;

  // [run]
  double seconds = 0;                 // 0: until End of Session (or a signal)
  std::string ready_file;
  Endpoint metrics;                   // port 0: off
  std::int64_t status_interval_ns = 1'000'000'000;
  std::string report;                 // run statistics JSON ("" = none)
  double feed_silence_s = 10;         // no data this long: degraded; 2x this: exit with an error
  bool quiet = false;
  // Set by `tickinfer run --check`: Pipeline's constructor stops after the spec and the models are
  // loaded and checked (no socket, shm ring or log file is touched); only the constructor may run.
  bool check_only = false;
};

// What makes the [threading] agents settings unusable ("" when nothing): the file parser and the
// Pipeline (after command-line overrides) both refuse with it.
std::string agents_problem(const PipelineConfig& c);

// The compute agent that owns `instrument`: its agent_instruments list, else a hash of the id.
// Set-up only (a linear scan of the lists).
int agent_of(const PipelineConfig& c, std::uint32_t instrument);

PipelineConfig parse_pipeline_config(std::string_view text, const std::string& source,
                                     const std::string& base_dir = ".");
PipelineConfig load_pipeline_config(const std::string& path);

// "host:port" -> Endpoint; "" / "none" -> disabled. Throws tickinfer::Error naming `what`.
Endpoint parse_endpoint(const std::string& text, const std::string& what);

}  // namespace tickinfer::pipeline
