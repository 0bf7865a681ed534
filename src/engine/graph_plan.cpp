// GraphPlan's non-hot-path members: construction, cloning, description.
#include "engine/graph_plan.hpp"

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

namespace {

const char* step_name(StepKind k) {
  switch (k) {
    case StepKind::Dense: return "gemv";
    case StepKind::Activation: return "activation";
    case StepKind::Softmax: return "softmax";
    case StepKind::Affine: return "affine";
    case StepKind::LayerNorm: return "layer_norm";
    case StepKind::Lstm: return "lstm";
    case StepKind::LstmWindow: return "lstm(window)";
    case StepKind::Gru: return "gru";
    case StepKind::GruClassic: return "gru(reset_after=false)";
    case StepKind::Conv1D: return "conv1d";
    case StepKind::MaxPool: return "max_pool";
    case StepKind::AvgPool: return "avg_pool";
    case StepKind::GlobalAvgPool: return "global_avg_pool";
    case StepKind::GlobalMaxPool: return "global_max_pool";
    case StepKind::Add: return "add";
    case StepKind::Sub: return "sub";
    case StepKind::Mul: return "mul";
    case StepKind::Concat: return "concat";
  }
  return "?";
}

// The step's sizes after its name and label (nothing for kinds without any worth showing).
void describe_operands(std::ostream& os, const Step& s) {
  switch (s.kind) {
    case StepKind::Dense:
      os << "  rows=" << s.rows << " K=" << s.in_width << " N=" << s.out_width;
      if (s.clamp_lo == 0.0f) os << " +relu";
      break;
    case StepKind::Lstm:
    case StepKind::LstmWindow:
    case StepKind::Gru:
    case StepKind::GruClassic:
      os << "  steps=" << s.steps << " in=" << s.in_width << " units=" << s.out_width
         << (s.zero_state ? "" : " (state kept)");
      break;
    case StepKind::Conv1D:
      os << "  out_len=" << s.steps << " taps=" << s.window << "x" << s.in_ch << " filters=" << s.out_width
         << " stride=" << s.stride << " dilation=" << s.dilation;
      break;
    case StepKind::Activation:
      os << "  " << activation_name(s.act.kind) << " n=" << s.out_width;
      break;
    default:
      break;
  }
}

}  // namespace

std::string GraphPlan::describe() const {
  const PlanLayout& L = *layout_;
  std::ostringstream os;
  os << "plan: " << L.steps.size() << " steps, kernels " << L.kernels->name << ", mode "
     << (L.mode == RecurrentMode::Stream ? "stream" : "window") << ", arena " << arena_bytes()
     << " B, " << L.flops << " FLOP and " << L.weight_bytes << " weight bytes per run\n";
  for (const Step& s : L.steps) {
    os << "  " << step_name(s.kind) << "  " << s.label;
    describe_operands(os, s);
    if (!s.sparse_note.empty()) os << "  [" << s.sparse_note << "]";
    os << '\n';
  }
  return os.str();
}

}  // namespace tickinfer::engine
