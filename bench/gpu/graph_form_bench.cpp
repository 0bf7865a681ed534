// Checks and times the CUDA graph form (or, --form program, the resident program kernel; --form
// auto, whichever of the two the compile-time timing keeps, named in "kept" and "choice") on one
// Keras model (window mode, batch 1): every output of every row of X against Keras's Y, then
// host-to-host latency, one request at a time, from the input in host memory to the whole output
// visible to the host thread (what resident_bench and the PyTorch peers measure). `--host` runs
// the same program on the host executor instead (no GPU needed: a check of the bench itself).
//
// `--batches 1,8,64,512` (graph form) adds the hardware table's rows: per batch size N, the graph
// form's run_rows over N rows (every row checked against Keras first) beside the CPU plan on one
// core of this host running the same N rows per call (run_rows where the plan is row-wise, else N
// run() calls), both timed in this run, interleaved call by call.
//
// Usage: graph_form_bench --model M.keras --x X.npy --y Y.npy [--atol A] [--rtol R]
//                         [--requests N] [--name NAME] [--host] [--form graph|program|auto]
//        graph_form_bench --model M.tkq|M.tflite --x X.npy --form int8 [--host] [--batches ...]
//        (the integer program, held to the CPU plan's outputs bit for bit and timed beside it)
//                         [--cluster N] [--batches N,N,...] [--precision SPEC]
// Prints one JSON line (and one per batch size). Exit 0 when every output is within
// atol + rtol |ref|, 1 when not, 2 when the model is refused, 77 when there is no CUDA device.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench_io.hpp"
#include "cuda/devices.hpp"
#include "engine/cuda_graph_plan.hpp"
#include "engine/cuda_plan.hpp"
#include "formats/npy.hpp"
#include "tickinfer/tickinfer.hpp"

using namespace tickinfer;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  std::string model, x, y, name = "model";
  double atol = 1e-6, rtol = 1e-5;
  int requests = 5000;
  bool host = false;
  std::string form = "graph";  // or "program": the resident program kernel; "int8": the integer program
  int cluster = 0;             // program: blocks (0: timed at compile)
  std::string precision;       // CompileOptions::cuda_precision ("": fp32)
  std::vector<int> batches;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(k + " needs a value");
      return argv[++i];
    };
    if (k == "--model") a.model = val();
    else if (k == "--x") a.x = val();
    else if (k == "--y") a.y = val();
    else if (k == "--atol") a.atol = std::stod(val());
    else if (k == "--rtol") a.rtol = std::stod(val());
    else if (k == "--requests") a.requests = std::stoi(val());
    else if (k == "--name") a.name = val();
    else if (k == "--host") a.host = true;
    else if (k == "--form") a.form = val();
    else if (k == "--cluster") a.cluster = std::stoi(val());
    else if (k == "--precision") a.precision = val();
    else if (k == "--batches") {
      const std::string v = val();
      for (size_t at = 0; at < v.size();) {
        const size_t comma = std::min(v.find(',', at), v.size());
        a.batches.push_back(std::stoi(v.substr(at, comma - at)));
        if (a.batches.back() < 1) throw std::runtime_error("--batches: sizes are at least 1");
        at = comma + 1;
      }
    }
    else throw std::runtime_error("unknown option " + k);
  }
  if (a.model.empty() || a.x.empty() || (a.y.empty() && a.form != "int8"))
    throw std::runtime_error("--model and --x are required, and --y but for --form int8");
  if (!a.precision.empty()) a.name += " (--cuda-precision " + a.precision + ")";  // its own row in every table
  return a;
}

// Every output of `rows` consecutive rows from row `first` (cycling X) against Keras's Y.
struct Check {
  int failures = 0;
  double worst = 0;
  void rows(const std::vector<float>& got, const formats::NpyArray& Y, int first, int n, int total, size_t out,
            const Args& a) {
    for (int r = 0; r < n; ++r)
      for (size_t o = 0; o < out; ++o) {
        const double want = Y.data[size_t((first + r) % total) * out + o];
        const double excess = std::fabs(double(got[size_t(r) * out + o]) - want) - (a.atol + a.rtol * std::fabs(want));
        if (!(excess <= 0)) ++failures;
        worst = std::max(worst, excess);
      }
  }
};

// The hardware table: per batch size, the GPU plan's run_rows against the CPU plan on this
// host's core, the same rows per call, calls interleaved (GPU, CPU, GPU, ...).
// Returns the GPU rows outside the tolerance (Keras's; int8: none, against the CPU plan).
int batch_sweep(const Args& a, Plan& cpu, Plan::Impl& gpu, const formats::NpyArray& X, const formats::NpyArray& Y,
                size_t in, size_t out) {
  const int total = int(X.shape[0]);
  int most = 1;
  for (int n : a.batches) most = std::max(most, n);
  if (std::string why = gpu.reserve_rows(most); !why.empty()) throw std::runtime_error("reserve_rows: " + why);
  const bool cpu_rows = cpu.try_reserve_rows(most);
  // What the plan chose: run()'s launch variant, and per batch size the variant the reservation
  // timed fastest (per row or tiles, with or without dependent launch).
  const std::string where = gpu.describe();
  std::printf("{\"name\":\"%s\",\"batches_reserved\":%d,\"where\":\"%s\"}\n", a.name.c_str(), most,
              where.substr(0, where.find('\n')).c_str());
  // X cycled out to `most` rows, so every call reads real inputs.
  std::vector<float> xs(size_t(most) * in), yg(size_t(most) * out), yc(size_t(most) * out);
  for (int r = 0; r < most; ++r) std::memcpy(&xs[size_t(r) * in], &X.data[size_t(r % total) * in], in * sizeof(float));
  int failures = 0;
  for (int n : a.batches) {
    Check gpu_check, cpu_check;
    gpu.run_rows(xs.data(), n, yg.data());
    gpu_check.rows(yg, Y, 0, n, total, out, a);
    auto run_cpu = [&] {
      if (cpu_rows) return cpu.run_rows(xs.data(), n, yc.data());
      for (int r = 0; r < n; ++r) cpu.run(xs.data() + size_t(r) * in, yc.data() + size_t(r) * out);
    };
    run_cpu();
    cpu_check.rows(yc, Y, 0, n, total, out, a);
    const int calls = std::max(50, a.requests / n), warm = std::max(5, calls / 20);
    std::vector<double> g, c;
    const auto start = Clock::now();
    for (int i = 0; i < warm + calls; ++i) {
      // At most about 2 s a batch size (the CPU side of a large batch is slow), 10 timed calls at least.
      if (i >= warm + 10 && Clock::now() - start > std::chrono::seconds(2)) break;
      auto t0 = Clock::now();
      gpu.run_rows(xs.data(), n, yg.data());
      auto t1 = Clock::now();
      run_cpu();
      auto t2 = Clock::now();
      if (i < warm) continue;
      g.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      c.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
    }
    const benchgpu::Summary gs = benchgpu::summarize(g), cs = benchgpu::summarize(c);
    std::printf("{\"name\":\"%s\",\"batch\":%d,\"failures\":%d,\"worst_excess\":%.3g,\"cpu_failures\":%d,"
                "\"cpu_form\":\"%s\",\"gpu_us\":%s,\"cpu_us\":%s,\"gpu_rows_per_s\":%.0f,\"cpu_rows_per_s\":%.0f}\n",
                a.name.c_str(), n, gpu_check.failures, benchgpu::json_finite(gpu_check.worst), cpu_check.failures,
                cpu_rows ? "run_rows" : "run per row", benchgpu::json(gs).c_str(), benchgpu::json(cs).c_str(),
                n / gs.p50 * 1e6, n / cs.p50 * 1e6);
    std::fflush(stdout);
    failures += gpu_check.failures;
  }
  return failures;
}

}  // namespace

// The CPU plan's output for every row of X, as a Y array.
formats::NpyArray cpu_outputs(Plan& cpu, const formats::NpyArray& X) {
  const size_t in = cpu.input_size(0), out = cpu.output_size(0);
  const size_t rows = size_t(X.shape[0]);
  if (X.data.size() != rows * in) throw std::runtime_error("X does not match the model's input");
  formats::NpyArray Y;
  Y.shape = {int64_t(rows), int64_t(out)};
  Y.data.resize(rows * out);
  for (size_t r = 0; r < rows; ++r) cpu.run(X.data.data() + r * in, Y.data.data() + r * out);
  return Y;
}

Args exact(Args a) {
  a.atol = a.rtol = 0;
  return a;
}

int main(int argc, char** argv) try {
  const Args a = parse(argc, argv);
  if (!a.host && cuda::device_count() == 0) {
    std::printf("{\"name\":\"%s\",\"skipped\":\"no CUDA device\"}\n", a.name.c_str());
    return 77;
  }
  const Model model = Model::load(a.model);
  if (a.form != "graph" && a.form != "program" && a.form != "auto" && a.form != "int8")
    throw std::runtime_error("--form: graph, program, auto or int8");
  if ((a.form == "program" || a.form == "auto") && !a.batches.empty())
    throw std::runtime_error("--batches: the graph form and int8 only");
  if (a.host && a.form == "auto") throw std::runtime_error("--form auto times the forms on a GPU (no --host)");
  const bool int8 = a.form == "int8";
  if (int8 && !model.program()) throw std::runtime_error("--form int8: an int8 TFLite or .tkq file");
  CompileOptions opt;
  opt.cuda_precision = a.precision;
  std::unique_ptr<Plan::Impl> plan =
      int8 ? (a.host ? engine::compile_cuda_integer_on_host(model.shared_program(), opt, false)
                     : engine::compile_cuda_integer(model.shared_program(), opt, 0))
      : a.host              ? engine::compile_cuda_graph_on_host(model.graph(), opt, false)
      : a.form == "program" ? engine::compile_cuda_program(model.graph(), opt, 0, a.cluster)
      : a.form == "auto"    ? engine::compile_cuda_auto(model.graph(), opt, 0)
                            : engine::compile_cuda_graph(model.graph(), opt, 0);
  const formats::NpyArray X = formats::read_npy(a.x);
  // The CPU plan: the batch table's other column; for int8 also the reference, to the bit
  // (TFLite's integer arithmetic has one answer), and timed request by request beside the GPU's.
  Plan cpu = compile(model);
  const formats::NpyArray Y = int8 ? cpu_outputs(cpu, X) : formats::read_npy(a.y);
  const Args check_args = int8 ? exact(a) : a;
  if (plan->input_shapes().size() != 1 || plan->output_shapes().size() != 1)
    throw std::runtime_error("one input and one output only");
  const size_t in = size_t(shape_size(plan->input_shapes()[0])), out = size_t(shape_size(plan->output_shapes()[0]));
  const int rows = int(X.shape[0]);
  if (X.data.size() != size_t(rows) * in || Y.data.size() != size_t(rows) * out)
    throw std::runtime_error("X or Y does not match the model's shapes");
  std::vector<float> y(out);
  auto run = [&](int k) {
    const float* xs = X.data.data() + size_t(k) * in;
    float* ys = y.data();
    plan->run(&xs, &ys);
  };
  Check check;
  for (int k = 0; k < rows; ++k) {
    run(k);
    check.rows(y, Y, k, 1, rows, out, check_args);
  }
  // Latency: one request at a time with a 2 us gap, cycling the rows (warm-up discarded); int8
  // interleaves the CPU plan's request after each.
  std::vector<double> lat, cpu_lat;
  lat.reserve(size_t(a.requests));
  const int warm = 200;
  std::vector<float> yc(out);
  for (int i = 0; i < warm + a.requests; ++i) {
    const auto t0 = Clock::now();
    run(i % rows);
    const auto t1 = Clock::now();
    if (i >= warm) lat.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    if (int8) {
      const auto c0 = Clock::now();
      cpu.run(X.data.data() + size_t(i % rows) * in, yc.data());
      if (i >= warm) cpu_lat.push_back(std::chrono::duration<double, std::micro>(Clock::now() - c0).count());
    }
    const auto t2 = Clock::now();
    while (Clock::now() - t2 < std::chrono::microseconds(2)) {
    }
  }
  const std::string where = plan->describe();
  // --form auto: which form the compile-time timing kept, and its line (both forms' times).
  std::string choice;
  if (const size_t at = where.find("form chosen by timing"); at != std::string::npos) {
    choice = where.substr(at, where.find('\n', at) - at);
    for (char& ch : choice)
      if (ch == '"' || ch == '\\') ch = '\'';
    choice = ",\"kept\":\"" + std::string(plan->isa()) + "\",\"choice\":\"" + choice + "\"";
  }
  const std::string cpu_json = int8 ? ",\"cpu_isa\":\"" + std::string(cpu.isa()) + "\",\"cpu_host_to_host_us\":" +
                                          benchgpu::json(benchgpu::summarize(cpu_lat))
                                    : "";
  std::printf("{\"name\":\"%s\",\"form\":\"%s\",\"where\":\"%s\",\"flops\":%lld,\"checked_rows\":%d,\"failures\":%d,"
              "\"worst_excess\":%.3g,\"precision\":\"%s\",\"host_to_host_us\":%s%s%s}\n",
              a.name.c_str(), a.host ? (int8 ? "int8_on_host" : "graph_on_host") : a.form.c_str(),
              where.substr(0, where.find('\n')).c_str(), static_cast<long long>(plan->flops()), rows, check.failures,
              benchgpu::json_finite(check.worst), a.precision.c_str(), benchgpu::json(benchgpu::summarize(lat)).c_str(), cpu_json.c_str(), choice.c_str());
  const int failures = check.failures + (a.batches.empty() ? 0 : batch_sweep(check_args, cpu, *plan, X, Y, in, out));
  return failures ? 1 : 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "graph_form_bench: %s\n", e.what());
  return 2;
}
