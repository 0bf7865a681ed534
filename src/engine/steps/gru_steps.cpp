// The GRU steps: Gru (reset_after = true, Keras' default) and GruClassic (reset_after = false).
// State: h [n]; n is the unit count (out_width), in the input features (in_width).
#include <cstring>
#include <limits>
#include <ostream>

#include "engine/steps/step_ops.hpp"

namespace tickinfer::engine {
namespace {

// GRU with reset_after = true. State: h [n]. Scratch: zx [3n], zh [3n].
void run_gru(const StepCtx& c, const Step& s) noexcept {
  constexpr float inf = std::numeric_limits<float>::infinity();
  const int in = s.in_width, u = s.out_width;
  float* h = c.arena(s.state);
  float* zx = c.arena(s.scratch);
  float* zh = zx + 3 * u;
  if (s.zero_state) std::memset(h, 0, sizeof(float) * u);
  const float* x = c.at(s.in);
  float* out = c.at(s.out);
  for (int t = 0; t < s.steps; ++t) {
    matvec(c, s.sparse_kernel, x + static_cast<size_t>(t) * in, in, s.kernel, 3 * u, s.bias, zx, -inf, inf);
    matvec(c, s.sparse_recurrent, h, u, s.recurrent_kernel, 3 * u, s.recurrent_bias, zh, -inf, inf);
    c.ks.gru_cell(zx, zh, h, u, s.rec, s.act);
    if (s.return_sequences) std::memcpy(out + static_cast<size_t>(t) * u, h, sizeof(float) * u);
  }
  if (!s.return_sequences) std::memcpy(out, h, sizeof(float) * u);
}

// GRU with reset_after = false: the reset gate scales h before the candidate's matmul.
// kernel (in x 3n) and bias (3n); recurrent_kernel: U's z|r columns (n x 2n), recurrent_kernel_h:
// U's h columns (n x n). Scratch: zx [3n], rh [n].
void run_gru_classic(const StepCtx& c, const Step& s) noexcept {
  constexpr float inf = std::numeric_limits<float>::infinity();
  const int in = s.in_width, u = s.out_width;
  float* h = c.arena(s.state);
  float* zx = c.arena(s.scratch);
  float* rh = zx + 3 * u;
  if (s.zero_state) std::memset(h, 0, sizeof(float) * u);
  const float* x = c.at(s.in);
  float* out = c.at(s.out);
  for (int t = 0; t < s.steps; ++t) {
    c.ks.gemv(x + static_cast<size_t>(t) * in, in, s.kernel, 3 * u, s.bias, zx, -inf, inf);
    c.ks.gemv(h, u, s.recurrent_kernel, 2 * u, zx, zx, -inf, inf);
    c.ks.activation(s.rec, zx, zx, 2 * u);
    c.ks.mul(zx + u, h, rh, u);
    c.ks.gemv(rh, u, s.recurrent_kernel_h, u, zx + 2 * u, zx + 2 * u, -inf, inf);
    c.ks.activation(s.act, zx + 2 * u, zx + 2 * u, u);
    for (int j = 0; j < u; ++j) h[j] = zx[j] * h[j] + (1.0f - zx[j]) * zx[2 * u + j];
    if (s.return_sequences) std::memcpy(out + static_cast<size_t>(t) * u, h, sizeof(float) * u);
  }
  if (!s.return_sequences) std::memcpy(out, h, sizeof(float) * u);
}

int64_t gru_state(const OpParams& p) { return p.out_width; }
int64_t gru_scratch(const OpParams& p) { return 6 * int64_t{p.out_width}; }
int64_t classic_scratch(const OpParams& p) { return 4 * int64_t{p.out_width}; }

StepCost gru_cost(const Step& s) {
  const int64_t k = s.in_width, n = s.out_width, T = s.steps;
  return {T * (k + n) * 3 * n, T * ((k + n) * 3 * n + 6 * n)};
}

}  // namespace

extern const StepOps kGruStep = {"gru", "GRU", run_gru, nullptr, gru_state, gru_scratch, gru_cost, describe_recurrent, true, true};
// U is split in two (z|r and h), each a plain gemv: no sparse form.
extern const StepOps kGruClassicStep = {"gru(reset_after=false)", "GRU",     run_gru_classic,    nullptr, gru_state,
                                 classic_scratch,          gru_cost,  describe_recurrent, false,   false};

}  // namespace tickinfer::engine
