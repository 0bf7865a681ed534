#include "cuda/resident_tuning.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace tickinfer::cuda {
namespace {

std::vector<ResidentOptions> candidates(const ResidentOptions& base) {
  std::vector<ResidentOptions> out;
  auto add = [&](const std::string& form, int lanes, int cluster, int threads) {
    if (base.form != "auto" && base.form != form) return;
    if (base.lanes && lanes && base.lanes != lanes) return;
    if (base.cluster && base.cluster != cluster) return;
    ResidentOptions o = base;
    o.form = form;
    o.lanes = lanes;
    o.cluster = cluster;
    o.threads = base.threads ? base.threads : threads;
    out.push_back(o);
  };
  for (int lanes : {16, 32, 8})
    for (int cluster : {1, 2, 4, 8, 16}) add("registers", lanes, cluster, 0);
  for (int cluster : {1, 2, 4, 8, 16}) add("shared", 0, cluster, 256);
  return out;
}

double median_ns(ResidentLstm& k, int requests) {
  std::vector<float> x(size_t(k.layout().steps) * k.input_width(), 0.0f), y(k.output_width());
  std::vector<double> ns;
  ns.reserve(requests);
  for (int i = 0; i < requests + 50; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!k.run(x.data(), i % 8 == 0, y.data(), 1'000'000'000)) return 1e18;
    const auto t1 = std::chrono::steady_clock::now();
    if (i >= 50) ns.push_back(double(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
  }
  std::nth_element(ns.begin(), ns.begin() + ns.size() / 2, ns.end());
  return ns[ns.size() / 2];
}

}  // namespace

TunedResident start_tuned(const LstmStack& stack, const ResidentOptions& options, int requests_per_candidate) {
  TunedResident t;
  std::string last_refusal = "no candidate shape";
  double best = 0;
  for (const ResidentOptions& o : candidates(options)) {
    std::unique_ptr<ResidentLstm> k;
    try {
      k = ResidentLstm::start(stack, o);
    } catch (const std::exception& e) {
      last_refusal = e.what();
      continue;
    }
    const double m = median_ns(*k, requests_per_candidate);
    t.candidates.push_back({o, m});
    if (t.chosen.form == "auto" || m < best) best = m, t.chosen = o;
  }
  if (t.candidates.empty()) throw std::runtime_error(last_refusal);
  t.kernel = ResidentLstm::start(stack, t.chosen);
  return t;
}

}  // namespace tickinfer::cuda
