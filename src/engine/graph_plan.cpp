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
      bufs_(1 + layout_->input_shapes.size(), nullptr) {
  bufs_[0] = arena_.data();
}

std::unique_ptr<PlanBackend> GraphPlan::clone() const { return std::make_unique<GraphPlan>(layout_, weights_); }

int64_t GraphPlan::weight_footprint_bytes() const {
  int64_t bytes = 0;
  for (const AlignedBuffer& b : weights_->buffers) bytes += static_cast<int64_t>(b.size() * sizeof(float));
  return bytes;
}


std::string GraphPlan::describe() const {
  const PlanLayout& L = *layout_;
  std::ostringstream os;
  os << "plan: " << L.steps.size() << " steps, kernels " << L.kernels->name << ", mode "
     << (L.mode == RecurrentMode::Stream ? "stream" : "window") << ", arena " << arena_bytes()
     << " B, " << L.flops << " FLOP and " << L.weight_bytes << " weight bytes per run\n";
  for (const Step& s : L.steps) {
    os << "  " << s.ops->name << "  " << s.label;
    s.ops->describe(os, s);
    if (!s.sparse_note.empty()) os << "  [" << s.sparse_note << "]";
    os << '\n';
  }
  return os.str();
}

}  // namespace tickinfer::engine
