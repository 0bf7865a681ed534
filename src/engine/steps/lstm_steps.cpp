// The LSTM steps: Lstm (stream mode, one step per run over [x | h] with the stacked [W; U]) and
// LstmWindow (window mode: every step's input projection first, then h U per step). In the
// recurrent steps n is the unit count (out_width) and in the input features (in_width).
#include <algorithm>
#include <cstring>
#include <limits>
#include <ostream>

#include "engine/steps/step_ops.hpp"

namespace tickinfer::engine {
namespace {

// One LSTM cell update (KernelSet::lstm_cell), with TFLite's cell clipping when the step has one:
// c = clip(f*c + i*g, +-cell_clip) before h = o * act(c). The kernel set's fused cell has no
// clip, so the clipped form runs the gate activations over the blocks and updates c here.
void lstm_cell(const StepCtx& c, const Step& s, float* z, float* cell, float* h, int u) noexcept {
  if (s.cell_clip <= 0.0f) return c.ks.lstm_cell(z, cell, h, u, s.rec, s.act);
  c.ks.activation(s.rec, z, z, 2 * u);  // i, f
  c.ks.activation(s.act, z + 2 * u, z + 2 * u, u);
  c.ks.activation(s.rec, z + 3 * u, z + 3 * u, u);
  const float lim = s.cell_clip;
  for (int j = 0; j < u; ++j) {
    const float cn = std::clamp(z[u + j] * cell[j] + z[j] * z[2 * u + j], -lim, lim);
    cell[j] = cn;
    z[j] = cn;  // the consumed i block holds act(c) next
  }
  c.ks.activation(s.act, z, z, u);
  for (int j = 0; j < u; ++j) h[j] = z[3 * u + j] * z[j];
}

// LSTM one step per run (stream mode; s.steps is 1). State: xh [in + n] (input then h), c [n];
// h and c persist between runs until reset_state(). Scratch: z [4n].
void run_lstm(const StepCtx& c, const Step& s) noexcept {
  const int in = s.in_width, u = s.out_width;
  float* xh = c.arena(s.state);
  float* h = xh + in;
  float* cell = h + u;
  float* z = c.arena(s.scratch);
  const float* x = c.at(s.in);
  float* out = c.at(s.out);
  for (int t = 0; t < s.steps; ++t) {
    std::memcpy(xh, x + static_cast<size_t>(t) * in, sizeof(float) * in);
    matvec(c, s.sparse_kernel, xh, in + u, s.kernel, 4 * u, s.bias, z, -std::numeric_limits<float>::infinity(),
           std::numeric_limits<float>::infinity());
    lstm_cell(c, s, z, cell, h, u);
    if (s.return_sequences) std::memcpy(out + static_cast<size_t>(t) * u, h, sizeof(float) * u);
  }
  if (!s.return_sequences) std::memcpy(out, h, sizeof(float) * u);
}

// Every step's x_t W + b into xw [T][4n]. Dense W goes through gemm_rows, which shares each
// weight load across rows, each row's bits gemv's: per step, W (DeepLOB's 192 x 256 is 196 KB,
// past L1) came from L2 once a step. A sparse W runs its gemv per step.
void input_projections(const StepCtx& c, const Step& s, const float* x, float* xw) noexcept {
  constexpr float inf = std::numeric_limits<float>::infinity();
  const int in = s.in_width, n4 = 4 * s.out_width;
  if (!s.sparse_kernel) {
    c.ks.gemm_rows(x, s.steps, static_cast<size_t>(in), in, s.kernel, n4, s.bias, xw, static_cast<size_t>(n4), -inf, inf);
    return;
  }
  for (int t = 0; t < s.steps; ++t) {
    matvec(c, s.sparse_kernel, x + static_cast<size_t>(t) * in, in, s.kernel, n4, s.bias, xw + static_cast<size_t>(t) * n4,
           -inf, inf);
  }
}

// LSTM over a whole window from a zero state, or from the initial h and c the step reads
// (extra_inputs: an encoder's final state handed to a decoder). Scratch: xw [T][4n], the input
// projections x_t W + b of every step, computed first since they do not depend on h. State:
// h [n], c [n]. From zeros step 0 needs no h U; every other step adds h U into its row in place.
// return_state: the final c follows the output's h rows.
void run_lstm_window(const StepCtx& c, const Step& s) noexcept {
  constexpr float inf = std::numeric_limits<float>::infinity();
  const int u = s.out_width;
  float* h = c.arena(s.state);
  float* cell = h + u;
  float* xw = c.arena(s.scratch);
  if (s.initial_state) {
    std::memcpy(h, c.at(s.extra_inputs[0]), sizeof(float) * u);
    std::memcpy(cell, c.at(s.extra_inputs[1]), sizeof(float) * u);
  } else {
    std::memset(h, 0, sizeof(float) * 2 * u);
  }
  const int first_hu = s.initial_state ? 0 : 1;  // the first step whose h is not zero
  const float* x = c.at(s.in);
  float* out = c.at(s.out);
  if (s.projected) {
    // x W + b precomputed in `in` (an incremental plan keeps it between runs): read, never written.
    float* z = xw;
    for (int t = 0; t < s.steps; ++t) {
      const float* xt = x + static_cast<size_t>(t) * 4 * u;
      if (t >= first_hu) {
        matvec(c, s.sparse_recurrent, h, u, s.recurrent_kernel, 4 * u, xt, z, -inf, inf);
      } else {
        std::memcpy(z, xt, sizeof(float) * 4 * u);
      }
      lstm_cell(c, s, z, cell, h, u);
      if (s.return_sequences) std::memcpy(out + static_cast<size_t>(t) * u, h, sizeof(float) * u);
    }
  } else {
    input_projections(c, s, x, xw);
    for (int t = 0; t < s.steps; ++t) {
      float* z = xw + static_cast<size_t>(t) * 4 * u;
      if (t >= first_hu) matvec(c, s.sparse_recurrent, h, u, s.recurrent_kernel, 4 * u, z, z, -inf, inf);
      lstm_cell(c, s, z, cell, h, u);
      if (s.return_sequences) std::memcpy(out + static_cast<size_t>(t) * u, h, sizeof(float) * u);
    }
  }
  const size_t h_rows = s.return_sequences ? static_cast<size_t>(s.steps) : 1;
  if (!s.return_sequences) std::memcpy(out, h, sizeof(float) * u);
  if (s.return_state) std::memcpy(out + h_rows * u, cell, sizeof(float) * u);
}

int64_t lstm_state(const OpParams& p) { return p.in_width + 2 * int64_t{p.out_width}; }  // [x | h | c]
int64_t lstm_scratch(const OpParams& p) { return 4 * int64_t{p.out_width}; }
int64_t window_state(const OpParams& p) { return 2 * int64_t{p.out_width}; }           // h, c
// Every x W + b, or (projected) one step's gates.
int64_t window_scratch(const OpParams& p) { return (p.projected ? 1 : int64_t{p.steps}) * 4 * p.out_width; }

// Each step needs all recurrent weights after the previous step: read T times.
StepCost lstm_cost(const Step& s) {
  const int64_t k = s.in_width, n = s.out_width, T = s.steps;
  return {T * (k + n) * 4 * n, T * (matrix_floats(s.sparse_kernel, k + n, 4 * n) + 4 * n)};
}

// From a zero state the first step has no h U: U is read T - 1 times, from an initial state T
// times; W and b once (gemm_rows over the window) or, sparse, T times (projected: the projection
// is its Dense op's cost).
StepCost window_cost(const Step& s) {
  const int64_t k = s.projected ? 0 : s.in_width, n = s.out_width, T = s.steps;
  const int64_t hu = s.initial_state ? T : T - 1;
  const int64_t w_reads = s.sparse_kernel ? T : 1;
  return {T * k * 4 * n + hu * n * 4 * n, w_reads * (k * 4 * n + 4 * n) + hu * n * 4 * n};
}

}  // namespace

void describe_recurrent(std::ostream& os, const Step& s) {
  os << "  steps=" << s.steps << " in=" << s.in_width << " units=" << s.out_width << (s.zero_state ? "" : " (state kept)")
     << (s.initial_state ? " (initial state read)" : "") << (s.return_state ? " (final c returned)" : "");
}

extern const StepOps kLstmStep = {"lstm", "LSTM", run_lstm, nullptr, lstm_state, lstm_scratch, lstm_cost, describe_recurrent,
                           true, false};
extern const StepOps kLstmWindowStep = {"lstm(window)", "LSTM",      run_lstm_window, nullptr, window_state, window_scratch,
                                 window_cost,    describe_recurrent, true,      true};

}  // namespace tickinfer::engine
