// Dense: rows x gemv(in[r], kernel, bias) -> out[r], clamped (a fused relu, or +-inf). The rows
// path goes through the kernel set's gemm_rows (each weight load shared by the rows), or per row
// through the block-sparse form when the compiler chose one (the same numbers as run()).
#include <ostream>

#include "engine/steps/step_ops.hpp"

namespace tickinfer::engine {
namespace {

// Over a sequence (rows > 1) the dense form goes through gemm_rows: each row's bits are gemv's
// (its contract), with each weight load shared by several rows.
void run(const StepCtx& c, const Step& s) noexcept {
  const float* x = c.at(s.in);
  float* y = c.at(s.out);
  if (s.rows > 1 && !s.sparse_kernel) {
    c.ks.gemm_rows(x, s.rows, static_cast<size_t>(s.in_width), s.in_width, s.kernel, s.out_width, s.bias, y,
                   static_cast<size_t>(s.out_width), s.clamp_lo, s.clamp_hi);
    return;
  }
  for (int r = 0; r < s.rows; ++r) {
    matvec(c, s.sparse_kernel, x + static_cast<size_t>(r) * s.in_width, s.in_width, s.kernel, s.out_width, s.bias,
           y + static_cast<size_t>(r) * s.out_width, s.clamp_lo, s.clamp_hi);
  }
}

void run_rows(const kernels::KernelSet& ks, const Step& s, const RowsArgs& a) noexcept {
  if (const SparseWeights* sw = s.sparse_kernel) {
    for (int r = 0; r < a.rows; ++r) sw->gemv(a.x + r * a.ld, sw->view, s.bias, a.y + r * a.ldy, s.clamp_lo, s.clamp_hi);
  } else {
    ks.gemm_rows(a.x, a.rows, a.ld, s.in_width, s.kernel, s.out_width, s.bias, a.y, a.ldy, s.clamp_lo, s.clamp_hi);
  }
}

// Weights a layer reuses across rows (Dense over a sequence) count once; a sparse form reads its
// kept blocks and their indices instead.
StepCost cost(const Step& s) {
  const int64_t k = s.in_width, n = s.out_width;
  return {s.rows * k * n, matrix_floats(s.sparse_kernel, k, n) + n};
}

void describe(std::ostream& os, const Step& s) {
  os << "  rows=" << s.rows << " K=" << s.in_width << " N=" << s.out_width;
  if (s.clamp_lo == 0.0f) os << " +relu";
}

}  // namespace

extern const StepOps kDenseStep = {"gemv", "a step", run, run_rows, no_floats, no_floats, cost, describe, true, false};

}  // namespace tickinfer::engine
