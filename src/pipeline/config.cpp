// TOML pipeline configuration parser (toml++). Every section and key is checked; errors carry the
// file and line.
#include "pipeline/config.hpp"

#include <cctype>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "engine/device_options.hpp"
#include "itch/session_date.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::pipeline {

const char* to_string(ModelTrigger t) {
  switch (t) {
    case ModelTrigger::Tick: return "tick";
    case ModelTrigger::Window: return "window";
    case ModelTrigger::Stream: return "stream";
  }
  return "?";
}

const char* to_string(FlushPolicy p) {
  switch (p) {
    case FlushPolicy::Record: return "record";
    case FlushPolicy::Interval: return "interval";
    case FlushPolicy::Exit: return "exit";
  }
  return "?";
}

Endpoint parse_endpoint(const std::string& text, const std::string& what) {
  if (text.empty() || text == "none") return Endpoint{"", 0};
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    throw Error(what + ": expected HOST:PORT or \"none\", got '" + text + "'");
  const std::string port = text.substr(colon + 1);
  long p = -1;
  try {
    std::size_t used = 0;
    p = std::stol(port, &used);
    if (used != port.size()) p = -1;
  } catch (...) {
    p = -1;
  }
  if (p < 1 || p > 65535) throw Error(what + ": port '" + port + "' is not in [1, 65535]");
  return Endpoint{text.substr(0, colon), static_cast<std::uint16_t>(p)};
}

namespace {

class Parser {
 public:
  Parser(std::string source, std::string base) : source_(std::move(source)), base_(std::move(base)) {}

  [[noreturn]] void fail(int line, const std::string& what) const {
    std::ostringstream o;
    o << "config '" << source_ << "': ";
    if (line > 0) o << "line " << line << ": ";
    o << what;
    throw Error(o.str());
  }
  static int line_of(const toml::node& n) { return static_cast<int>(n.source().begin.line); }

  std::int64_t integer(const toml::node& n, const std::string& what, std::int64_t lo, std::int64_t hi) const {
    const auto* v = n.as_integer();
    if (!v) fail(line_of(n), what + " must be an integer");
    const std::int64_t x = v->get();
    if (x < lo || x > hi)
      fail(line_of(n), what + " = " + std::to_string(x) + " is out of range [" + std::to_string(lo) + ", " +
                           std::to_string(hi) + "]");
    return x;
  }
  double number(const toml::node& n, const std::string& what, double lo, double hi) const {
    double x = 0;
    if (const auto* f = n.as_floating_point()) x = f->get();
    else if (const auto* i = n.as_integer()) x = static_cast<double>(i->get());
    else fail(line_of(n), what + " must be a number");
    if (!std::isfinite(x) || x < lo || x > hi) {
      std::ostringstream o;
      o << what << " = " << x << " is out of range [" << lo << ", " << hi << "]";
      fail(line_of(n), o.str());
    }
    return x;
  }
  std::string string(const toml::node& n, const std::string& what) const {
    const auto* s = n.as_string();
    if (!s) fail(line_of(n), what + " must be a string");
    return s->get();
  }
  bool boolean(const toml::node& n, const std::string& what) const {
    const auto* b = n.as_boolean();
    if (!b) fail(line_of(n), what + " must be true or false");
    return b->get();
  }
  Endpoint endpoint(const toml::node& n, const std::string& what) const {
    const std::string s = string(n, what);
    try {
      return parse_endpoint(s, what);
    } catch (const Error& e) {
      fail(line_of(n), e.what());
    }
  }
  std::string path(const toml::node& n, const std::string& what) const {
    std::string p = string(n, what);
    if (p.empty()) fail(line_of(n), what + " must not be empty");
    if (p[0] != '/' && base_ != ".") p = base_ + "/" + p;
    return p;
  }
  std::string idle(const toml::node& n, const std::string& what) const {
    const std::string s = string(n, what);
    if (s != "spin" && s != "yield" && s != "backoff" && s != "block")
      fail(line_of(n), what + " = '" + s + "': expected spin, yield, backoff or block");
    return s;
  }
  [[noreturn]] void unknown(const toml::key& key, const std::string& section, const char* expected) const {
    fail(static_cast<int>(key.source().begin.line),
         "unknown key '" + std::string(key.str()) + "' in " + section + " (expected " + expected + ")");
  }

  void parse_feed(const toml::table& t, PipelineConfig& c) {
    for (auto&& [key, n] : t) {
      const std::string k(key.str());
      if (k == "line_a") c.line_a = endpoint(n, "[feed] line_a");
      else if (k == "line_b") c.line_b = endpoint(n, "[feed] line_b");
      else if (k == "interface") c.interface = string(n, "[feed] interface");
      else if (k == "recovery") c.recovery = endpoint(n, "[feed] recovery");
      else if (k == "session") c.session = string(n, "[feed] session");
      else if (k == "idle") c.feed_idle = idle(n, "[feed] idle");
      else if (k == "gap_timeout_us") c.gap_timeout_ns = integer(n, "[feed] gap_timeout_us", 1, 10'000'000) * 1000;
      else if (k == "recovery_timeout_us")
        c.recovery_timeout_ns = integer(n, "[feed] recovery_timeout_us", 1, 10'000'000) * 1000;
      else if (k == "recovery_attempts")
        c.recovery_attempts = static_cast<int>(integer(n, "[feed] recovery_attempts", 1, 1000));
      else if (k == "rcvbuf_bytes") c.rcvbuf_bytes = static_cast<int>(integer(n, "[feed] rcvbuf_bytes", 4096, 1 << 30));
      else if (k == "protocol") {
        c.protocol = string(n, "[feed] protocol");
        if (c.protocol != "tickinfer" && c.protocol != "itch50")
          fail(line_of(n), "[feed] protocol = '" + c.protocol + "': expected tickinfer or itch50");
      } else if (k == "symbols") {
        const auto* a = n.as_array();
        if (!a || a->empty()) fail(line_of(n), "[feed] symbols must be a non-empty array of strings");
        for (auto&& e : *a) c.itch_symbols.push_back(string(e, "[feed] symbols entry"));
      } else if (k == "date") {
        c.trading_date = string(n, "[feed] date");
        if (!itch::parse_iso_date(c.trading_date))
          fail(line_of(n), "[feed] date = '" + c.trading_date + "': expected a date YYYY-MM-DD");
      } else if (k == "max_orders") {
        c.itch_max_orders = static_cast<std::uint32_t>(integer(n, "[feed] max_orders", 1024, 1 << 30));
      } else unknown(key, "[feed]", "line_a, line_b, interface, recovery, session, idle, gap_timeout_us, "
                                    "recovery_timeout_us, recovery_attempts, rcvbuf_bytes, protocol, symbols, "
                                    "date, max_orders");
    }
    if (!c.line_a.enabled()) fail(line_of(t), "[feed] line_a is required");
    if (c.protocol == "itch50" && (c.itch_symbols.empty() || c.trading_date.empty()))
      fail(line_of(t), "[feed] protocol = 'itch50' needs symbols (instrument i + 1 is symbols[i]) and date");
    if (c.protocol != "itch50" && (!c.itch_symbols.empty() || !c.trading_date.empty()))
      fail(line_of(t), "[feed] symbols and date belong to protocol = 'itch50'");
  }

  ModelConfig parse_model(const toml::table& t) {
    ModelConfig m;
    m.line = line_of(t);
    for (auto&& [key, n] : t) {
      const std::string k(key.str());
      if (k == "name") m.name = string(n, "[[model]] name");
      else if (k == "path") m.path = path(n, "[[model]] path");
      else if (k == "version") m.version = static_cast<std::uint32_t>(integer(n, "[[model]] version", 0, 0xFFFFFFFFll));
      else if (k == "mode") {
        const std::string s = string(n, "[[model]] mode");
        if (s == "tick") m.trigger = ModelTrigger::Tick;
        else if (s == "window") m.trigger = ModelTrigger::Window;
        else if (s == "stream") m.trigger = ModelTrigger::Stream;
        else fail(line_of(n), "[[model]] mode = '" + s + "': expected tick, window or stream");
      } else if (k == "window") m.window = static_cast<int>(integer(n, "[[model]] window", 0, 100000));
      else if (k == "instruments") {
        const auto* a = n.as_array();
        if (!a) fail(line_of(n), "[[model]] instruments must be an array of integers");
        for (const auto& e : *a)
          m.instruments.push_back(static_cast<std::uint32_t>(integer(e, "[[model]] instruments element", 0, 0xFFFFFFFFll)));
      } else if (k == "outputs") {
        const auto* a = n.as_array();
        if (!a || a->empty() || a->size() > 4) fail(line_of(n), "[[model]] outputs must be an array of 1 to 4 integers");
        m.outputs.clear();
        for (const auto& e : *a) m.outputs.push_back(static_cast<int>(integer(e, "[[model]] outputs element", 0, 1 << 20)));
      } else if (k == "center") m.center = number(n, "[[model]] center", -1e30, 1e30);
      else if (k == "threshold") m.threshold = number(n, "[[model]] threshold", 0, 1e30);
      else if (k == "check_signature") m.check_signature = boolean(n, "[[model]] check_signature");
      else if (k == "incremental") m.incremental = boolean(n, "[[model]] incremental");
      else if (k == "device") {
        m.device = string(n, "[[model]] device");
        try {
          engine::cuda_device_index(m.device);  // the engine's grammar: cpu, cuda, cuda:N
        } catch (const Error& e) {
          fail(line_of(n), std::string("[[model]] device: ") + e.what());
        }
      }
      else if (k == "tflite_engine") {
        const std::string s = string(n, "[[model]] tflite_engine");
        try {
          m.tflite_engine = parse_tflite_engine(s);
        } catch (const Error& e) {
          fail(line_of(n), std::string("[[model]] tflite_engine: ") + e.what());
        }
      } else unknown(key, "[[model]]", "name, path, version, mode, window, instruments, outputs, center, threshold, "
                                       "check_signature, tflite_engine, incremental, device");
    }
    if (m.incremental && m.trigger != ModelTrigger::Window)
      fail(m.line, "[[model]] incremental = true is for mode = \"window\" (a stream model updates per step already)");
    if (m.incremental && engine::cuda_device_index(m.device) >= 0)
      fail(m.line, "[[model]] incremental = true runs on the CPU plans; device = \"" + m.device + "\" does not take it");
    if (m.name.empty()) fail(m.line, "[[model]] needs a name");
    if (m.name.size() > 15) fail(m.line, "[[model]] name '" + m.name + "' is longer than 15 characters (it travels in every signal)");
    if (m.path.empty()) fail(m.line, "[[model]] '" + m.name + "' needs a path");
    return m;
  }

  void parse_threading(const toml::table& t, PipelineConfig& c) {
    for (auto&& [key, n] : t) {
      const std::string k(key.str());
      if (k == "mode") {
        const std::string s = string(n, "[threading] mode");
        if (s == "inline") c.threading = ThreadingMode::Inline;
        else if (s == "rings") c.threading = ThreadingMode::Rings;
        else fail(line_of(n), "[threading] mode = '" + s + "': expected inline or rings");
      } else if (k == "feed_cpu") c.feed_cpu = static_cast<int>(integer(n, "[threading] feed_cpu", -1, 4095));
      else if (k == "compute_cpu") c.compute_cpu = static_cast<int>(integer(n, "[threading] compute_cpu", -1, 4095));
      else if (k == "compute_idle") c.compute_idle = idle(n, "[threading] compute_idle");
      else if (k == "oversubscribe") c.oversubscribe = boolean(n, "[threading] oversubscribe");
      else if (k == "ring_capacity") {
        const auto v = integer(n, "[threading] ring_capacity", 2, 1 << 24);
        if (v & (v - 1)) fail(line_of(n), "[threading] ring_capacity must be a power of two");
        c.ring_capacity = static_cast<std::size_t>(v);
      } else if (k == "agents") c.agents = static_cast<int>(integer(n, "[threading] agents", 1, 64));
      else if (k == "agent_cpus") {
        const auto* a = n.as_array();
        if (!a || a->empty()) fail(line_of(n), "[threading] agent_cpus must be a non-empty array of integers");
        for (const auto& e : *a) c.agent_cpus.push_back(static_cast<int>(integer(e, "[threading] agent_cpus element", -1, 4095)));
      } else if (k == "agent_instruments") {
        const auto* a = n.as_array();
        if (!a || a->empty()) fail(line_of(n), "[threading] agent_instruments must be an array of arrays of instrument ids, one per agent");
        for (const auto& row : *a) {
          const auto* r = row.as_array();
          if (!r) fail(line_of(n), "[threading] agent_instruments must be an array of arrays of instrument ids, one per agent");
          c.agent_instruments.emplace_back();
          for (const auto& e : *r)
            c.agent_instruments.back().push_back(
                static_cast<std::uint32_t>(integer(e, "[threading] agent_instruments element", 0, 0xFFFFFFFFll)));
        }
      } else unknown(key, "[threading]", "mode, feed_cpu, compute_cpu, compute_idle, oversubscribe, ring_capacity, agents, "
                                         "agent_cpus, agent_instruments");
    }
    threading_line_ = static_cast<int>(t.source().begin.line);
  }

  void parse_shard(const toml::table& t, PipelineConfig& c) {
    bool have_index = false, have_count = false;
    int line = 0;
    for (auto&& [key, n] : t) {
      const std::string k(key.str());
      line = static_cast<int>(key.source().begin.line);
      if (k == "index") {
        c.shard.index = static_cast<int>(integer(n, "[shard] index", 0, 4095));
        have_index = true;
      } else if (k == "count") {
        c.shard.count = static_cast<int>(integer(n, "[shard] count", 1, 4096));
        have_count = true;
      } else if (k == "instruments") {
        const auto* a = n.as_array();
        if (!a || a->empty()) fail(line_of(n), "[shard] instruments must be a non-empty array of integers");
        for (const auto& e : *a)
          c.shard.instruments.push_back(static_cast<std::uint32_t>(integer(e, "[shard] instruments element", 0, 0xFFFFFFFFll)));
      } else unknown(key, "[shard]", "index, count, instruments");
    }
    if (!c.shard.instruments.empty() && (have_index || have_count))
      fail(line, "[shard]: give either index and count, or instruments, not both");
    if (c.shard.instruments.empty() && have_index != have_count) fail(line, "[shard]: index and count go together");
    if (c.shard.index >= c.shard.count)
      fail(line, "[shard] index " + std::to_string(c.shard.index) + " is not below count " + std::to_string(c.shard.count));
  }

  // A POSIX shared-memory object name without its leading '/'.
  std::string shm_name(const toml::node& n, const std::string& what) const {
    std::string v = string(n, what);
    if (v.empty()) fail(line_of(n), what + " is empty");
    for (char ch : v)
      if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.'))
        fail(line_of(n), what + " = '" + v + "': use letters, digits, '-', '_' or '.'");
    return v;
  }

  void parse_signals(const toml::table& t, PipelineConfig& c) {
    for (auto&& [key, n] : t) {
      const std::string k(key.str());
      if (k == "udp") c.udp = endpoint(n, "[signals] udp");
      else if (k == "multicast_interface") c.multicast_interface = string(n, "[signals] multicast_interface");
      else if (k == "shm") {
        c.shm = shm_name(n, "[signals] shm");
      } else if (k == "shm_capacity") {
        const auto v = integer(n, "[signals] shm_capacity", 2, 1 << 24);
        if (v & (v - 1)) fail(line_of(n), "[signals] shm_capacity must be a power of two");
        c.shm_capacity = static_cast<std::size_t>(v);
      } else if (k == "udp_batch") {
        const std::string v = string(n, "[signals] udp_batch");
        if (v == "packet") c.udp_batch = SignalBatching::Packet;
        else if (v == "message") c.udp_batch = SignalBatching::Message;
        else fail(line_of(n), "[signals] udp_batch = '" + v + "': use packet or message");
      } else if (k == "tx_timestamps") {
        c.tx_timestamps = boolean(n, "[signals] tx_timestamps");
      } else unknown(key, "[signals]", "udp, udp_batch, tx_timestamps, multicast_interface, shm, shm_capacity");
    }
  }

  void parse_log(const toml::table& t, PipelineConfig& c) {
    for (auto&& [key, n] : t) {
      const std::string k(key.str());
      if (k == "path") c.log_path = path(n, "[decision_log] path");
      else if (k == "flush") {
        const std::string s = string(n, "[decision_log] flush");
        if (s == "record") c.flush = FlushPolicy::Record;
        else if (s == "interval") c.flush = FlushPolicy::Interval;
        else if (s == "exit") c.flush = FlushPolicy::Exit;
        else fail(line_of(n), "[decision_log] flush = '" + s + "': expected record, interval or exit");
      } else if (k == "flush_interval_ms")
        c.flush_interval_ns = static_cast<std::int64_t>(number(n, "[decision_log] flush_interval_ms", 0.001, 3.6e6) * 1e6);
      else if (k == "fsync") c.fsync = boolean(n, "[decision_log] fsync");
      else if (k == "full_vectors") c.full_vectors = boolean(n, "[decision_log] full_vectors");
      else if (k == "buffer_bytes")
        c.log_buffer_bytes = static_cast<std::size_t>(integer(n, "[decision_log] buffer_bytes", 65536, 1ll << 30));
      else if (k == "writer_thread") c.log_writer_thread = boolean(n, "[decision_log] writer_thread");
      else unknown(key, "[decision_log]", "path, flush, flush_interval_ms, fsync, full_vectors, buffer_bytes, writer_thread");
    }
  }

  void parse_warmup(const toml::table& t, PipelineConfig& c) {
    for (auto&& [key, n] : t) {
      const std::string k(key.str());
      if (k == "min_iterations") c.warmup_min_iterations = static_cast<int>(integer(n, "[warmup] min_iterations", 0, 100'000'000));
      else if (k == "max_iterations") c.warmup_max_iterations = static_cast<int>(integer(n, "[warmup] max_iterations", 1, 100'000'000));
      else if (k == "block") c.warmup_block = static_cast<int>(integer(n, "[warmup] block", 10, 1'000'000));
      else if (k == "tolerance") c.warmup_tolerance = number(n, "[warmup] tolerance", 0.0, 10.0);
      else if (k == "stable_blocks") c.warmup_stable_blocks = static_cast<int>(integer(n, "[warmup] stable_blocks", 1, 1000));
      else unknown(key, "[warmup]", "min_iterations, max_iterations, block, tolerance, stable_blocks");
    }
    if (c.warmup_max_iterations < c.warmup_min_iterations)
      fail(line_of(t), "[warmup] max_iterations is below min_iterations");
  }

  void parse_run(const toml::table& t, PipelineConfig& c) {
    for (auto&& [key, n] : t) {
      const std::string k(key.str());
      if (k == "seconds") c.seconds = number(n, "[run] seconds", 0, 1e7);
      else if (k == "ready_file") c.ready_file = path(n, "[run] ready_file");
      else if (k == "metrics") c.metrics = endpoint(n, "[run] metrics");
      else if (k == "status_interval_ms")
        c.status_interval_ns = integer(n, "[run] status_interval_ms", 10, 3'600'000) * 1'000'000;
      else if (k == "report") c.report = path(n, "[run] report");
      else if (k == "feed_silence_s") c.feed_silence_s = number(n, "[run] feed_silence_s", 0.01, 1e6);
      else if (k == "quiet") c.quiet = boolean(n, "[run] quiet");
      else unknown(key, "[run]", "seconds, ready_file, metrics, status_interval_ms, report, feed_silence_s, quiet");
    }
  }

  PipelineConfig parse(std::string_view text) {
    int line = 1;
    for (char ch : text) {  // ASCII only (see feature_spec.cpp: toml++ 3.3 misbehaves on some code points)
      const auto c = static_cast<unsigned char>(ch);
      if (c == '\n') ++line;
      if (c >= 0x80 || c == 0) fail(line, "non-ASCII byte (configurations are ASCII text)");
    }
    toml::table root;
    try {
      root = toml::parse(text, source_);
    } catch (const toml::parse_error& e) {
      fail(static_cast<int>(e.source().begin.line), std::string(e.description()));
    }
    PipelineConfig c;
    c.source = source_;
    bool have_feed = false, have_features = false;
    for (auto&& [key, node] : root) {
      const std::string k(key.str());
      const int kl = static_cast<int>(key.source().begin.line);
      const toml::node& nd = node;  // clang 14 cannot capture a structured binding
      auto table = [&](const char* name) -> const toml::table& {
        if (!nd.is_table()) fail(kl, std::string("[") + name + "] must be a table");
        return *nd.as_table();
      };
      if (k == "feed") { parse_feed(table("feed"), c); have_feed = true; }
      else if (k == "features") {
        for (auto&& [fk, fn] : table("features")) {
          if (fk.str() == "spec") c.feature_spec = path(fn, "[features] spec");
          else if (fk.str() == "shm") c.features_shm = shm_name(fn, "[features] shm");
          else if (fk.str() == "shm_ttl_ms")
            c.features_shm_ttl_ns = integer(fn, "[features] shm_ttl_ms", 0, 86'400'000) * 1'000'000;
          else if (fk.str() == "ring") c.features_ring = shm_name(fn, "[features] ring");
          else if (fk.str() == "ring_capacity") {
            const auto v = integer(fn, "[features] ring_capacity", 2, 1 << 24);
            if (v & (v - 1)) fail(line_of(fn), "[features] ring_capacity must be a power of two");
            c.features_ring_capacity = static_cast<std::size_t>(v);
          } else if (fk.str() == "udp") c.features_udp = endpoint(fn, "[features] udp");
          else unknown(fk, "[features]", "spec, shm, shm_ttl_ms, ring, ring_capacity, udp");
        }
        have_features = true;
      } else if (k == "model") {
        const auto* arr = node.as_array();
        if (!arr) fail(kl, "'model' must be an array of tables ([[model]])");
        for (const auto& m : *arr) {
          if (!m.is_table()) fail(line_of(m), "each [[model]] must be a table");
          c.models.push_back(parse_model(*m.as_table()));
        }
      } else if (k == "threading") parse_threading(table("threading"), c);
      else if (k == "signals") parse_signals(table("signals"), c);
      else if (k == "decision_log") parse_log(table("decision_log"), c);
      else if (k == "warmup") parse_warmup(table("warmup"), c);
      else if (k == "run") parse_run(table("run"), c);
      else if (k == "shard") parse_shard(table("shard"), c);
      else fail(kl, "unknown section '" + k + "' (expected feed, features, model, shard, threading, signals, "
                    "decision_log, warmup, run)");
    }
    if (!have_feed) fail(0, "missing [feed] section");
    if (!have_features || c.feature_spec.empty()) fail(0, "missing [features] spec = \"FILE\"");
    if (c.models.empty()) fail(0, "no [[model]]: nothing to run");
    std::set<std::string> names;
    for (const auto& m : c.models)
      if (!names.insert(m.name).second) fail(m.line, "duplicate model name '" + m.name + "'");
    if (c.models.size() > 64) fail(0, "at most 64 models");
    if (const std::string p = agents_problem(c); !p.empty()) fail(threading_line_, p);
    return c;
  }

 private:
  std::string source_, base_;
  int threading_line_ = 0;  // where [threading] starts (its agents are checked once all is read)
};

}  // namespace

bool ShardConfig::owns(std::uint32_t instrument) const {
  if (!instruments.empty()) {
    for (auto i : instruments)
      if (i == instrument) return true;
    return false;
  }
  return static_cast<int>(instrument % static_cast<std::uint32_t>(count)) == index;
}

std::string agents_problem(const PipelineConfig& c) {
  const auto n = static_cast<std::size_t>(c.agents);
  if (c.agent_cpus.size() > n)
    return "[threading] agent_cpus lists " + std::to_string(c.agent_cpus.size()) + " CPUs for " +
           std::to_string(c.agents) + " agent(s)";
  if (c.agent_instruments.size() > n)
    return "[threading] agent_instruments has " + std::to_string(c.agent_instruments.size()) + " lists for " +
           std::to_string(c.agents) + " agent(s)";
  std::set<std::uint32_t> seen;
  for (const auto& l : c.agent_instruments)
    for (auto id : l)
      if (!seen.insert(id).second)
        return "[threading] agent_instruments: instrument " + std::to_string(id) + " is listed for two agents";
  if (c.agents > 1 && c.threading != ThreadingMode::Rings)
    return "[threading] agents = " + std::to_string(c.agents) +
           " needs mode = \"rings\" (the feed thread hands each agent its instruments' events)";
  if (c.agents > 1 && (!c.features_ring.empty() || c.features_udp.enabled()))
    return "[features] ring and udp carry one numbered stream from one writer: not with [threading] agents > 1 "
           "(the shm store, signals and the decision log are)";
  return "";
}

// Fibonacci hashing: consecutive ids spread over the agents, and the split is independent of a
// [shard]'s id % count (agents of shard 0 of 2 would otherwise get only even ids modulo 2).
int agent_of(const PipelineConfig& c, std::uint32_t instrument) {
  for (std::size_t k = 0; k < c.agent_instruments.size(); ++k)
    for (auto id : c.agent_instruments[k])
      if (id == instrument) return static_cast<int>(k);
  const std::uint64_t h = (static_cast<std::uint64_t>(instrument) + 1) * 0x9E3779B97F4A7C15ull;
  return static_cast<int>((h >> 32) % static_cast<std::uint64_t>(c.agents));
}

PipelineConfig parse_pipeline_config(std::string_view text, const std::string& source, const std::string& base_dir) {
  return Parser(source, base_dir).parse(text);
}

PipelineConfig load_pipeline_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("config '" + path + "': cannot open");
  std::ostringstream s;
  s << in.rdbuf();
  const auto slash = path.find_last_of('/');
  const std::string base = slash == std::string::npos ? "." : path.substr(0, slash);
  return parse_pipeline_config(s.str(), path, base);
}

}  // namespace tickinfer::pipeline
