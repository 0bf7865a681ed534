// The merges: Add / Sub / Mul of equal shapes (in op rhs, then op each further input) and Concat.
#include <cstring>

#include "engine/steps/step_ops.hpp"

namespace tickinfer::engine {
namespace {

void run_binary(const StepCtx& c, const Step& s) noexcept {
  auto fn = s.kind == StepKind::Add ? c.ks.add : s.kind == StepKind::Sub ? c.ks.sub : c.ks.mul;
  float* y = c.at(s.out);
  fn(c.at(s.in), c.at(s.rhs), y, s.out_width);
  for (const TensorRef& r : s.extra_inputs) fn(y, c.at(r), y, s.out_width);
}

// Concatenation of inputs whose shapes agree except on the axis: `rows` outer blocks, each
// input contributing concat_widths[i] floats per block.
void run_concat(const StepCtx& c, const Step& s) noexcept {
  float* y = c.at(s.out);
  for (int r = 0; r < s.rows; ++r) {
    for (size_t i = 0; i < s.extra_inputs.size(); ++i) {
      const int w = s.concat_widths[i];
      std::memcpy(y, c.at(s.extra_inputs[i]) + static_cast<size_t>(r) * w, sizeof(float) * w);
      y += w;
    }
  }
}

}  // namespace

extern const StepOps kAddStep = {"add", "a merge", run_binary, nullptr, no_floats, no_floats, no_cost, no_operands};
extern const StepOps kSubStep = {"sub", "a merge", run_binary, nullptr, no_floats, no_floats, no_cost, no_operands};
extern const StepOps kMulStep = {"mul", "a merge", run_binary, nullptr, no_floats, no_floats, no_cost, no_operands};
extern const StepOps kConcatStep = {"concat", "a merge", run_concat, nullptr, no_floats, no_floats, no_cost, no_operands};

}  // namespace tickinfer::engine
