#pragma once
// One place per step kind of the CPU graph plan: how a step runs, how it runs over several rows
// (or that it cannot), the recurrent state and scratch it needs, its cost and its description.
// Each family of steps is one file in this folder; step_table.cpp is the one list that maps a
// StepKind to its StepOps, and the compiler stores the pointer in the Step, so the run loop is
// one indirect call per step and no other file switches on the kind.
#include <cstdint>
#include <cstring>
#include <iosfwd>

#include "engine/plan_layout.hpp"

namespace tickinfer::engine {

// What a step's run reads: buffer 0 is the arena, buffer 1 + i the caller's input i.
struct StepCtx {
  float* const* bufs;
  const kernels::KernelSet& ks;
  float* at(TensorRef r) const noexcept { return bufs[r.buf] + r.offset; }
  float* arena(uint32_t off) const noexcept { return bufs[0] + off; }
};

// The rows path: `rows` inputs at x (leading dimension ld) to outputs at y (ldy).
struct RowsArgs {
  const float* x;
  size_t ld;
  float* y;
  size_t ldy;
  int rows;
};

struct StepCost {
  int64_t macs = 0;     // multiply-accumulates per run (FLOPs are twice this)
  int64_t weights = 0;  // weight floats read per run
};

struct StepOps {
  const char* name;    // describe()'s name for the step
  const char* family;  // how run_rows' refusal names a step that is not row-wise
  void (*run)(const StepCtx& c, const Step& s) noexcept;
  // Several independent rows, each bit-identical to run() on it; nullptr: not row-wise.
  void (*run_rows)(const kernels::KernelSet& ks, const Step& s, const RowsArgs& a) noexcept;
  int64_t (*state_floats)(const OpParams& p);    // kept between runs (stream mode)
  int64_t (*scratch_floats)(const OpParams& p);  // this step only
  StepCost (*cost)(const Step& s);
  void (*describe)(std::ostream& os, const Step& s);  // the sizes after the name and label
  // Which matrices may take a block-sparse form (sparse_choice.hpp).
  bool sparse_kernel = false, sparse_recurrent = false;
};

const StepOps& step_ops(StepKind kind);

// For the families' tables.
inline int64_t no_floats(const OpParams&) { return 0; }
inline StepCost no_cost(const Step&) { return {}; }
inline void no_operands(std::ostream&, const Step&) {}
// steps, in and units of a recurrent step (lstm_steps.cpp; the GRU steps share it).
void describe_recurrent(std::ostream& os, const Step& s);

// y = clamp(init + x W): through the block-sparse form when the compiler chose one for W.
inline void matvec(const StepCtx& c, const SparseWeights* sw, const float* x, int K, const float* packed, int N,
                   const float* init, float* y, float lo, float hi) noexcept {
  if (sw) {
    sw->gemv(x, sw->view, init, y, lo, hi);
  } else {
    c.ks.gemv(x, K, packed, N, init, y, lo, hi);
  }
}

// A recurrent step's weight floats of a matrix: its sparse form's panels, or K x N dense.
inline int64_t matrix_floats(const SparseWeights* sw, int64_t K, int64_t N) {
  return sw ? static_cast<int64_t>(sw->panels.bytes() / 4) : K * N;
}

}  // namespace tickinfer::engine
