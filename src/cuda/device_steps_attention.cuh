// The graph form's attention (engine/steps/attention_step.cpp defines it): per head,
// softmax(q k^T / sqrt(key_dim)) v over the keys a query may see (causal: j <= i; span: |i - j|
// < span). Window mode: one item per (head, query), two passes over its keys (the largest score,
// then the exponentials, their sum and the weighted sum of the value rows), nothing stored but
// the output row. Stream mode (one query per run, a key/value ring of the last `span` runs in
// the state) runs as one block.
#pragma once

#include "cuda/device_step_common.cuh"

namespace tickinfer::cuda::steps {

// q, k: float pointers or TensorIn views.
template <class Q, class K>
TI_HD inline float attention_score(const DeviceStep& s, const Q& q, const K& k, float scale) {
  float acc = 0.0f;
  for (int d = 0; d < s.key_dim; ++d) acc = fmaf(q[d], k[d], acc);
  return acc * scale;
}

template <bool M, class X>
TI_HD void attention_window(const X& x, const DeviceStep& s, float* A, const float*) {
  const int T = s.steps, hv = s.heads * s.value_dim;
  const float scale = 1.0f / sqrtf(float(s.key_dim));
  x.items(int64_t(s.heads) * T, [&](int64_t item) {
    const int h = int(item / T), i = int(item % T);
    int first = s.span > 0 ? i - s.span + 1 : 0;
    int end = s.causal ? i + 1 : (s.span > 0 ? i + s.span : s.keys);
    first = first < 0 ? 0 : first;
    end = end > s.keys ? s.keys : end;
    const TensorIn<M> q = in_of<M>(A, s) + (s.q.col + int64_t(i) * s.q.ld + h * s.key_dim);
    const TensorIn<M> keys = rhs_of<M>(A, s) + (s.k.col + h * s.key_dim);
    const TensorIn<M> values = extra_of<M>(A, s, 0) + (s.v.col + h * s.value_dim);
    float* out = A + s.out + int64_t(i) * hv + h * s.value_dim;  // always fp32: it accumulates here
    for (int d = 0; d < s.value_dim; ++d) out[d] = 0.0f;
    if (first >= end) return;  // sees no key
    float m = -INFINITY;
    for (int j = first; j < end; ++j) m = fmaxf(m, attention_score(s, q, keys + int64_t(j) * s.k.ld, scale));
    float sum = 0.0f;
    for (int j = first; j < end; ++j) {
      const float p = expf(attention_score(s, q, keys + int64_t(j) * s.k.ld, scale) - m);
      sum += p;
      const TensorIn<M> vj = values + int64_t(j) * s.v.ld;
      for (int d = 0; d < s.value_dim; ++d) out[d] = fmaf(p, vj[d], out[d]);
    }
    const float inv = 1.0f / sum;
    for (int d = 0; d < s.value_dim; ++d) out[d] *= inv;
  });
}

// State: keys [span][heads * key_dim], values [span][heads * value_dim], then the next slot and
// the count filled (as floats). The run's key and value rows go into the slot, then each head
// attends over the filled rows; the slot and count advance last.
template <bool M, class X>
TI_HD void attention_stream(const X& x, const DeviceStep& s, float* A, const float*) {
  const int hk = s.heads * s.key_dim, hv = s.heads * s.value_dim;
  float* keys = A + s.state;
  float* values = keys + int64_t(s.span) * hk;
  float* slot = values + int64_t(s.span) * hv;
  float* filled = slot + 1;
  const int at = int(*slot);
  const int n = int(*filled) + 1 < s.span ? int(*filled) + 1 : s.span;
  x.items(hk + hv, [&](int64_t i) {
    if (i < hk) keys[int64_t(at) * hk + i] = rhs_of<M>(A, s)[s.k.col + i];
    else values[int64_t(at) * hv + (i - hk)] = extra_of<M>(A, s, 0)[s.v.col + (i - hk)];
  });
  x.sync();
  const float scale = 1.0f / sqrtf(float(s.key_dim));
  x.items(s.heads, [&](int64_t h) {
    const TensorIn<M> q = in_of<M>(A, s) + (s.q.col + h * s.key_dim);
    float* out = A + s.out + h * s.value_dim;  // always fp32: it accumulates here
    for (int d = 0; d < s.value_dim; ++d) out[d] = 0.0f;
    float m = -INFINITY;
    for (int j = 0; j < n; ++j) m = fmaxf(m, attention_score(s, q, keys + int64_t(j) * hk + h * s.key_dim, scale));
    float sum = 0.0f;
    for (int j = 0; j < n; ++j) {
      const float p = expf(attention_score(s, q, keys + int64_t(j) * hk + h * s.key_dim, scale) - m);
      sum += p;
      const float* vj = values + int64_t(j) * hv + h * s.value_dim;
      for (int d = 0; d < s.value_dim; ++d) out[d] = fmaf(p, vj[d], out[d]);
    }
    const float inv = 1.0f / sum;
    for (int d = 0; d < s.value_dim; ++d) out[d] *= inv;
  });
  x.sync();
  x.items(1, [&](int64_t) {
    *slot = float((at + 1) % s.span);
    *filled = float(n);
  });
  x.sync();
}

}  // namespace tickinfer::cuda::steps
