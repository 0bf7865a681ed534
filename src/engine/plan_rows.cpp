// Plan::run_rows: several independent inputs through a row-wise feed-forward plan in one call.
// Each Dense goes through the kernel set's gemm_rows (bit-identical to gemv per row, each weight
// load shared by the rows); every other step is applied row by row. The step list is the one
// run() walks, so a batch gives exactly the rows' run() results.
#include <algorithm>
#include <cstring>
#include <string>

#include "engine/plan_impl.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer {
namespace {

using engine::Step;
using engine::StepKind;

bool same(engine::TensorRef a, engine::TensorRef b) { return a.buf == b.buf && a.offset == b.offset; }

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

namespace {

// Why the plan cannot run rows ("" when it can), and the widest step output it needs room for.
std::string why_not_row_wise(const Plan::Impl& im, size_t& width) {
  if (im.program) return "TFLite and .tkq plans run one row per call";
  const engine::PlanLayout& L = *im.layout;
  if (L.input_shapes.size() != 1 || L.outputs.size() != 1) return "the plan must have one input and one output";
  width = 1;
  engine::TensorRef prev{1, 0};  // the caller's input 0
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
    width = std::max(width, static_cast<size_t>(s.n));
  }
  if (!L.steps.empty() && !same(L.outputs[0], prev)) return "the plan's output is not its last layer's";
  return "";
}

void allocate_rows(Plan::Impl& im, size_t width, int max_rows) {
  for (auto& b : im.rows_buf) b = engine::AlignedBuffer(width * static_cast<size_t>(max_rows));
  im.max_rows = max_rows;
}

}  // namespace

void Plan::reserve_rows(int max_rows) {
  if (max_rows < 1) throw Error("reserve_rows: max_rows must be at least 1");
  size_t width = 0;
  const std::string why = why_not_row_wise(*impl_, width);
  if (!why.empty()) throw Error("reserve_rows: " + why);
  allocate_rows(*impl_, width, max_rows);
}

bool Plan::try_reserve_rows(int max_rows) {
  size_t width = 0;
  if (max_rows < 1 || !why_not_row_wise(*impl_, width).empty()) return false;
  allocate_rows(*impl_, width, max_rows);
  return true;
}

int Plan::reserved_rows() const noexcept { return impl_->max_rows; }

void Plan::run_rows(const float* x, int rows, float* y) noexcept {
  Impl& im = *impl_;
  const size_t in_width = input_size(0), out_width = output_size(0);
  if (im.max_rows == 0) {  // nothing reserved (a clone, or never asked for): one run() per row
    for (int r = 0; r < rows; ++r) run(x + r * in_width, y + r * out_width);
    return;
  }
  if (rows > im.max_rows) {  // more than the buffers hold: in reserved-size slices
    for (int r = 0; r < rows; r += im.max_rows) {
      run_rows(x + r * in_width, std::min(im.max_rows, rows - r), y + r * out_width);
    }
    return;
  }
  const engine::PlanLayout& L = *im.layout;
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
    float* dst = last ? y : im.rows_buf[b].data();
    const size_t ldd = last ? out_width : static_cast<size_t>(s.n);
    switch (s.kind) {
      case StepKind::Dense: ks.gemm_rows(cur, rows, ld, s.k, s.w0, s.n, s.w1, dst, ldd, s.lo, s.hi); break;
      case StepKind::Activation:
        for (int r = 0; r < rows; ++r) ks.activation(s.act, cur + r * ld, dst + r * ldd, s.n);
        break;
      case StepKind::Softmax:
        for (int r = 0; r < rows; ++r) ks.softmax(cur + r * ld, dst + r * ldd, s.n);
        break;
      case StepKind::Affine:
        for (int r = 0; r < rows; ++r) ks.affine(cur + r * ld, s.w0, s.w1, dst + r * ldd, s.n);
        break;
      case StepKind::LayerNorm:
        for (int r = 0; r < rows; ++r) ks.layer_norm(cur + r * ld, s.w0, s.w1, s.epsilon, dst + r * ldd, s.n);
        break;
      default: break;  // refused by reserve_rows
    }
    cur = dst;
    ld = ldd;
    b ^= 1;
  }
}

}  // namespace tickinfer
