// The elementwise and per-row steps: Activation (any ActivationSpec, elementwise), Softmax,
// Affine (an unfolded BatchNorm: x * scale + shift per channel) and LayerNorm, each over rows of
// out_width floats. All are row-wise: the rows path applies them to each row.
#include <ostream>

#include "engine/steps/step_ops.hpp"
#include "model/graph.hpp"

namespace tickinfer::engine {
namespace {

void run_activation(const StepCtx& c, const Step& s) noexcept {
  c.ks.activation(s.act, c.at(s.in), c.at(s.out), s.out_width);
}
void rows_activation(const kernels::KernelSet& ks, const Step& s, const RowsArgs& a) noexcept {
  for (int r = 0; r < a.rows; ++r) ks.activation(s.act, a.x + r * a.ld, a.y + r * a.ldy, s.out_width);
}
void describe_activation(std::ostream& os, const Step& s) {
  os << "  " << activation_name(s.act.kind) << " n=" << s.out_width;
}

void run_softmax(const StepCtx& c, const Step& s) noexcept {
  for (int r = 0; r < s.rows; ++r) {
    c.ks.softmax(c.at(s.in) + static_cast<size_t>(r) * s.out_width, c.at(s.out) + static_cast<size_t>(r) * s.out_width,
                 s.out_width);
  }
}
void rows_softmax(const kernels::KernelSet& ks, const Step& s, const RowsArgs& a) noexcept {
  for (int r = 0; r < a.rows; ++r) ks.softmax(a.x + r * a.ld, a.y + r * a.ldy, s.out_width);
}

void run_affine(const StepCtx& c, const Step& s) noexcept {
  for (int r = 0; r < s.rows; ++r) {
    c.ks.affine(c.at(s.in) + static_cast<size_t>(r) * s.out_width, s.scale, s.shift,
                c.at(s.out) + static_cast<size_t>(r) * s.out_width, s.out_width);
  }
}
void rows_affine(const kernels::KernelSet& ks, const Step& s, const RowsArgs& a) noexcept {
  for (int r = 0; r < a.rows; ++r) ks.affine(a.x + r * a.ld, s.scale, s.shift, a.y + r * a.ldy, s.out_width);
}

void run_layer_norm(const StepCtx& c, const Step& s) noexcept {
  const size_t width = static_cast<size_t>(s.out_width);
  c.ks.layer_norm(c.at(s.in), width, s.rows, s.scale, s.shift, s.epsilon, c.at(s.out), width, s.out_width);
}
void rows_layer_norm(const kernels::KernelSet& ks, const Step& s, const RowsArgs& a) noexcept {
  ks.layer_norm(a.x, static_cast<size_t>(a.ld), a.rows, s.scale, s.shift, s.epsilon, a.y, static_cast<size_t>(a.ldy),
                s.out_width);
}

// Scale and shift (gamma and beta): two floats per channel.
StepCost per_channel_cost(const Step& s) { return {0, 2 * int64_t{s.out_width}}; }

}  // namespace

extern const StepOps kActivationStep = {"activation", "a step", run_activation, rows_activation, no_floats, no_floats,
                                 no_cost,      describe_activation};
extern const StepOps kSoftmaxStep = {"softmax", "a step", run_softmax, rows_softmax, no_floats, no_floats, no_cost, no_operands};
extern const StepOps kAffineStep = {"affine",  "a step",  run_affine,      rows_affine,
                             no_floats, no_floats, per_channel_cost, no_operands};
extern const StepOps kLayerNormStep = {"layer_norm", "a step",  run_layer_norm,   rows_layer_norm,
                                no_floats,    no_floats, per_channel_cost, no_operands};

}  // namespace tickinfer::engine
