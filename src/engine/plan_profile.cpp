// Plan::profile: each step's median time over repeated runs (see tickinfer.hpp). The backends
// read engine::step_clock() between steps (run_profiled); the ticks become nanoseconds against
// steady_clock measured over the same runs, so the TSC's rate is never assumed.
#include <algorithm>
#include <chrono>

#include "engine/plan_backend.hpp"
#include "engine/step_clock.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer {

std::vector<Plan::StepProfile> Plan::profile(const std::vector<const float*>& inputs, int runs) {
  if (inputs.size() != num_inputs()) {
    throw Error("profile: " + std::to_string(inputs.size()) + " inputs given, the plan takes " + std::to_string(num_inputs()));
  }
  if (runs < 1) throw Error("profile: runs must be at least 1");
  std::vector<StepProfile> steps = impl_->profile_steps();
  std::vector<std::vector<float>> out(num_outputs());
  std::vector<float*> outs;
  for (size_t o = 0; o < out.size(); ++o) {
    out[o].resize(output_size(o));
    outs.push_back(out[o].data());
  }
  std::vector<uint64_t> ticks(steps.size() * static_cast<size_t>(runs));
  for (int w = 0; w < runs / 10 + 1; ++w) impl_->run_profiled(inputs.data(), outs.data(), ticks.data());
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t c0 = engine::step_clock();
  for (int r = 0; r < runs; ++r) impl_->run_profiled(inputs.data(), outs.data(), ticks.data() + static_cast<size_t>(r) * steps.size());
  const uint64_t c1 = engine::step_clock();
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  const double ns_per_tick = c1 > c0 ? ns / static_cast<double>(c1 - c0) : 0.0;
  std::vector<uint64_t> one(static_cast<size_t>(runs));
  for (size_t s = 0; s < steps.size(); ++s) {
    for (int r = 0; r < runs; ++r) one[static_cast<size_t>(r)] = ticks[static_cast<size_t>(r) * steps.size() + s];
    std::nth_element(one.begin(), one.begin() + runs / 2, one.end());
    steps[s].p50_ns = static_cast<double>(one[static_cast<size_t>(runs / 2)]) * ns_per_tick;
  }
  return steps;
}

}  // namespace tickinfer
