#include "cuda/resident_tuning.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "cuda/form_choice.hpp"
#include "cuda/lstm_stack.hpp"
#include "cuda/resident_lstm.hpp"

namespace tickinfer::cuda {
namespace {

// Set once a tagged kernel started by the timing failed to answer: a lost kernel keeps its
// multiprocessors until the process ends, so no later timing in this process tries the form again.
std::atomic<bool> g_tagged_lost{false};

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
  for (int lanes : {16, 32, 8, kWideLanes})
    for (int cluster : {1, 2, 4, 8, 16}) add("registers", lanes, cluster, 0);
  // The shared form with a row per thread, and with up to 1024 threads (a row over several lanes:
  // a shorter chain of products per thread, which pays where the block is the whole model).
  for (int threads : {256, 1024})
    for (int cluster : {1, 2, 4, 8, 16}) add("shared", 0, cluster, threads);
  // The tagged form last, where asked for: the measured forms are timed first, and a tagged
  // kernel that never answers cannot hold the card before they have run.
  if (base.form == "tagged" || (base.time_tagged && !g_tagged_lost.load()))
    for (int lanes : {16, 32, 8})
      for (int cluster : {1, 2, 4, 8, 16}) add("tagged", lanes, cluster, 0);
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

// The probe requests: the replies every shape must give, held by form_choice's agrees() to the
// host's double-precision reference (an fp32 kernel differs from it in the last bits, never by
// more), to be timed at all. Not to the first shape's replies: that one is a kernel too, and a
// wrong first shape would refuse every right one and be kept. Three requests with different
// inputs; in stream mode (one step a request) the first from the zeroed state and the next two
// carrying it on, so a shape that mishandles the carried h and c (the tagged form's pushes from
// one step to the next) is refused too, not only one whose first step is wrong. A window
// request starts from the zeroed state, as the engine's window plans run it.
constexpr int kProbeRequests = 3;

std::vector<float> probe_request(size_t floats, int r) {
  std::vector<float> x(floats);
  for (size_t i = 0; i < floats; ++i) x[i] = probe_input(i + size_t(r) * floats);
  return x;
}

bool probe_resets(int steps, int r) { return r == 0 || steps > 1; }

std::vector<std::vector<float>> host_reference(const LstmStack& stack, int steps) {
  std::vector<std::vector<float>> out;
  LstmStackState state;
  for (int r = 0; r < kProbeRequests; ++r) {
    if (probe_resets(steps, r)) reset_state(stack, state);
    const std::vector<float> x = probe_request(size_t(steps) * stack.input_width(), r);
    std::vector<float> y(stack.output_width());
    reference_steps(stack, state, x.data(), steps, y.data());
    out.push_back(std::move(y));
  }
  return out;
}

// The kernel's replies to the same requests; empty where one went unanswered.
std::vector<std::vector<float>> probe_replies(ResidentLstm& k) {
  std::vector<std::vector<float>> out;
  const int steps = k.layout().steps;
  for (int r = 0; r < kProbeRequests; ++r) {
    const std::vector<float> x = probe_request(size_t(steps) * k.input_width(), r);
    std::vector<float> y(k.output_width());
    if (!k.run(x.data(), probe_resets(steps, r), y.data(), 1'000'000'000)) return {};
    out.push_back(std::move(y));
  }
  return out;
}

std::string disagreement(const std::vector<std::vector<float>>& got, const std::vector<std::vector<float>>& want) {
  if (got.size() != want.size()) return "no reply to the probe requests";
  for (size_t r = 0; r < want.size(); ++r)
    for (size_t o = 0; o < want[r].size(); ++o)
      if (!agrees(got[r][o], want[r][o])) {
        char b[200];
        std::snprintf(b, sizeof b, "output %zu of probe request %zu is %.9g where the host's reference gives %.9g", o, r,
                      got[r][o], want[r][o]);
        return b;
      }
  return {};
}

}  // namespace

TunedResident start_tuned(const LstmStack& stack, const ResidentOptions& options, int requests_per_candidate) {
  // The host reference below indexes the stack and the steps before any kernel's start checks them.
  if (options.steps < 1) throw std::runtime_error("steps must be at least 1, got " + std::to_string(options.steps));
  if (const std::string e = stack.shape_error(); !e.empty()) throw std::runtime_error(e);
  TunedResident t;
  std::string last_refusal = "no candidate shape";
  double best = 0;
  const std::vector<std::vector<float>> reference = host_reference(stack, options.steps);
  for (const ResidentOptions& o : candidates(options)) {
    const bool tagged = o.form == "tagged";
    // Asked for by name too: another lost kernel would hold more multiprocessors, 5 s each.
    if (tagged && g_tagged_lost.load()) {
      last_refusal = "the tagged form did not answer earlier in this process; it is not started again";
      continue;
    }
    std::unique_ptr<ResidentLstm> k;
    try {
      k = ResidentLstm::start(stack, o);
    } catch (const std::exception& e) {
      last_refusal = e.what();
      // A launch the runtime refuses leaves nothing behind; a kernel that never answered does.
      if (tagged && std::string(e.what()).find("no reply") != std::string::npos) g_tagged_lost = true;
      continue;
    }
    TunedCandidate c{o, 0, {}};
    const std::vector<std::vector<float>> reply = probe_replies(*k);
    c.refused = disagreement(reply, reference);
    if (c.refused.empty()) {
      c.median_ns = median_ns(*k, requests_per_candidate);
      if (c.median_ns >= 1e18) c.refused = "a timed request went unanswered";
    }
    if (tagged && (reply.empty() || c.median_ns >= 1e18)) g_tagged_lost = true;
    if (c.refused.empty() && (t.chosen.form == "auto" || c.median_ns < best)) best = c.median_ns, t.chosen = o;
    t.candidates.push_back(std::move(c));
  }
  if (t.chosen.form == "auto")
    throw std::runtime_error(t.candidates.empty() ? last_refusal : "no shape answered: " + t.candidates[0].refused);
  t.kernel = ResidentLstm::start(stack, t.chosen);
  return t;
}

}  // namespace tickinfer::cuda
