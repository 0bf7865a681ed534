// GraphPlan::run_rows: several independent inputs through a row-wise feed-forward plan in one call.
// Each step's family says how it runs rows (StepOps::run_rows): Dense through the kernel set's
// gemm_rows (bit-identical to gemv per row, each weight load shared by the rows), the others row
// by row. The step list is the one run() walks, so a batch gives exactly the rows' run() results.
#include <algorithm>
#include <cstring>
#include <string>

#include "engine/graph_plan.hpp"
#include "engine/steps/step_ops.hpp"

namespace tickinfer::engine {
namespace {

bool same(TensorRef a, TensorRef b) { return a.buf == b.buf && a.offset == b.offset; }

}  // namespace

std::string GraphPlan::why_not_row_wise(size_t& width) const {
  const PlanLayout& L = *layout_;
  if (L.input_shapes.size() != 1 || L.outputs.size() != 1) return "the plan must have one input and one output";
  width = 1;
  TensorRef prev{1, 0};  // the caller's input 0
  for (const Step& s : L.steps) {
    if (s.ops->run_rows == nullptr) {
      return "layer '" + s.label + "' is " + s.ops->family + ", not a row-wise layer (Dense, activations, normalization)";
    }
    if (s.rows != 1) return "layer '" + s.label + "' works on a sequence, not one row";
    if (!same(s.in, prev)) {
      return "layer '" + s.label + "' does not take the previous layer's output (the model is not a single chain)";
    }
    prev = s.out;
    width = std::max(width, static_cast<size_t>(s.out_width));
  }
  if (!L.steps.empty() && !same(L.outputs[0], prev)) return "the plan's output is not its last layer's";
  return "";
}

std::string GraphPlan::reserve_rows(int max_rows) {
  size_t width = 0;
  std::string why = why_not_row_wise(width);
  if (!why.empty()) return why;
  for (auto& b : rows_buf_) b = AlignedBuffer(width * static_cast<size_t>(max_rows));
  max_rows_ = max_rows;
  return why;
}

void GraphPlan::run_rows(const float* x, int rows, float* y) noexcept {
  const size_t in_width = static_cast<size_t>(shape_size(layout_->input_shapes[0]));
  const size_t out_width = static_cast<size_t>(shape_size(layout_->output_shapes[0]));
  if (max_rows_ == 0) {  // nothing reserved (a clone, or never asked for): one run() per row
    run_each_row(*this, x, rows, in_width, y, out_width);
    return;
  }
  for (int r = 0; r < rows; r += max_rows_) {  // more than the buffers hold: in reserved-size slices
    run_reserved_rows(x + r * in_width, std::min(max_rows_, rows - r), y + r * out_width, in_width, out_width);
  }
}

void GraphPlan::run_reserved_rows(const float* x, int rows, float* y, size_t in_width, size_t out_width) noexcept {
  const PlanLayout& L = *layout_;
  const kernels::KernelSet& ks = *L.kernels;
  if (L.steps.empty()) {
    std::memcpy(y, x, sizeof(float) * out_width * static_cast<size_t>(rows));
    return;
  }
  const float* cur = x;
  size_t ld = in_width;
  int b = 0;
  for (size_t i = 0; i < L.steps.size(); ++i) {
    const Step& s = L.steps[i];
    const bool last = i + 1 == L.steps.size();
    float* dst = last ? y : rows_buf_[b].data();
    const size_t ldd = last ? out_width : static_cast<size_t>(s.out_width);
    s.ops->run_rows(ks, s, RowsArgs{cur, ld, dst, ldd, rows});  // row-wise: checked by reserve_rows
    cur = dst;
    ld = ldd;
    b ^= 1;
  }
}

}  // namespace tickinfer::engine
