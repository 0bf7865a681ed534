// GraphPlan::run: walks the compiled step list. No allocation, no locks, no syscalls, no
// exceptions: every size and pointer was fixed by the compiler; only memcpy/memset and kernel
// calls happen.
#include <algorithm>
#include <cstring>
#include <limits>

#include "engine/graph_plan.hpp"

namespace tickinfer::engine {
namespace {

using kernels::KernelSet;

struct Ctx {
  float* const* bufs;
  const KernelSet& ks;
  float* at(TensorRef r) const noexcept { return bufs[r.buf] + r.offset; }
  float* arena(uint32_t off) const noexcept { return bufs[0] + off; }
};

// y = clamp(init + x W): through the block-sparse form when the compiler chose one for W.
inline void matvec(const Ctx& c, const SparseWeights* sw, const float* x, int K, const float* packed, int N,
                   const float* init, float* y, float lo, float hi) noexcept {
  if (sw) {
    sw->gemv(x, sw->view, init, y, lo, hi);
  } else {
    c.ks.gemv(x, K, packed, N, init, y, lo, hi);
  }
}

void run_dense(const Ctx& c, const Step& s) noexcept {
  const float* x = c.at(s.in);
  float* y = c.at(s.out);
  for (int r = 0; r < s.rows; ++r) {
    matvec(c, s.sparse_kernel, x + static_cast<size_t>(r) * s.in_width, s.in_width, s.kernel, s.out_width, s.bias,
           y + static_cast<size_t>(r) * s.out_width, s.clamp_lo, s.clamp_hi);
  }
}

// In the recurrent steps n is the unit count (out_width) and in the input features (in_width).

// One LSTM cell update (KernelSet::lstm_cell), with TFLite's cell clipping when the step has one:
// c = clip(f*c + i*g, +-cell_clip) before h = o * act(c). The kernel set's fused cell has no
// clip, so the clipped form runs the gate activations over the blocks and updates c here.
void lstm_cell(const Ctx& c, const Step& s, float* z, float* cell, float* h, int u) noexcept {
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
void run_lstm(const Ctx& c, const Step& s) noexcept {
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

// LSTM over a whole window from a zero state. Scratch: xw [T][4n], the input projections
// x_t W + b of every step, computed first since they do not depend on h. State: h [n], c [n].
// Step 0 needs no h U (h is zero); each later step adds h U into its row in place.
void run_lstm_window(const Ctx& c, const Step& s) noexcept {
  constexpr float inf = std::numeric_limits<float>::infinity();
  const int in = s.in_width, u = s.out_width;
  float* h = c.arena(s.state);
  float* cell = h + u;
  float* xw = c.arena(s.scratch);
  std::memset(h, 0, sizeof(float) * 2 * u);
  const float* x = c.at(s.in);
  float* out = c.at(s.out);
  for (int t = 0; t < s.steps; ++t) {
    matvec(c, s.sparse_kernel, x + static_cast<size_t>(t) * in, in, s.kernel, 4 * u, s.bias,
           xw + static_cast<size_t>(t) * 4 * u, -inf, inf);
  }
  for (int t = 0; t < s.steps; ++t) {
    float* z = xw + static_cast<size_t>(t) * 4 * u;
    if (t > 0) matvec(c, s.sparse_recurrent, h, u, s.recurrent_kernel, 4 * u, z, z, -inf, inf);
    lstm_cell(c, s, z, cell, h, u);
    if (s.return_sequences) std::memcpy(out + static_cast<size_t>(t) * u, h, sizeof(float) * u);
  }
  if (!s.return_sequences) std::memcpy(out, h, sizeof(float) * u);
}

// GRU with reset_after = true. State: h [n]. Scratch: zx [3n], zh [3n].
void run_gru(const Ctx& c, const Step& s) noexcept {
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
void run_gru_classic(const Ctx& c, const Step& s) noexcept {
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

// Conv1D as a small GEMM: kConvBlockRows output positions at a time through the kernel set's
// gemm_chain, which reuses each weight load across the positions; row r's tap j is read in
// place at (first + r stride + j dilation) ch. A block that reaches into the padding reads the
// same way from a copy of its input span in scratch, zero rows where the padding is (one
// memcpy and memsets, not one per tap). Sets without gemm_chain (portable), and layers whose
// filters use the dot form, run one gemv per position over its taps, gathered when they are not
// contiguous. Not inlined into run(): its locals would cost every other step's dispatch registers
// (callgrind: mlp_small +16 instructions per run when it was).
[[gnu::noinline]] void run_conv1d(const Ctx& c, const Step& s) noexcept {
  const float* x = c.at(s.in);
  float* y = c.at(s.out);
  float* scratch = c.arena(s.scratch);
  const int ch = s.in_ch, taps = s.window;
  const size_t row_bytes = sizeof(float) * ch;
  const bool blocked = c.ks.gemm_chain != nullptr && !kernels::is_dot_form(s.out_width);
  const int block = blocked ? kConvBlockRows : 1;
  for (int o0 = 0; o0 < s.steps; o0 += block) {
    const int rows = std::min(block, s.steps - o0);
    const int first = o0 * s.stride - s.pad_left;
    const int last = (o0 + rows - 1) * s.stride - s.pad_left + (taps - 1) * s.dilation;  // inclusive
    const bool inside = first >= 0 && last < s.in_len;
    float* out = y + static_cast<size_t>(o0) * s.out_width;
    if (blocked) {
      const float* src = inside ? x + static_cast<size_t>(first) * ch : scratch;
      if (!inside) {  // the span [first, last]: rows before and after the input are zeros
        const int span_rows = last - first + 1;
        const int pre = std::clamp(-first, 0, span_rows);
        const int post = std::clamp(last - (s.in_len - 1), 0, span_rows - pre);
        const int mid = span_rows - pre - post;
        std::memset(scratch, 0, row_bytes * static_cast<size_t>(pre));
        if (mid > 0) {
          std::memcpy(scratch + static_cast<size_t>(pre) * ch, x + static_cast<size_t>(first + pre) * ch,
                      row_bytes * static_cast<size_t>(mid));
        }
        std::memset(scratch + static_cast<size_t>(pre + mid) * ch, 0, row_bytes * static_cast<size_t>(post));
      }
      c.ks.gemm_chain(src, rows, static_cast<size_t>(s.stride) * ch, taps, static_cast<size_t>(s.dilation) * ch, ch,
                      s.kernel, s.out_width, s.bias, out, s.out_width, s.clamp_lo, s.clamp_hi);
      continue;
    }
    const bool contiguous = inside && s.dilation == 1;
    const float* src = contiguous ? x + static_cast<size_t>(first) * ch : scratch;
    if (!contiguous) {
      for (int j = 0; j < taps; ++j) {
        const int t = first + j * s.dilation;
        float* dst = scratch + static_cast<size_t>(j) * ch;
        if (t >= 0 && t < s.in_len) {
          std::memcpy(dst, x + static_cast<size_t>(t) * ch, row_bytes);
        } else {
          std::memset(dst, 0, row_bytes);
        }
      }
    }
    c.ks.gemv(src, taps * ch, s.kernel, s.out_width, s.bias, out, s.clamp_lo, s.clamp_hi);
  }
}

// Pooling windows clipped to the input: padded positions are ignored by max and not counted by
// average, as TensorFlow's SAME pooling does.
void run_pool(const Ctx& c, const Step& s, bool is_max) noexcept {
  const float* x = c.at(s.in);
  float* y = c.at(s.out);
  const int ch = s.in_ch;
  for (int o = 0; o < s.steps; ++o) {
    const int start = o * s.stride - s.pad_left;
    const int lo = std::max(start, 0), hi = std::min(start + s.window, s.in_len);
    float* dst = y + static_cast<size_t>(o) * ch;
    const float* first = x + static_cast<size_t>(lo) * ch;
    std::memcpy(dst, first, sizeof(float) * ch);
    for (int t = lo + 1; t < hi; ++t) {
      const float* row = x + static_cast<size_t>(t) * ch;
      if (is_max) {
        for (int j = 0; j < ch; ++j) dst[j] = std::max(dst[j], row[j]);
      } else {
        for (int j = 0; j < ch; ++j) dst[j] += row[j];
      }
    }
    if (!is_max) {
      const float inv = 1.0f / static_cast<float>(hi - lo);
      for (int j = 0; j < ch; ++j) dst[j] *= inv;
    }
  }
}

void run_global_pool(const Ctx& c, const Step& s, bool is_max) noexcept {
  const float* x = c.at(s.in);
  float* y = c.at(s.out);
  const int ch = s.in_ch;
  std::memcpy(y, x, sizeof(float) * ch);
  for (int t = 1; t < s.in_len; ++t) {
    const float* row = x + static_cast<size_t>(t) * ch;
    if (is_max) {
      for (int j = 0; j < ch; ++j) y[j] = std::max(y[j], row[j]);
    } else {
      for (int j = 0; j < ch; ++j) y[j] += row[j];
    }
  }
  if (!is_max) {
    // Keras divides the sum by the step count (ops.mean), not multiplies by its reciprocal.
    const float len = static_cast<float>(s.in_len);
    for (int j = 0; j < ch; ++j) y[j] /= len;
  }
}

void run_binary(const Ctx& c, const Step& s) noexcept {
  auto fn = s.kind == StepKind::Add ? c.ks.add : s.kind == StepKind::Sub ? c.ks.sub : c.ks.mul;
  float* y = c.at(s.out);
  fn(c.at(s.in), c.at(s.rhs), y, s.out_width);
  for (const TensorRef& r : s.extra_inputs) fn(y, c.at(r), y, s.out_width);
}

// Concatenation of inputs whose shapes agree except on the axis: `rows` outer blocks, each
// input contributing concat_widths[i] floats per block.
void run_concat(const Ctx& c, const Step& s) noexcept {
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

void GraphPlan::run(const float* const* inputs, float* const* outputs) noexcept {
  const PlanLayout& L = *layout_;
  float** bufs = bufs_.data();
  for (size_t i = 0; i + 1 < bufs_.size(); ++i) bufs[i + 1] = const_cast<float*>(inputs[i]);
  const Ctx c{bufs, *L.kernels};
  for (const Step& s : L.steps) {
    switch (s.kind) {
      case StepKind::Dense: run_dense(c, s); break;
      case StepKind::Activation: c.ks.activation(s.act, c.at(s.in), c.at(s.out), s.out_width); break;
      case StepKind::Softmax:
        for (int r = 0; r < s.rows; ++r) {
          c.ks.softmax(c.at(s.in) + static_cast<size_t>(r) * s.out_width,
                       c.at(s.out) + static_cast<size_t>(r) * s.out_width, s.out_width);
        }
        break;
      case StepKind::Affine:
        for (int r = 0; r < s.rows; ++r) {
          c.ks.affine(c.at(s.in) + static_cast<size_t>(r) * s.out_width, s.scale, s.shift,
                      c.at(s.out) + static_cast<size_t>(r) * s.out_width, s.out_width);
        }
        break;
      case StepKind::LayerNorm:
        for (int r = 0; r < s.rows; ++r) {
          c.ks.layer_norm(c.at(s.in) + static_cast<size_t>(r) * s.out_width, s.scale, s.shift, s.epsilon,
                          c.at(s.out) + static_cast<size_t>(r) * s.out_width, s.out_width);
        }
        break;
      case StepKind::Lstm: run_lstm(c, s); break;
      case StepKind::LstmWindow: run_lstm_window(c, s); break;
      case StepKind::Gru: run_gru(c, s); break;
      case StepKind::GruClassic: run_gru_classic(c, s); break;
      case StepKind::Conv1D: run_conv1d(c, s); break;
      case StepKind::MaxPool: run_pool(c, s, true); break;
      case StepKind::AvgPool: run_pool(c, s, false); break;
      case StepKind::GlobalAvgPool: run_global_pool(c, s, false); break;
      case StepKind::GlobalMaxPool: run_global_pool(c, s, true); break;
      case StepKind::Add:
      case StepKind::Sub:
      case StepKind::Mul: run_binary(c, s); break;
      case StepKind::Concat: run_concat(c, s); break;
    }
  }
  for (size_t i = 0; i < L.outputs.size(); ++i) {
    std::memcpy(outputs[i], c.at(L.outputs[i]),
                sizeof(float) * static_cast<size_t>(shape_size(L.output_shapes[i])));
  }
}

void GraphPlan::reset_state() noexcept {
  for (const auto& [off, len] : layout_->state_ranges) std::memset(arena_.data() + off, 0, sizeof(float) * len);
}

}  // namespace tickinfer::engine
