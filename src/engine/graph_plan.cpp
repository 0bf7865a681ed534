// GraphPlan's non-hot-path members: construction, cloning, description.
#include "engine/graph_plan.hpp"
#include "engine/steps/step_ops.hpp"

#include <algorithm>
#include <sstream>

namespace tickinfer::engine {

GraphPlan::GraphPlan(std::shared_ptr<const PlanLayout> layout, std::shared_ptr<const PackedWeights> weights)
    : layout_(std::move(layout)),
      weights_(std::move(weights)),
      arena_(std::max<size_t>(layout_->arena_floats, 1)),
      bufs_(1 + layout_->input_shapes.size() + layout_->kept.size(), nullptr),
      kept_start_(layout_->kept.size(), 0) {
  bufs_[0] = arena_.data();
  for (size_t k = 0; k < layout_->kept.size(); ++k) bufs_[1 + layout_->input_shapes.size() + k] = arena_.data() + layout_->kept[k].offset;
}

std::unique_ptr<PlanBackend> GraphPlan::clone() const { return std::make_unique<GraphPlan>(layout_, weights_); }

int64_t GraphPlan::weight_footprint_bytes() const {
  int64_t bytes = 0;
  for (const AlignedBuffer& b : weights_->buffers) bytes += static_cast<int64_t>(b.size() * sizeof(float));
  return bytes;
}


std::vector<Plan::StepProfile> GraphPlan::profile_steps() const {
  std::vector<Plan::StepProfile> out;
  for (const Step& s : layout_->steps) out.push_back({std::string(s.ops->name) + "  " + s.label, 2 * s.ops->cost(s).macs, 0});
  return out;
}

std::string GraphPlan::describe() const {
  const PlanLayout& L = *layout_;
  std::ostringstream os;
  os << "plan: " << L.steps.size() << " steps, kernels " << L.kernels->name << ", mode "
     << (L.mode == RecurrentMode::Stream ? "stream" : L.incremental ? "window, incremental" : "window") << ", arena "
     << arena_bytes()
     << " B, " << L.flops << " FLOP and " << L.weight_bytes << " weight bytes per run\n";
  for (size_t i = 0; i < L.steps.size(); ++i) {
    const Step& s = L.steps[i];
    os << "  " << s.ops->name << "  " << s.label;
    s.ops->describe(os, s);
    if (!s.sparse_note.empty()) os << "  [" << s.sparse_note << "]";
    if (L.incremental) {
      const IncrementalStep& inc = L.increments[i];
      if (inc.on) {
        os << "  [slide: recomputes " << inc.front << " + " << inc.back << " of " << inc.rows << " rows]";
      } else {
        os << "  [slide: whole, " << inc.why << "]";
      }
    }
    os << '\n';
  }
  return os.str();
}

}  // namespace tickinfer::engine
