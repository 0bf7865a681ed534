// Checks and times the resident LSTM kernel on one Keras model, loaded by the engine's importer
// and lowered by the CUDA backend's graph reader (the path `--device cuda` takes): every reply
// against Keras's outputs and the host double-precision reference, then host-to-host latency, one
// request at a time, from the input in host memory to the whole reply visible to the host thread.
//
// Usage: resident_bench --model M.keras --x X.npy --y Y.npy [--stream] [--atol A] [--cluster C]
//                       [--threads N] [--form auto|registers|shared] [--lanes 8|16|32|40]
//                       [--activations 0|1|2] [--fast-math] [--requests R] [--name NAME] [--time-tagged]
//   --form auto (the default) times every shape that fits and keeps the fastest, as the engine does;
//   --time-tagged: the tagged form among them (not yet run on a GPU, so the engine leaves it out).
//   --profile-once: one request written before the launch, the kernel exits after it (for ncu).
//   --stream: X is [rows][steps][I] and Y [rows][steps][out]; the plan takes one step per
//             request and keeps its state, reset at each row's first step.
//   otherwise X is [rows][T][I] and Y [rows][out]; one request is a whole window.
// Prints one JSON line. Exit 0 when every reply is within atol + 1e-5 |ref|, 1 when not,
// 2 when the plan is refused (a form or size that does not apply), 3 when the kernel stopped
// answering, 77 when there is no CUDA device (after the host reference check).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "bench_io.hpp"
#include "cuda/devices.hpp"
#include "cuda/graph_lstm_stack.hpp"
#include "cuda/resident_lstm.hpp"
#include "cuda/resident_tuning.hpp"
#include "formats/npy.hpp"
#include "tickinfer/tickinfer.hpp"

using namespace tickinfer;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  std::string model, x, y, name = "model", form = "auto";
  bool stream = false, fast = false, profile_once = false, time_tagged = false;
  double atol = 1e-6;
  int cluster = 0, threads = 0, lanes = 0, activations = 2, requests = 20000;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto val = [&] {
      if (i + 1 >= argc) throw std::runtime_error(k + " needs a value");
      return std::string(argv[++i]);
    };
    if (k == "--model") a.model = val();
    else if (k == "--x") a.x = val();
    else if (k == "--y") a.y = val();
    else if (k == "--name") a.name = val();
    else if (k == "--stream") a.stream = true;
    else if (k == "--fast-math") a.fast = true;
    else if (k == "--time-tagged") a.time_tagged = true;
    else if (k == "--profile-once") a.profile_once = true;
    else if (k == "--atol") a.atol = std::stod(val());
    else if (k == "--cluster") a.cluster = std::stoi(val());
    else if (k == "--threads") a.threads = std::stoi(val());
    else if (k == "--lanes") a.lanes = std::stoi(val());
    else if (k == "--form") a.form = val();
    else if (k == "--activations") a.activations = std::stoi(val());
    else if (k == "--requests") a.requests = std::stoi(val());
    else throw std::runtime_error("unknown argument " + k);
  }
  if (a.model.empty() || a.x.empty() || a.y.empty()) throw std::runtime_error("--model, --x and --y are required");
  return a;
}

struct Requests {
  int rows = 0, steps_per_row = 0, steps_per_request = 0, in = 0, out = 0;
  const float* x(const formats::NpyArray& X, int k) const { return X.data.data() + size_t(k) * steps_per_request * in; }
  int count() const { return rows * steps_per_row / steps_per_request; }
  bool reset(int k) const { return (k * steps_per_request) % steps_per_row == 0; }
};

struct ReplyErrors {
  double worst_excess = 0, worst_rel_vs_reference = 0;
  int failures = 0;
  void add(float got, float want, double reference, double atol) {
    const double excess = std::fabs(double(got) - want) - (atol + 1e-5 * std::fabs(want));
    worst_excess = std::max(worst_excess, excess);
    if (!(excess <= 0)) ++failures;
    worst_rel_vs_reference =
        std::max(worst_rel_vs_reference, std::fabs(double(got) - reference) / std::max(std::fabs(reference), 1e-6));
  }
};

double p50(std::vector<double> v) { return benchgpu::summarize(std::move(v)).p50; }

}  // namespace

int main(int argc, char** argv) try {
  const Args a = parse(argc, argv);
  cuda::StackFromGraph loaded = cuda::lstm_stack_from_graph(Model::load(a.model).graph());
  if (!loaded.error.empty()) throw std::runtime_error(a.model + ": " + loaded.error);
  const cuda::LstmStack& stack = loaded.stack;
  const formats::NpyArray X = formats::read_npy(a.x), Y = formats::read_npy(a.y);
  Requests q;
  q.rows = int(X.shape.at(0));
  q.steps_per_row = int(X.shape.at(1));
  q.in = int(X.shape.at(2));
  q.out = stack.output_width();
  q.steps_per_request = a.stream ? 1 : q.steps_per_row;
  if (q.in != stack.input_width()) throw std::runtime_error("input width differs from the model's");
  if (Y.data.size() != size_t(q.count()) * q.out) throw std::runtime_error("--y size does not match the requests");

  // Host reference first: it proves the lowered weights and Keras agree, GPU or not.
  std::vector<float> ref(Y.data.size());
  cuda::LstmStackState state;
  ReplyErrors host;
  for (int k = 0; k < q.count(); ++k) {
    if (q.reset(k)) cuda::reset_state(stack, state);
    cuda::reference_steps(stack, state, q.x(X, k), q.steps_per_request, ref.data() + size_t(k) * q.out);
    for (int o = 0; o < q.out; ++o) host.add(ref[size_t(k) * q.out + o], Y.data[size_t(k) * q.out + o], ref[size_t(k) * q.out + o], a.atol);
  }
  if (cuda::device_count() == 0) {
    std::printf("{\"name\":\"%s\",\"host_reference_failures\":%d,\"gpu\":false}\n", a.name.c_str(), host.failures);
    std::fprintf(stderr, "resident_bench: no CUDA device here; host reference checked only\n");
    return host.failures ? 1 : 77;
  }

  cuda::ResidentOptions opt;
  opt.cluster = a.cluster;
  opt.threads = a.threads;
  opt.lanes = a.lanes;
  opt.form = a.form;
  opt.fast_math = a.fast;
  opt.time_tagged = a.time_tagged;
  opt.activations = a.activations;
  opt.steps = q.steps_per_request;
  if (a.profile_once) {  // one request for a profiler (ncu runs the kernel to its end)
    opt.single_request = true;
    auto once = cuda::ResidentLstm::start(stack, opt);
    std::printf("{\"name\":\"%s\",\"profiled_form\":\"%s\",\"cluster\":%d,\"threads\":%d}\n", a.name.c_str(),
                once->layout().form.c_str(), once->layout().cluster, once->layout().threads);
    return 0;
  }
  // --form auto: the shape the engine would pick, timed on this card (cuda/resident_tuning.hpp);
  // every shape it timed is printed, so a run records what each form and cluster size cost.
  std::unique_ptr<cuda::ResidentLstm> plan;
  if (a.form == "auto") {
    cuda::TunedResident tuned = cuda::start_tuned(stack, opt);
    for (const cuda::TunedCandidate& c : tuned.candidates)
      std::printf("{\"name\":\"%s\",\"tuning_candidate\":\"%s\",\"lanes\":%d,\"cluster\":%d,\"threads\":%d,"
                  "\"median_us\":%.3f%s}\n",
                  a.name.c_str(), c.options.form.c_str(), c.options.lanes, c.options.cluster, c.options.threads,
                  c.median_ns / 1e3, c.refused.empty() ? "" : (",\"refused\":\"" + c.refused + "\"").c_str());
    plan = std::move(tuned.kernel);
  } else {
    plan = cuda::ResidentLstm::start(stack, opt);
  }
  std::vector<float> y(q.out);
  ReplyErrors gpu;
  for (int k = 0; k < q.count(); ++k) {
    if (!plan->run(q.x(X, k), q.reset(k), y.data(), 2'000'000'000)) throw std::runtime_error("no reply (check)");
    for (int o = 0; o < q.out; ++o) gpu.add(y[o], Y.data[size_t(k) * q.out + o], ref[size_t(k) * q.out + o], a.atol);
  }
  // Latency: one request at a time with a 2 us gap, cycling the inputs (warm-up discarded).
  std::vector<double> lat;
  lat.reserve(a.requests);
  const int warm = 1000;
  for (int i = 0; i < warm + a.requests; ++i) {
    const int k = i % q.count();
    const auto t0 = Clock::now();
    if (!plan->run(q.x(X, k), q.reset(k), y.data(), 2'000'000'000)) throw std::runtime_error("no reply (timing)");
    const auto t1 = Clock::now();
    if (i >= warm) lat.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    while (Clock::now() - t1 < std::chrono::microseconds(2)) {
    }
  }
  const auto trace = plan->stop_and_read_trace();
  std::vector<double> recur, head, mhz, head_cycles, dot, act, work, bar;
  for (size_t i = trace.size() > size_t(a.requests) ? trace.size() - a.requests : 0; i < trace.size(); ++i) {
    const cuda::ResidentTrace& t = trace[i];
    recur.push_back((t.recurrent_done_ns - t.seen_ns) / 1e3);
    head.push_back((t.reply_written_ns - t.recurrent_done_ns) / 1e3);
    if (t.recurrent_done_ns > t.seen_ns) mhz.push_back(double(t.recurrent_cycles) * 1e3 / double(t.recurrent_done_ns - t.seen_ns));
    head_cycles.push_back(double(t.head_cycles));
    dot.push_back(double(t.dot_cycles));
    act.push_back(double(t.activation_cycles));
    work.push_back(double(t.cell_work_cycles));
    bar.push_back(double(t.barrier_cycles));
  }
  const auto& L = plan->layout();
  std::printf(
      "{\"name\":\"%s\",\"device\":\"%s\",\"form\":\"%s\",\"lanes\":%d,\"cluster\":%d,\"threads\":%d,\"steps\":%d,"
      "\"shared_bytes\":%zu,\"tuned\":%d,\"activations\":%d,\"fast_math\":%d,\"checked_replies\":%d,\"failures\":%d,"
      "\"worst_excess\":%.3g,\"worst_rel_vs_double\":%.3g,\"host_reference_failures\":%d,\"host_to_host_us\":%s,"
      "\"kernel_recurrence_us\":%s,\"kernel_head_us\":%s,\"sm_mhz_p50\":%.0f,\"head_cycles_p50\":%.0f,"
      "\"cycles_p50\":{\"dot\":%.0f,\"activation\":%.0f,\"cell_work\":%.0f,\"barrier\":%.0f}}\n",
      a.name.c_str(), L.device_name.c_str(), L.form.c_str(), L.lanes, L.cluster, L.threads, L.steps,
      L.shared_bytes_per_block, int(a.form == "auto"), a.activations, int(a.fast), q.count(), gpu.failures, benchgpu::json_finite(gpu.worst_excess),
      benchgpu::json_finite(gpu.worst_rel_vs_reference), host.failures, benchgpu::json(benchgpu::summarize(lat)).c_str(),
      benchgpu::json(benchgpu::summarize(recur)).c_str(), benchgpu::json(benchgpu::summarize(head)).c_str(), p50(mhz),
      p50(head_cycles), p50(dot), p50(act), p50(work), p50(bar));
  return gpu.failures || host.failures ? 1 : 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "resident_bench: %s\n", e.what());
  return std::strstr(e.what(), "no reply") ? 3 : 2;  // 3: the kernel stopped answering
}
