// GraphPlan::run: walks the compiled step list, one call per step into its family's run
// (engine/steps/). No allocation, no locks, no syscalls, no exceptions: every size and pointer
// was fixed by the compiler; only memcpy/memset and kernel calls happen.
#include <cstring>

#include "engine/graph_plan.hpp"
#include "engine/steps/step_ops.hpp"

namespace tickinfer::engine {

void GraphPlan::run(const float* const* inputs, float* const* outputs) noexcept {
  const PlanLayout& L = *layout_;
  float** bufs = bufs_.data();
  for (size_t i = 0; i + 1 < bufs_.size(); ++i) bufs[i + 1] = const_cast<float*>(inputs[i]);
  const StepCtx c{bufs, *L.kernels};
  for (const Step& s : L.steps) s.ops->run(c, s);
  for (size_t i = 0; i < L.outputs.size(); ++i) {
    std::memcpy(outputs[i], c.at(L.outputs[i]), sizeof(float) * static_cast<size_t>(shape_size(L.output_shapes[i])));
  }
}

void GraphPlan::reset_state() noexcept {
  for (const auto& [off, len] : layout_->state_ranges) std::memset(arena_.data() + off, 0, sizeof(float) * len);
}

}  // namespace tickinfer::engine
