// The graph form's elementwise, row-wise, pooling and merge steps (engine/steps/rowwise_steps.cpp,
// pool_steps.cpp, pool2d_steps.cpp and merge_steps.cpp define them). A row-wise step's item is a
// whole row (its reductions run in the CPU kernels' order); the others one output element.
#pragma once

#include "cuda/device_step_common.cuh"

namespace tickinfer::cuda::steps {

template <bool M, class X>
TI_HD void activation(const X& x, const DeviceStep& s, float* A, const float*) {
  const TensorIn<M> in = in_of<M>(A, s);
  const TensorOut<M> out = out_of<M>(A, s);
  x.items(s.out_width, [&](int64_t i) { out.set(i, activate(s.act, in[i])); });
}

// exp(x - max) / sum, per row. The exponentials are computed twice (for the sum, then for the
// quotients) rather than kept in the output: a 16-bit output would round them before the division.
template <bool M, class X>
TI_HD void softmax(const X& x, const DeviceStep& s, float* A, const float*) {
  const int n = s.out_width;
  x.items(s.rows, [&](int64_t r) {
    const TensorIn<M> in = in_of<M>(A, s) + r * n;
    const TensorOut<M> out = out_of<M>(A, s) + r * n;
    float mx = in[0];
    for (int i = 1; i < n; ++i) mx = in[i] > mx ? in[i] : mx;
    float sum = 0.0f;
    for (int i = 0; i < n; ++i) sum += expf(in[i] - mx);
    for (int i = 0; i < n; ++i) out.set(i, expf(in[i] - mx) / sum);
  });
}

template <bool M, class X>
TI_HD void affine(const X& x, const DeviceStep& s, float* A, const float* W) {
  const int n = s.out_width;
  const TensorIn<M> in = in_of<M>(A, s);
  const TensorOut<M> out = out_of<M>(A, s);
  x.items(int64_t(s.rows) * n, [&](int64_t i) {
    const int c = int(i % n);
    out.set(i, fmaf(in[i], W[s.scale + c], W[s.shift + c]));
  });
}

// Two-pass (population) variance, then (x - mean) / sqrt(var + eps) * gamma + beta, per row.
template <bool M, class X>
TI_HD void layer_norm(const X& x, const DeviceStep& s, float* A, const float* W) {
  const int n = s.out_width;
  x.items(s.rows, [&](int64_t r) {
    const TensorIn<M> in = in_of<M>(A, s) + r * n;
    const TensorOut<M> out = out_of<M>(A, s) + r * n;
    float sum = 0.0f;
    for (int i = 0; i < n; ++i) sum += in[i];
    const float mean = sum / float(n);
    float sq = 0.0f;
    for (int i = 0; i < n; ++i) sq += (in[i] - mean) * (in[i] - mean);
    const float inv_std = 1.0f / sqrtf(sq / float(n) + s.epsilon);
    for (int i = 0; i < n; ++i) out.set(i, (in[i] - mean) * inv_std * W[s.scale + i] + W[s.shift + i]);
  });
}

// Pooling along time ([in_len, ch] -> [steps, ch]), the window clipped to the input; the average
// over the rows it covers. Item: (output position, channel).
template <bool M, class X>
TI_HD void pool1d(const X& x, const DeviceStep& s, float* A, bool is_max) {
  const int ch = s.in_ch;
  const TensorIn<M> in = in_of<M>(A, s);
  const TensorOut<M> out = out_of<M>(A, s);
  x.items(int64_t(s.steps) * ch, [&](int64_t i) {
    const int o = int(i / ch), j = int(i % ch);
    const int start = o * s.stride - s.pad_left;
    const int lo = start > 0 ? start : 0, hi = start + s.window < s.in_len ? start + s.window : s.in_len;
    float v = in[int64_t(lo) * ch + j];
    for (int t = lo + 1; t < hi; ++t) {
      const float e = in[int64_t(t) * ch + j];
      v = is_max ? fmaxf(v, e) : v + e;
    }
    out.set(i, is_max ? v : v * (1.0f / float(hi - lo)));
  });
}

// Over the whole time axis. Item: channel.
template <bool M, class X>
TI_HD void global_pool(const X& x, const DeviceStep& s, float* A, bool is_max) {
  const int ch = s.in_ch;
  const TensorIn<M> in = in_of<M>(A, s);
  const TensorOut<M> out = out_of<M>(A, s);
  x.items(ch, [&](int64_t j) {
    float v = in[j];
    for (int t = 1; t < s.in_len; ++t) {
      const float e = in[int64_t(t) * ch + j];
      v = is_max ? fmaxf(v, e) : v + e;
    }
    out.set(j, is_max ? v : v / float(s.in_len));
  });
}

// [H, W, C] -> [steps, out_w, C]. Item: (output pixel, channel).
template <bool M, class X>
TI_HD void pool2d(const X& x, const DeviceStep& s, float* A, bool is_max) {
  const int C = s.in_ch;
  const TensorIn<M> in = in_of<M>(A, s);
  const TensorOut<M> out = out_of<M>(A, s);
  x.items(int64_t(s.steps) * s.out_w * C, [&](int64_t i) {
    const int c = int(i % C);
    const int64_t pixel = i / C;
    const int oh = int(pixel / s.out_w), ow = int(pixel % s.out_w);
    const int top = oh * s.stride - s.pad_left, left = ow * s.stride_w - s.pad_w;
    const int h_lo = top > 0 ? top : 0, h_hi = top + s.window < s.in_len ? top + s.window : s.in_len;
    const int w_lo = left > 0 ? left : 0, w_hi = left + s.window_w < s.in_w ? left + s.window_w : s.in_w;
    float v = in[(int64_t(h_lo) * s.in_w + w_lo) * C + c];
    for (int h = h_lo; h < h_hi; ++h) {
      for (int w = (h == h_lo ? w_lo + 1 : w_lo); w < w_hi; ++w) {
        const float e = in[(int64_t(h) * s.in_w + w) * C + c];
        v = is_max ? fmaxf(v, e) : v + e;
      }
    }
    out.set(i, is_max ? v : v / float((h_hi - h_lo) * (w_hi - w_lo)));
  });
}

// Add / Sub / Mul of two or more operands of out_width floats, left to right.
template <bool M, class X>
TI_HD void binary(const X& x, const DeviceStep& s, float* A, const float*) {
  const TensorIn<M> a = in_of<M>(A, s);
  const TensorIn<M> b = rhs_of<M>(A, s);
  const TensorOut<M> out = out_of<M>(A, s);
  const DevKind kind = s.kind;
  x.items(s.out_width, [&](int64_t i) {
    auto op = [kind](float l, float r) { return kind == DevKind::Add ? l + r : kind == DevKind::Sub ? l - r : l * r; };
    float v = op(a[i], b[i]);
    for (int e = 0; e < s.n_extra; ++e) v = op(v, extra_of<M>(A, s, e)[i]);
    out.set(i, v);
  });
}

}  // namespace tickinfer::cuda::steps
