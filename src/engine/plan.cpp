// Plan's non-hot-path members: ownership, shapes, description, cloning.
#include <sstream>

#include "engine/plan_impl.hpp"

namespace tickinfer {

Plan::Plan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Plan::Plan(Plan&&) noexcept = default;
Plan& Plan::operator=(Plan&&) noexcept = default;
Plan::~Plan() = default;

size_t Plan::num_inputs() const {
  return impl_->program ? impl_->program->input_shapes().size() : impl_->layout->input_shapes.size();
}
size_t Plan::num_outputs() const {
  return impl_->program ? impl_->program->output_shapes().size() : impl_->layout->output_shapes.size();
}
const Shape& Plan::input_shape(size_t i) const {
  return impl_->program ? impl_->program->input_shapes().at(i) : impl_->layout->input_shapes.at(i);
}
const Shape& Plan::output_shape(size_t i) const {
  return impl_->program ? impl_->program->output_shapes().at(i) : impl_->layout->output_shapes.at(i);
}
size_t Plan::input_size(size_t i) const { return static_cast<size_t>(shape_size(input_shape(i))); }
size_t Plan::output_size(size_t i) const { return static_cast<size_t>(shape_size(output_shape(i))); }
RecurrentMode Plan::mode() const { return impl_->program ? impl_->program->mode() : impl_->layout->mode; }
const char* Plan::isa() const {
  return impl_->program ? impl_->program->interpreter().isa() : impl_->layout->kernels->name;
}
size_t Plan::arena_bytes() const {
  return impl_->program ? impl_->program->interpreter().arena_bytes() : impl_->layout->arena_floats * sizeof(float);
}
int64_t Plan::flops() const { return impl_->program ? 2 * impl_->program->interpreter().macs() : impl_->layout->flops; }
int64_t Plan::weight_bytes() const {
  return impl_->program ? impl_->program->weight_bytes() : impl_->layout->weight_bytes;
}
int64_t Plan::weight_footprint_bytes() const {
  if (impl_->program) return impl_->program->weight_bytes();
  int64_t bytes = 0;
  for (const engine::AlignedBuffer& b : impl_->weights->buffers) {
    bytes += static_cast<int64_t>(b.size() * sizeof(float));
  }
  return bytes;
}

Plan Plan::clone() const {
  auto impl = std::make_unique<Impl>();
  if (impl_->program) {
    impl->program = impl_->program->clone();
    return Plan(std::move(impl));
  }
  impl->weights = impl_->weights;
  impl->layout = impl_->layout;
  impl->arena = engine::AlignedBuffer(std::max<size_t>(impl->layout->arena_floats, 1));
  impl->bufs.assign(impl_->bufs.size(), nullptr);
  impl->bufs[0] = impl->arena.data();
  return Plan(std::move(impl));
}

namespace {
const char* step_name(engine::StepKind k) {
  using engine::StepKind;
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
}  // namespace

std::string Plan::describe() const {
  if (impl_->program) {
    const tfl::Interpreter& in = impl_->program->interpreter();
    std::ostringstream os;
    os << "plan: " << in.num_ops() << " ops (" << in.program().source_format << "), kernels " << in.isa()
       << ", mode " << (mode() == RecurrentMode::Stream ? "stream" : "window") << ", arena " << arena_bytes()
       << " B, " << in.macs() << " MAC per run\n";
    if (impl_->program->folds_first_op() || impl_->program->folds_last_op()) {
      os << "  (" << (impl_->program->folds_first_op() ? "the first QUANTIZE" : "")
         << (impl_->program->folds_first_op() && impl_->program->folds_last_op() ? " and " : "")
         << (impl_->program->folds_last_op() ? "the last DEQUANTIZE" : "")
         << " done by the plan while it converts inputs and outputs)\n";
    }
    std::istringstream lines(in.describe());
    for (std::string line; std::getline(lines, line);) os << "  " << line << '\n';
    return os.str();
  }
  const engine::PlanLayout& L = *impl_->layout;
  std::ostringstream os;
  os << "plan: " << L.steps.size() << " steps, kernels " << L.kernels->name << ", mode "
     << (L.mode == RecurrentMode::Stream ? "stream" : "window") << ", arena " << arena_bytes()
     << " B, " << L.flops << " FLOP and " << L.weight_bytes << " weight bytes per run\n";
  for (const engine::Step& s : L.steps) {
    os << "  " << step_name(s.kind) << "  " << s.label;
    switch (s.kind) {
      case engine::StepKind::Dense:
        os << "  rows=" << s.rows << " K=" << s.k << " N=" << s.n;
        if (s.lo == 0.0f) os << " +relu";
        break;
      case engine::StepKind::Lstm:
      case engine::StepKind::LstmWindow:
      case engine::StepKind::Gru:
      case engine::StepKind::GruClassic:
        os << "  steps=" << s.steps << " in=" << s.k << " units=" << s.n
           << (s.zero_state ? "" : " (state kept)");
        break;
      case engine::StepKind::Conv1D:
        os << "  out_len=" << s.steps << " taps=" << s.window << "x" << s.in_ch << " filters=" << s.n
           << " stride=" << s.stride << " dilation=" << s.dilation;
        break;
      case engine::StepKind::Activation:
        os << "  " << activation_name(s.act.kind) << " n=" << s.n;
        break;
      default:
        break;
    }
    os << '\n';
  }
  return os.str();
}

}  // namespace tickinfer
