// Checks and times the CUDA graph form on one Keras model (window mode, batch 1): every output
// of every row of X against Keras's Y, then host-to-host latency, one request at a time, from the
// input in host memory to the whole output visible to the host thread (what resident_bench and
// the PyTorch peers measure). `--host` runs the same program on the host executor instead (no
// GPU needed: a check of the bench itself).
//
// Usage: graph_form_bench --model M.keras --x X.npy --y Y.npy [--atol A] [--rtol R]
//                         [--requests N] [--name NAME] [--host]
// Prints one JSON line. Exit 0 when every output is within atol + rtol |ref|, 1 when not,
// 2 when the model is refused, 77 when there is no CUDA device.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench_io.hpp"
#include "cuda/devices.hpp"
#include "engine/cuda_graph_plan.hpp"
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
    else throw std::runtime_error("unknown option " + k);
  }
  if (a.model.empty() || a.x.empty() || a.y.empty()) throw std::runtime_error("--model, --x and --y are required");
  return a;
}

}  // namespace

int main(int argc, char** argv) try {
  const Args a = parse(argc, argv);
  if (!a.host && cuda::device_count() == 0) {
    std::printf("{\"name\":\"%s\",\"skipped\":\"no CUDA device\"}\n", a.name.c_str());
    return 77;
  }
  const Model model = Model::load(a.model);
  std::unique_ptr<Plan::Impl> plan = a.host ? engine::compile_cuda_graph_on_host(model.graph(), {}, false)
                                            : engine::compile_cuda_graph(model.graph(), {}, 0);
  const formats::NpyArray X = formats::read_npy(a.x), Y = formats::read_npy(a.y);
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
  int failures = 0;
  double worst = 0;
  for (int k = 0; k < rows; ++k) {
    run(k);
    for (size_t o = 0; o < out; ++o) {
      const double want = Y.data[size_t(k) * out + o];
      const double excess = std::fabs(double(y[o]) - want) - (a.atol + a.rtol * std::fabs(want));
      if (!(excess <= 0)) ++failures;
      worst = std::max(worst, excess);
    }
  }
  // Latency: one request at a time with a 2 us gap, cycling the rows (warm-up discarded).
  std::vector<double> lat;
  lat.reserve(size_t(a.requests));
  const int warm = 200;
  for (int i = 0; i < warm + a.requests; ++i) {
    const auto t0 = Clock::now();
    run(i % rows);
    const auto t1 = Clock::now();
    if (i >= warm) lat.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    while (Clock::now() - t1 < std::chrono::microseconds(2)) {
    }
  }
  const std::string where = plan->describe();
  std::printf("{\"name\":\"%s\",\"form\":\"%s\",\"where\":\"%s\",\"flops\":%lld,\"checked_rows\":%d,\"failures\":%d,"
              "\"worst_excess\":%.3g,\"host_to_host_us\":%s}\n",
              a.name.c_str(), a.host ? "graph_on_host" : "graph", where.substr(0, where.find('\n')).c_str(),
              static_cast<long long>(plan->flops()), rows, failures, worst, benchgpu::json(benchgpu::summarize(lat)).c_str());
  return failures ? 1 : 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "graph_form_bench: %s\n", e.what());
  return 2;
}
