// The graph form's products: Dense, Conv1D, Conv2D, DepthwiseConv2D and MatMul, one output
// element per item (the CPU steps in engine/steps/ define each; the layouts are the lowering's:
// kernels row-major K x N, convolution patches in Keras's [tap][channel] order).
#pragma once

#include "cuda/device_step_common.cuh"

namespace tickinfer::cuda::steps {

// rows x (x . kernel + bias), clamped, then the epilogue activation (as in every product below).
// Item: (row, column).
template <bool M, class X>
TI_HD void dense(const X& x, const DeviceStep& s, float* A, const float* W) {
  const int K = s.in_width, N = s.out_width;
  const TensorIn<M> in = in_of<M>(A, s);
  const TensorOut<M> out = out_of<M>(A, s);
  x.items(int64_t(s.rows) * N, [&](int64_t i) {
    const int64_t r = i / N;
    const int n = int(i % N);
    const float acc = dot_column(in + r * K, K, matrix(W, s.kernel, s), N, n, weight_or_zero(W, s.bias, n));
    out.set(i, activate(s.epilogue, clamp(acc, s.clamp_lo, s.clamp_hi)));
  });
}

// Channels last, zero padding before (pad_left) and after. Item: (output position, filter).
template <bool M, class X>
TI_HD void conv1d(const X& x, const DeviceStep& s, float* A, const float* W) {
  const int F = s.out_width, C = s.in_ch;
  const TensorIn<M> in = in_of<M>(A, s);
  const MatrixView w = matrix(W, s.kernel, s);
  const TensorOut<M> out = out_of<M>(A, s);
  x.items(int64_t(s.steps) * F, [&](int64_t i) {
    const int o = int(i / F), f = int(i % F);
    float acc = weight_or_zero(W, s.bias, f);
    for (int j = 0; j < s.window; ++j) {
      const int t = o * s.stride - s.pad_left + j * s.dilation;
      if (t < 0 || t >= s.in_len) continue;
      const TensorIn<M> row = in + int64_t(t) * C;
      const int64_t wj = int64_t(j) * C * F + f;
      for (int c = 0; c < C; ++c) acc = fmaf(row[c], w[wj + int64_t(c) * F], acc);
    }
    out.set(i, activate(s.epilogue, clamp(acc, s.clamp_lo, s.clamp_hi)));
  });
}

// [H, W, C] in, [steps, out_w, F] out; the height axis in the 1-D fields, the width in *_w.
// Item: (output row, output column, filter).
template <bool M, class X>
TI_HD void conv2d(const X& x, const DeviceStep& s, float* A, const float* W) {
  const int F = s.out_width, C = s.in_ch, kw = s.window_w;
  const TensorIn<M> in = in_of<M>(A, s);
  const MatrixView w = matrix(W, s.kernel, s);
  const TensorOut<M> out = out_of<M>(A, s);
  x.items(int64_t(s.steps) * s.out_w * F, [&](int64_t i) {
    const int f = int(i % F);
    const int64_t pixel = i / F;
    const int oh = int(pixel / s.out_w), ow = int(pixel % s.out_w);
    float acc = weight_or_zero(W, s.bias, f);
    for (int a = 0; a < s.window; ++a) {
      const int h = oh * s.stride - s.pad_left + a * s.dilation;
      if (h < 0 || h >= s.in_len) continue;
      for (int b = 0; b < kw; ++b) {
        const int col = ow * s.stride_w - s.pad_w + b * s.dilation_w;
        if (col < 0 || col >= s.in_w) continue;
        const TensorIn<M> px = in + (int64_t(h) * s.in_w + col) * C;
        const int64_t wt = int64_t(a * kw + b) * C * F + f;
        for (int c = 0; c < C; ++c) acc = fmaf(px[c], w[wt + int64_t(c) * F], acc);
      }
    }
    out.set(i, activate(s.epilogue, clamp(acc, s.clamp_lo, s.clamp_hi)));
  });
}

// Output channel k = c * m + j reads input channel c through taps (kh * kw) x (C * m).
// Item: (output pixel, output channel).
template <bool M, class X>
TI_HD void depthwise_conv2d(const X& x, const DeviceStep& s, float* A, const float* W) {
  const int C = s.in_ch, cm = s.out_width, m = cm / C;
  const TensorIn<M> in = in_of<M>(A, s);
  const MatrixView taps = matrix(W, s.depthwise, s);
  const TensorOut<M> out = out_of<M>(A, s);
  x.items(int64_t(s.steps) * s.out_w * cm, [&](int64_t i) {
    const int k = int(i % cm);
    const int64_t pixel = i / cm;
    const int oy = int(pixel / s.out_w), ox = int(pixel % s.out_w);
    const int c = k / m;
    float acc = weight_or_zero(W, s.bias, k);
    for (int dh = 0; dh < s.window; ++dh) {
      const int iy = oy * s.stride + dh * s.dilation - s.pad_left;
      if (iy < 0 || iy >= s.in_len) continue;
      for (int dw = 0; dw < s.window_w; ++dw) {
        const int ix = ox * s.stride_w + dw * s.dilation_w - s.pad_w;
        if (ix < 0 || ix >= s.in_w) continue;
        acc = fmaf(in[(int64_t(iy) * s.in_w + ix) * C + c], taps[int64_t(dh * s.window_w + dw) * cm + k], acc);
      }
    }
    out.set(i, activate(s.epilogue, clamp(acc, s.clamp_lo, s.clamp_hi)));
  });
}

// steps x ([rows, in_width] . [in_width, out_width]), both operands computed tensors.
// Item: (batch, row, column).
template <bool M, class X>
TI_HD void matmul(const X& x, const DeviceStep& s, float* A, const float*) {
  const int64_t Mr = s.rows, K = s.in_width, N = s.out_width;
  const TensorIn<M> a = in_of<M>(A, s);
  const TensorIn<M> b = rhs_of<M>(A, s);
  const TensorOut<M> y = out_of<M>(A, s);
  x.items(int64_t(s.steps) * Mr * N, [&](int64_t i) {
    const int64_t batch = i / (Mr * N), m = (i / N) % Mr, j = i % N;
    const TensorIn<M> ar = a + (batch * Mr * K + m * K);
    const TensorIn<M> bc = b + (batch * K * N + j);
    float acc = 0.0f;
    for (int64_t k = 0; k < K; ++k) acc = fmaf(ar[k], bc[k * N], acc);
    y.set(i, acc);
  });
}

}  // namespace tickinfer::cuda::steps
