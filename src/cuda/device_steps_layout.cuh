// The graph form's layout steps: Concat, Pad, Transpose, Slice and ReverseRows
// (engine/steps/merge_steps.cpp and layout_steps.cpp define them). Item: one output float, found
// from its own index, so no item depends on another.
#pragma once

#include "cuda/device_step_common.cuh"

namespace tickinfer::cuda::steps {

// `rows` outer blocks; in each, input e's chunk of concat_widths[e] floats, input after input.
template <bool M, class X>
TI_HD void concat(const X& x, const DeviceStep& s, float* A, const float*) {
  int total = 0;
  for (int e = 0; e < s.n_extra; ++e) total += s.concat_widths[e];
  const TensorOut<M> out = out_of<M>(A, s);
  x.items(int64_t(s.rows) * total, [&](int64_t i) {
    const int64_t r = i / total;
    int col = int(i % total), e = 0;
    while (col >= s.concat_widths[e]) col -= s.concat_widths[e++];
    out.set(i, extra_of<M>(A, s, e)[r * s.concat_widths[e] + col]);
  });
}

// Zeros around the input: axis a of the output is pads[2a] + in_shape[a] + pads[2a + 1] long.
template <bool M, class X>
TI_HD void pad(const X& x, const DeviceStep& s, float* A, const float*) {
  const TensorIn<M> in = in_of<M>(A, s);
  const TensorOut<M> out = out_of<M>(A, s);
  x.items(s.out_width, [&](int64_t i) {
    int64_t rest = i, at = 0, in_stride = 1;
    bool inside = true;
    for (int a = s.rank - 1; a >= 0; --a) {
      const int64_t dim = s.pads[2 * a] + s.in_shape[a] + s.pads[2 * a + 1];
      const int64_t k = rest % dim - s.pads[2 * a];
      rest /= dim;
      if (k < 0 || k >= s.in_shape[a]) inside = false;
      at += k * in_stride;
      in_stride *= s.in_shape[a];
    }
    out.set(i, inside ? in[at] : 0.0f);
  });
}

// Output axis a is input axis permutation[a].
template <bool M, class X>
TI_HD void transpose(const X& x, const DeviceStep& s, float* A, const float*) {
  int64_t in_strides[kDevMaxRank];
  int64_t total = 1;
  for (int a = s.rank - 1; a >= 0; --a) {
    in_strides[a] = total;
    total *= s.in_shape[a];
  }
  const TensorIn<M> in = in_of<M>(A, s);
  const TensorOut<M> out = out_of<M>(A, s);
  x.items(total, [&](int64_t i) {
    int64_t rest = i, at = 0;
    for (int a = s.rank - 1; a >= 0; --a) {
      const int from = s.permutation[a];
      const int64_t dim = s.in_shape[from];
      at += (rest % dim) * in_strides[from];
      rest /= dim;
    }
    out.set(i, in[at]);
  });
}

template <bool M, class X>
TI_HD void slice(const X& x, const DeviceStep& s, float* A, const float*) {
  const TensorIn<M> in = in_of<M>(A, s) + s.slice_offset;
  const TensorOut<M> out = out_of<M>(A, s);
  x.items(s.out_width, [&](int64_t i) { out.set(i, in[i]); });
}

// Row r of the output is row rows - 1 - r of the input (in_width floats a row).
template <bool M, class X>
TI_HD void reverse_rows(const X& x, const DeviceStep& s, float* A, const float*) {
  const TensorIn<M> in = in_of<M>(A, s);
  const TensorOut<M> out = out_of<M>(A, s);
  const int64_t width = s.in_width;
  x.items(s.out_width, [&](int64_t i) {
    const int64_t r = i / width;
    out.set(i, in[(s.rows - 1 - r) * width + i % width]);
  });
}

}  // namespace tickinfer::cuda::steps
