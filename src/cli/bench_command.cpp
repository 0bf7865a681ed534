// `tickinfer bench MODEL`: closed-loop latency of single Plan::run calls, back to back.
//
// Method: 1024 input sets of N(0, 1) values (fixed seed) are prepared up front and cycled through
// so branch predictors and caches see varied data without any generation cost in the loop. After
// a warm-up, each call is bracketed by a clock read pair (see bench_clock.hpp: rdtsc when the TSC
// is invariant, else steady_clock) and recorded into a LatencyHistogram. Numbers are raw: they
// include one clock pair, whose median cost is reported separately as timer_overhead_ns.
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cli/bench_clock.hpp"
#include "cli/commands.hpp"
#include "cli/load_warnings.hpp"
#include "cli/machine_info.hpp"
#include "cli/plan_options.hpp"
#include "stats/latency_histogram.hpp"
#include "stats/latency_summary.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer::cli {

namespace {

constexpr size_t kInputSets = 1024;  // power of two: the loop cycles with a mask
constexpr double kCalibrationSeconds = 0.05;
constexpr int kOverheadPairs = 20000;

// Inputs for every run, prepared before timing. pointers[k * num_inputs + i] is input i of set k.
struct PreparedInputs {
  std::vector<std::vector<float>> storage;
  std::vector<const float*> pointers;
};

// slide: set k of input i is rows k .. k + T - 1 of one sequence whose rows repeat with period
// kInputSets, so every set (the last into the first too) is the previous one moved by one row:
// what a window model sees from a feed that appends a snapshot per event. An input that is no
// window (a decoder's start token beside the snapshot window) keeps one value.
PreparedInputs prepare_inputs(const Plan& plan, uint64_t seed, bool slide) {
  PreparedInputs p;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  p.storage.resize(plan.num_inputs());
  std::vector<size_t> stride(plan.num_inputs());
  size_t windows = 0;
  for (size_t i = 0; i < plan.num_inputs(); ++i) {
    const Shape& s = plan.input_shape(i);
    if (!slide) {
      stride[i] = plan.input_size(i);
      p.storage[i].resize(kInputSets * stride[i]);
      for (float& v : p.storage[i]) v = normal(rng);
      continue;
    }
    if (plan.mode() != RecurrentMode::Window) throw UsageError("option '--slide' needs window mode");
    if (s.size() < 2 || s[0] < 2) {
      stride[i] = 0;
      p.storage[i].resize(plan.input_size(i));
      for (float& v : p.storage[i]) v = normal(rng);
      continue;
    }
    ++windows;
    stride[i] = plan.input_size(i) / static_cast<size_t>(s[0]);  // one row
    const size_t period = kInputSets * stride[i];
    p.storage[i].resize(period + plan.input_size(i));
    for (size_t k = 0; k < period; ++k) p.storage[i][k] = normal(rng);
    for (size_t k = period; k < p.storage[i].size(); ++k) p.storage[i][k] = p.storage[i][k - period];
  }
  if (slide && windows == 0) {
    throw UsageError("option '--slide': no input is a window of time steps ([T, ...], T >= 2)");
  }
  p.pointers.resize(kInputSets * plan.num_inputs());
  for (size_t k = 0; k < kInputSets; ++k) {
    for (size_t i = 0; i < plan.num_inputs(); ++i) {
      p.pointers[k * plan.num_inputs() + i] = p.storage[i].data() + k * stride[i];
    }
  }
  return p;
}

struct TimedLoop {
  double ns_per_tick = 1.0;
  double warmup_seconds = 0.5;
  double seconds = 2.0;
  int rows = 1;  // > 1: Plan::run_rows over that many consecutive input sets per call
};

// Runs the plan untimed for the warm-up, then timed until `seconds` have passed. Nothing in
// the timed loop allocates: the histogram and all buffers exist beforehand.
template <typename Clock>
void timed_loop(Plan& plan, const PreparedInputs& inputs, float* const* outputs, const TimedLoop& cfg,
                stats::LatencyHistogram& histogram) {
  const size_t n_in = plan.num_inputs();
  const auto ticks_for = [&](double s) { return static_cast<uint64_t>(s * 1e9 / cfg.ns_per_tick); };
  size_t k = 0;
  // Rows mode: input sets k .. k + rows - 1 are consecutive in the storage (one input).
  const size_t step = static_cast<size_t>(cfg.rows), span = kInputSets - step + 1;
  const auto run_once = [&] {
    if (cfg.rows > 1) {
      plan.run_rows(inputs.pointers[k], cfg.rows, outputs[0]);
      k = (k + step) % span;
    } else {
      plan.run(&inputs.pointers[k * n_in], outputs);
      k = (k + 1) & (kInputSets - 1);
    }
  };
  const uint64_t warm_end = Clock::now() + ticks_for(cfg.warmup_seconds);
  while (Clock::now() < warm_end) run_once();
  const uint64_t end = Clock::now() + ticks_for(cfg.seconds);
  while (true) {
    const uint64_t t0 = Clock::start();
    run_once();
    const uint64_t t1 = Clock::stop();
    histogram.record(std::llround(static_cast<double>(t1 - t0) * cfg.ns_per_tick));
    if (t1 >= end) break;
  }
}

std::string format_ns(double ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", ns);
  return buf;
}

}  // namespace

ArgParser bench_parser() {
  ArgParser p("bench", "measure the latency of single Plan::run calls (p50/p90/p99/p99.9/max)");
  p.positional("MODEL", "a .keras (Keras 3) or .h5 (Keras 2) model file");
  declare_plan_options(p);
  declare_load_options(p);
  p.option("seconds", "S", "how long to time runs", "2");
  p.option("warmup-seconds", "W", "untimed runs before timing", "0.5");
  p.option("pin", "CPU", "pin the benchmark thread to this CPU");
  p.option("timer", "auto|rdtsc|steady", "clock for timing each run (auto: rdtsc if the TSC is invariant)",
           "auto");
  p.option("seed", "N", "seed for the random inputs", "1");
  p.option("rows", "N", "time Plan::run_rows on N inputs per call (feed-forward models; 1: Plan::run)", "1");
  p.flag("slide", "window mode: each run's window is the previous one moved by one row (one sequence, as a feed "
                  "appending a snapshot per event gives it); with --incremental, the incremental update's latency");
  p.flag("json", "print one JSON object instead of text");
  p.flag("floor", "also report FLOPs, weight bytes and the compute floor at --peak-gflops");
  p.option("peak-gflops", "G", "peak fp32 GFLOP/s of one core for --floor", "215");
  p.option("profile", "RUNS", "after the timing, RUNS more runs with the clock read between steps: each step's "
           "(graph plan) or op's (TFLite / .tkq program) median time, share and GFLOP/s (Plan::profile)");
  return p;
}

// The steps' medians, each one input set (the first) run `runs` times; in stream mode the state
// carries on from the timing, as it would in use.
void print_profile(Plan& plan, const PreparedInputs& inputs, int runs) {
  const std::vector<const float*> first(inputs.pointers.begin(), inputs.pointers.begin() + static_cast<long>(plan.num_inputs()));
  const std::vector<Plan::StepProfile> steps = plan.profile(first, runs);
  double total = 0;
  for (const auto& s : steps) total += s.p50_ns;
  std::printf("profile  median ns per step over %d runs (clock read between steps; sum %s ns)\n", runs, format_ns(total).c_str());
  std::printf("%6s %7s %11s %8s  %s\n", "share", "p50 ns", "FLOPs", "GFLOP/s", "step");
  for (const auto& s : steps) {
    const double share = total > 0 ? 100.0 * s.p50_ns / total : 0.0;
    const std::string rate = s.flops > 0 && s.p50_ns > 0 ? format_ns(static_cast<double>(s.flops) / s.p50_ns) : "-";
    std::printf("%5.1f%% %7s %11lld %8s  %s\n", share, format_ns(s.p50_ns).c_str(), static_cast<long long>(s.flops),
                rate.c_str(), s.step.c_str());
  }
}

int run_bench(const ArgParser& args) {
  const std::string& path = args.positional_value("MODEL");
  CompileOptions options = plan_options(args);
  TimedLoop cfg;
  cfg.seconds = args.number("seconds", 1e-3, 86400.0);
  cfg.warmup_seconds = args.number("warmup-seconds", 0.0, 86400.0);
  const double peak_gflops = args.number("peak-gflops", 1e-3, 1e9);
  const auto seed = static_cast<uint64_t>(args.integer("seed", 0, 2147483647L));
  cfg.rows = static_cast<int>(args.integer("rows", 1, 64));
  const std::string timer = args.value("timer");
  if (timer != "auto" && timer != "rdtsc" && timer != "steady") {
    throw UsageError("option '--timer': unknown timer '" + timer + "' (auto, rdtsc or steady)");
  }
  int pinned_cpu = -1;
  if (args.given("pin")) {
    pinned_cpu = static_cast<int>(args.integer("pin", 0, 1 << 20));
    pin_current_thread(pinned_cpu);  // before anything is allocated, so memory is local to it
  }

  const Model model = Model::load(path, load_options(args));
  default_mode_for(model, args, options);
  print_load_warnings(model, path);
  Plan plan = compile(model, options);
  if (cfg.rows > 1) plan.reserve_rows(cfg.rows);  // an Error names the layer that is not row-wise
  if (args.flag_set("slide") && cfg.rows > 1) throw UsageError("options '--slide' and '--rows' do not combine");
  const PreparedInputs inputs = prepare_inputs(plan, seed, args.flag_set("slide"));
  std::vector<std::vector<float>> output_storage(plan.num_outputs());
  std::vector<float*> outputs(plan.num_outputs());
  for (size_t o = 0; o < outputs.size(); ++o) {
    output_storage[o].resize(plan.output_size(o) * static_cast<size_t>(cfg.rows));
    outputs[o] = output_storage[o].data();
  }
  plan.reset_state();

  bool use_tsc = false;
  if (timer == "rdtsc") {
    if (!tsc_usable()) throw Error("--timer rdtsc: this CPU has no invariant TSC (use --timer steady)");
    use_tsc = true;
  } else if (timer == "auto") {
    use_tsc = tsc_usable();
  }
  stats::LatencyHistogram histogram;
  double timer_overhead_ns = 0.0;
  std::string timer_text;
#if TICKINFER_CLI_HAVE_TSC
  if (use_tsc) {
    cfg.ns_per_tick = calibrate_tsc_ns_per_tick(kCalibrationSeconds);
    timer_overhead_ns = measure_timer_overhead_ns<TscClock>(cfg.ns_per_tick, kOverheadPairs);
    timer_text = std::string("rdtsc (") + format_ns(1.0 / cfg.ns_per_tick) + " GHz, calibrated against steady_clock)";
    timed_loop<TscClock>(plan, inputs, outputs.data(), cfg, histogram);
  }
#endif
  if (!use_tsc) {
    timer_overhead_ns = measure_timer_overhead_ns<SteadyClock>(1.0, kOverheadPairs);
    timer_text = "steady_clock";
    timed_loop<SteadyClock>(plan, inputs, outputs.data(), cfg, histogram);
  }
  const auto summary = stats::LatencySummary::from(histogram);
  const std::string cpu = cpu_model_name();
  // The compute floor: FLOPs at the stated peak. GFLOP/s is FLOPs per ns.
  // Per run() of this plan: one tick in stream mode, the whole window in window mode.
  const int64_t flops = plan.flops(), weight_bytes = plan.weight_bytes();
  const double floor_ns = static_cast<double>(flops) / peak_gflops;

  if (args.flag_set("json")) {
    auto j = nlohmann::json::parse(summary.to_json());
    j["model"] = path;
    j["mode"] = mode_name(plan.mode());
    j["isa"] = plan.isa();
    j["cpu"] = cpu;
    j["pinned_cpu"] = pinned_cpu >= 0 ? nlohmann::json(pinned_cpu) : nlohmann::json(nullptr);
    j["timer"] = use_tsc ? "rdtsc" : "steady_clock";
    j["timer_overhead_ns"] = std::round(timer_overhead_ns * 10.0) / 10.0;
    j["seconds"] = cfg.seconds;
    j["warmup_seconds"] = cfg.warmup_seconds;
    j["input_sets"] = kInputSets;
    j["seed"] = seed;
    j["rows"] = cfg.rows;
    j["slide"] = args.flag_set("slide");
    j["incremental"] = options.incremental;
    if (args.flag_set("floor")) {
      j["flops"] = flops;
      j["weight_bytes"] = weight_bytes;
      j["weight_footprint_bytes"] = plan.weight_footprint_bytes();
      j["peak_gflops"] = peak_gflops;
      j["compute_floor_ns"] = std::round(floor_ns * 100.0) / 100.0;
      j["p50_over_floor"] = floor_ns > 0 ? nlohmann::json(static_cast<double>(summary.p50_ns) / floor_ns)
                                         : nlohmann::json(nullptr);
    }
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("model    %s\n", path.c_str());
  std::printf("plan     mode %s%s, isa %s\n", mode_name(plan.mode()), options.incremental ? " (incremental)" : "",
              plan.isa());
  if (args.flag_set("slide")) std::printf("inputs   windows sliding one row per run\n");
  std::printf("cpu      %s (%s)\n", cpu.c_str(),
              pinned_cpu >= 0 ? ("pinned to cpu " + std::to_string(pinned_cpu)).c_str() : "not pinned");
  std::printf("timer    %s; overhead %s ns per read pair, included below (not subtracted)\n",
              timer_text.c_str(), format_ns(timer_overhead_ns).c_str());
  if (cfg.rows > 1) {
    std::printf("latency  ns per Plan::run_rows call of %d rows, %.3g s after %.3g s warm-up, %zu input sets\n",
                cfg.rows, cfg.seconds, cfg.warmup_seconds, kInputSets);
  } else {
    std::printf("latency  ns per Plan::run, batch 1, %.3g s after %.3g s warm-up, %zu input sets\n",
                cfg.seconds, cfg.warmup_seconds, kInputSets);
  }
  std::printf("%s\n%s\n", stats::LatencySummary::table_header().c_str(), summary.table_row().c_str());
  if (args.flag_set("floor")) {
    std::printf("floor    %lld FLOPs, %lld weight bytes; at %g GFLOP/s the compute floor is %s ns",
                static_cast<long long>(flops), static_cast<long long>(weight_bytes),
                peak_gflops, format_ns(floor_ns).c_str());
    if (floor_ns > 0) std::printf("; p50 is %.1fx the floor", static_cast<double>(summary.p50_ns) / floor_ns);
    std::printf("%s\n", plan.mode() == RecurrentMode::Stream ? " (per tick)" : "");
  }
  if (args.given("profile")) print_profile(plan, inputs, static_cast<int>(args.integer("profile", 1, 10000000)));
  return 0;
}

}  // namespace tickinfer::cli
