// The graph form's recurrent steps, each run as one thread block that walks the time steps with
// a barrier between a step's matrix products and its cell update (engine/steps/lstm_steps.cpp
// and gru_steps.cpp define them; gate order i, f, c, o for the LSTM and z, r, h for the GRU).
// n is the unit count (out_width), in the input features (in_width).
#pragma once

#include "cuda/device_step_common.cuh"

namespace tickinfer::cuda::steps {

// c = f c + i g (clipped to +-cell_clip when the layer has one), h = o act(c), from the gate
// pre-activations z ([4n]) of unit j.
TI_HD inline void lstm_cell(const DeviceStep& s, const float* z, int n, int j, float* c, float* h) {
  const float i = activate(s.rec, z[j]);
  const float f = activate(s.rec, z[n + j]);
  const float g = activate(s.act, z[2 * n + j]);
  const float o = activate(s.rec, z[3 * n + j]);
  float cn = f * c[j] + i * g;
  if (s.cell_clip > 0.0f) cn = fminf(fmaxf(cn, -s.cell_clip), s.cell_clip);
  c[j] = cn;
  h[j] = o * activate(s.act, cn);
}

// Stream mode: state [x | h | c] (the input copied beside h so one product over the stacked
// [W; U] does both), kept between runs; scratch z [4n].
template <bool M, class X>
TI_HD void lstm(const X& x, const DeviceStep& s, float* A, const float* W) {
  const int in = s.in_width, n = s.out_width;
  float* xh = A + s.state;
  float* h = xh + in;
  float* c = h + n;
  float* z = A + s.scratch;
  const TensorIn<M> input = in_of<M>(A, s);
  const TensorOut<M> out = out_of<M>(A, s);
  for (int t = 0; t < s.steps; ++t) {
    x.items(in, [&](int64_t k) { xh[k] = input[int64_t(t) * in + k]; });
    x.sync();
    x.items(4 * n, [&](int64_t j) { z[j] = dot_column(xh, in + n, matrix(W, s.kernel, s), 4 * n, int(j), weight_or_zero(W, s.bias, int(j))); });
    x.sync();
    x.items(n, [&](int64_t j) {
      lstm_cell(s, z, n, int(j), c, h);
      if (s.return_sequences) out.set(int64_t(t) * n + j, h[j]);
      else if (t == s.steps - 1) out.set(j, h[j]);
    });
    x.sync();
  }
}

// Window mode: state h, c from zeros (or from the extra inputs h0, c0); scratch: every step's
// x W + b ([T][4n]) computed first, or (projected: `in` already holds them) one step's gates.
// return_state: the final c follows the output's h rows.
template <bool M, class X>
TI_HD void lstm_window(const X& x, const DeviceStep& s, float* A, const float* W) {
  const int in = s.in_width, n = s.out_width, T = s.steps;
  float* h = A + s.state;
  float* c = h + n;
  float* xw = A + s.scratch;
  const TensorIn<M> input = in_of<M>(A, s);
  const TensorOut<M> out = out_of<M>(A, s);
  x.items(2 * n, [&](int64_t j) {
    if (!s.initial_state) h[j] = 0.0f;  // h and c are adjacent: 2n zeros
    else if (j < n) h[j] = extra_of<M>(A, s, 0)[j];
    else c[j - n] = extra_of<M>(A, s, 1)[j - n];
  });
  if (!s.projected) {
    x.items(int64_t(T) * 4 * n, [&](int64_t i) {
      const int64_t t = i / (4 * n);
      const int j = int(i % (4 * n));
      xw[i] = dot_column(input + t * in, in, matrix(W, s.kernel, s), 4 * n, j, weight_or_zero(W, s.bias, j));
    });
  }
  x.sync();
  const int first_hu = s.initial_state ? 0 : 1;  // from zeros, step 0 has no h U
  const int64_t h_rows = s.return_sequences ? T : 1;
  for (int t = 0; t < T; ++t) {
    float* z = s.projected ? xw : xw + int64_t(t) * 4 * n;
    x.items(4 * n, [&](int64_t j) {
      const float init = s.projected ? input[int64_t(t) * 4 * n + j] : z[j];
      z[j] = t >= first_hu ? dot_column(h, n, matrix(W, s.recurrent, s), 4 * n, int(j), init) : init;
    });
    x.sync();
    x.items(n, [&](int64_t j) {
      lstm_cell(s, z, n, int(j), c, h);
      if (s.return_sequences) out.set(int64_t(t) * n + j, h[j]);
      if (t == T - 1) {
        if (!s.return_sequences) out.set(j, h[j]);
        if (s.return_state) out.set(h_rows * n + j, c[j]);
      }
    });
    x.sync();
  }
}

// reset_after = true: zx = x W + b (read from `in` when projected), zh = h U + b_rec,
// z = rec(zx + zh), r likewise, hh = act(zx_h + r zh_h), h = z h + (1 - z) hh. State h [n];
// scratch zx [3n], zh [3n].
template <bool M, class X>
TI_HD void gru(const X& x, const DeviceStep& s, float* A, const float* W) {
  const int in = s.in_width, n = s.out_width;
  float* h = A + s.state;
  float* zx = A + s.scratch;
  float* zh = zx + 3 * n;
  const TensorIn<M> input = in_of<M>(A, s);
  const TensorOut<M> out = out_of<M>(A, s);
  if (s.zero_state) {
    x.items(n, [&](int64_t j) { h[j] = 0.0f; });
    x.sync();
  }
  for (int t = 0; t < s.steps; ++t) {
    x.items(6 * n, [&](int64_t i) {
      if (i < 3 * n) {
        zx[i] = s.projected ? input[int64_t(t) * 3 * n + i]
                            : dot_column(input + int64_t(t) * in, in, matrix(W, s.kernel, s), 3 * n, int(i),
                                         weight_or_zero(W, s.bias, int(i)));
      } else {
        const int j = int(i - 3 * n);
        zh[j] = dot_column(h, n, matrix(W, s.recurrent, s), 3 * n, j, weight_or_zero(W, s.recurrent_bias, j));
      }
    });
    x.sync();
    x.items(n, [&](int64_t j) {
      const float z = activate(s.rec, zx[j] + zh[j]);
      const float r = activate(s.rec, zx[n + j] + zh[n + j]);
      const float hh = activate(s.act, zx[2 * n + j] + r * zh[2 * n + j]);
      h[j] = z * h[j] + (1.0f - z) * hh;
      if (s.return_sequences) out.set(int64_t(t) * n + j, h[j]);
      else if (t == s.steps - 1) out.set(j, h[j]);
    });
    x.sync();
  }
}

// reset_after = false: the reset gate scales h before the candidate's product (x W + b read from
// `in` when projected). recurrent: U's
// z|r columns (n x 2n); recurrent_h: U's h columns (n x n). State h [n]; scratch zx [3n], rh [n].
template <bool M, class X>
TI_HD void gru_classic(const X& x, const DeviceStep& s, float* A, const float* W) {
  const int in = s.in_width, n = s.out_width;
  float* h = A + s.state;
  float* zx = A + s.scratch;
  float* rh = zx + 3 * n;
  const TensorIn<M> input = in_of<M>(A, s);
  const TensorOut<M> out = out_of<M>(A, s);
  if (s.zero_state) {
    x.items(n, [&](int64_t j) { h[j] = 0.0f; });
    x.sync();
  }
  for (int t = 0; t < s.steps; ++t) {
    x.items(3 * n, [&](int64_t i) {
      const int j = int(i);
      float v = s.projected ? input[int64_t(t) * 3 * n + j]
                            : dot_column(input + int64_t(t) * in, in, matrix(W, s.kernel, s), 3 * n, j, weight_or_zero(W, s.bias, j));
      if (j < 2 * n) v = activate(s.rec, dot_column(h, n, matrix(W, s.recurrent, s), 2 * n, j, v));
      zx[j] = v;
    });
    x.sync();
    x.items(n, [&](int64_t j) { rh[j] = zx[n + j] * h[j]; });
    x.sync();
    x.items(n, [&](int64_t j) {
      const float hh = activate(s.act, dot_column(rh, n, matrix(W, s.recurrent_h, s), n, int(j), zx[2 * n + j]));
      h[j] = zx[j] * h[j] + (1.0f - zx[j]) * hh;
      if (s.return_sequences) out.set(int64_t(t) * n + j, h[j]);
      else if (t == s.steps - 1) out.set(j, h[j]);
    });
    x.sync();
  }
}

}  // namespace tickinfer::cuda::steps
