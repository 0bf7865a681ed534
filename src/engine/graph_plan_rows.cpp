// GraphPlan::run_rows: several independent inputs through a row-wise feed-forward plan in one call.
// Each Dense goes through the kernel set's gemm_rows (bit-identical to gemv per row, each weight
// load shared by the rows); every other step is applied row by row. The step list is the one
// run() walks, so a batch gives exactly the rows' run() results.
#include <algorithm>
#include <cstring>
#include <string>

#include "engine/graph_plan.hpp"

namespace tickinfer::engine {
namespace {

bool same(TensorRef a, TensorRef b) { return a.buf == b.buf && a.offset == b.offset; }

const char* kind_name(StepKind k) {
  switch (k) {
    case StepKind::Lstm:
    case StepKind::LstmWindow: return "LSTM";
    case StepKind::Gru:
    case StepKind::GruClassic: return "GRU";
    case StepKind::Conv1D: return "Conv1D";
    case StepKind::MaxPool:
    case StepKind::AvgPool:
    case StepKind::GlobalAvgPool:
    case StepKind::GlobalMaxPool: return "pooling";
    case StepKind::Add:
    case StepKind::Sub:
    case StepKind::Mul:
    case StepKind::Concat: return "a merge";
    default: return "a step";
  }
}

}  // namespace

std::string GraphPlan::why_not_row_wise(size_t& width) const {
  const PlanLayout& L = *layout_;
  if (L.input_shapes.size() != 1 || L.outputs.size() != 1) return "the plan must have one input and one output";
  width = 1;
  TensorRef prev{1, 0};  // the caller's input 0
  for (const Step& s : L.steps) {
    const bool row_wise = s.kind == StepKind::Dense || s.kind == StepKind::Activation || s.kind == StepKind::Softmax ||
                          s.kind == StepKind::Affine || s.kind == StepKind::LayerNorm;
    if (!row_wise) {
      return "layer '" + s.label + "' is " + kind_name(s.kind) + ", not a row-wise layer (Dense, activations, normalization)";
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
    const int n = s.out_width;
    switch (s.kind) {
      case StepKind::Dense:
        if (const SparseWeights* sw = s.sparse_kernel) {  // per row: the same numbers as run()
          for (int r = 0; r < rows; ++r) sw->gemv(cur + r * ld, sw->view, s.bias, dst + r * ldd, s.clamp_lo, s.clamp_hi);
        } else {
          ks.gemm_rows(cur, rows, ld, s.in_width, s.kernel, n, s.bias, dst, ldd, s.clamp_lo, s.clamp_hi);
        }
        break;
      case StepKind::Activation:
        for (int r = 0; r < rows; ++r) ks.activation(s.act, cur + r * ld, dst + r * ldd, n);
        break;
      case StepKind::Softmax:
        for (int r = 0; r < rows; ++r) ks.softmax(cur + r * ld, dst + r * ldd, n);
        break;
      case StepKind::Affine:
        for (int r = 0; r < rows; ++r) ks.affine(cur + r * ld, s.scale, s.shift, dst + r * ldd, n);
        break;
      case StepKind::LayerNorm:
        for (int r = 0; r < rows; ++r) ks.layer_norm(cur + r * ld, s.scale, s.shift, s.epsilon, dst + r * ldd, n);
        break;
      default: break;  // refused by reserve_rows
    }
    cur = dst;
    ld = ldd;
    b ^= 1;
  }
}

}  // namespace tickinfer::engine
