// The integer program's step bodies (cuda/integer_program.hpp), one item per output element,
// written against the executor contract of device_step_common.cuh (x.items(n, f): f(i) for every
// i, in any order, in parallel). Each body is its op's reference loop in tflite/ops/ for one
// output: the same operands, the same int32 sums (exact, so in any order), the same
// requantization (integer_math.hpp). The GPU kernels (integer_graph.cu) and the host executor
// (integer_program_host.cpp) both run these.
#pragma once

#include "cuda/integer_math.hpp"
#include "cuda/integer_program.hpp"

namespace tickinfer::cuda::intsteps {

template <class T>
TI_HD inline const T* param(const uint8_t* P, int64_t at) {
  return reinterpret_cast<const T*>(P + at);
}

// Requantizes channel c's accumulator as the step says.
TI_HD inline int8_t requantize(const IntegerStep& s, const uint8_t* P, int32_t acc, int64_t c) {
  const int64_t k = s.per_channel ? c : 0;
  if (s.requant == kRequantScaled) return intmath::requant_scaled(acc, param<double>(P, s.scale)[k], s.out_zp, s.lo, s.hi);
  const int32_t v = intmath::multiply(acc, param<int32_t>(P, s.multiplier)[k], param<int32_t>(P, s.shift)[k],
                                      s.requant == kRequantSingle);
  return intmath::clamp_s8(v + s.out_zp, s.lo, s.hi);
}

// Each output element copies an arena byte (or is the fill); with tables, through its input's.
template <class X>
TI_HD void gather(const X& x, const IntegerStep& s, int8_t* A, const uint8_t* P) {
  const int32_t* source = param<int32_t>(P, s.source);
  int8_t* y = A + s.out;
  x.items(s.count, [&](int64_t i) {
    if (source[i] < 0) {
      y[i] = int8_t(s.fill);
    } else if (s.table < 0) {
      y[i] = A[source[i]];
    } else {
      y[i] = param<int8_t>(P, s.table)[param<int32_t>(P, s.index_a)[i] * 256 + uint8_t(A[source[i]])];
    }
  });
}

template <class X>
TI_HD void table(const X& x, const IntegerStep& s, int8_t* A, const uint8_t* P) {
  const int8_t* t = param<int8_t>(P, s.table);
  const int8_t* in = A + s.in;
  int8_t* y = A + s.out;
  x.items(s.count, [&](int64_t i) { y[i] = t[uint8_t(in[i])]; });
}

template <class X>
TI_HD void binary(const X& x, const IntegerStep& s, int8_t* A, const uint8_t* P) {
  const int8_t *a = A + s.in, *b = A + s.in2;
  int8_t* y = A + s.out;
  x.items(s.count, [&](int64_t i) {
    const int32_t va = a[s.index_a < 0 ? i : param<int32_t>(P, s.index_a)[i]];
    const int32_t vb = b[s.index_b < 0 ? i : param<int32_t>(P, s.index_b)[i]];
    int32_t raw;
    if (s.raw == kRawMul) {
      raw = (va + s.off_a) * (vb + s.off_b);
    } else {
      const int32_t sa = param<int32_t>(P, s.table_a)[va + 128], sb = param<int32_t>(P, s.table_b)[vb + 128];
      const int32_t d = sa - sb;
      raw = s.raw == kRawAdd ? sa + sb : (s.raw == kRawSub ? d : d * d);
    }
    y[i] = requantize(s, P, raw, 0);
  });
}

// sum_d w[d] * x[d] in int32. On the device four products per instruction (dp4a) where both
// rows are 4-byte aligned; integer sums are exact, so any grouping gives the same int32.
TI_HD inline int32_t dot_s8(const int8_t* w, const int8_t* x, int n) {
  int32_t acc = 0;
  int d = 0;
#if defined(__CUDA_ARCH__)
  if (((reinterpret_cast<uintptr_t>(w) | reinterpret_cast<uintptr_t>(x)) & 3) == 0) {
    const int* w4 = reinterpret_cast<const int*>(w);
    const int* x4 = reinterpret_cast<const int*>(x);
    for (; d + 4 <= n; d += 4) acc = __dp4a(w4[d / 4], x4[d / 4], acc);
  }
#endif
  for (; d < n; ++d) acc += int32_t(w[d]) * int32_t(x[d]);
  return acc;
}

// The reference's sum_d w[d] * (x[d] + in_offset) as dot(w, x) + in_offset * sum_d w[d] (the
// row's sum, from the parameters): equal in int32, and the dot runs on dp4a.
template <class X>
TI_HD void fully_connected(const X& x, const IntegerStep& s, int8_t* A, const uint8_t* P) {
  const int8_t* in = A + s.in;
  const int8_t* w = param<int8_t>(P, s.weights);
  const int32_t* row_sum = param<int32_t>(P, s.row_sums);
  int8_t* y = A + s.out;
  x.items(s.count, [&](int64_t i) {
    const int64_t b = i / s.units, o = i % s.units;
    int32_t acc = intmath::wrapping_add(dot_s8(w + o * s.depth, in + b * s.depth, s.depth),
                                        int32_t(uint32_t(s.in_offset) * uint32_t(row_sum[o])));
    if (s.bias >= 0) acc = intmath::wrapping_add(acc, param<int32_t>(P, s.bias)[o]);
    y[i] = requantize(s, P, acc, o);
  });
}

// Output element i of an NHWC window step as (batch, row, column, channel).
struct Pixel {
  int64_t b;
  int oy, ox, c;
};
TI_HD inline Pixel pixel_of(const IntegerStep& s, int64_t i) {
  Pixel p;
  p.c = int(i % s.out_c);
  i /= s.out_c;
  p.ox = int(i % s.out_w);
  i /= s.out_w;
  p.oy = int(i % s.out_h);
  p.b = i / s.out_h;
  return p;
}

// Calls f(ky, kx, input pixel offset) for every tap of the window inside the input (ky outer).
template <class F>
TI_HD inline void for_each_tap(const IntegerStep& s, const Pixel& p, F&& f) {
  const int y0 = p.oy * s.stride_h - s.pad_h, x0 = p.ox * s.stride_w - s.pad_w;
  for (int ky = 0; ky < s.filter_h; ++ky) {
    const int iy = y0 + ky * s.dil_h;
    if (iy < 0 || iy >= s.in_h) continue;
    for (int kx = 0; kx < s.filter_w; ++kx) {
      const int ix = x0 + kx * s.dil_w;
      if (ix < 0 || ix >= s.in_w) continue;
      f(ky, kx, ((p.b * s.in_h + iy) * s.in_w + ix) * s.in_c);
    }
  }
}

// A convolution's output element (pixel, channel): the int32 sum of tap(p, ky, kx, at) over the
// window's taps inside the input (at: the input pixel's offset), plus the bias, requantized with
// the channel's multiplier.
template <class X, class Tap>
TI_HD void convolution(const X& x, const IntegerStep& s, int8_t* A, const uint8_t* P, Tap&& tap) {
  int8_t* y = A + s.out;
  x.items(s.count, [&](int64_t i) {
    const Pixel p = pixel_of(s, i);
    int32_t acc = 0;
    for_each_tap(s, p, [&](int ky, int kx, int64_t at) { acc = intmath::wrapping_add(acc, tap(p, ky, kx, at)); });
    if (s.bias >= 0) acc = intmath::wrapping_add(acc, param<int32_t>(P, s.bias)[p.c]);
    y[i] = requantize(s, P, acc, p.c);
  });
}

// One filter row per tap, as fully_connected: dot(w, x) + in_offset * the row's sum.
template <class X>
TI_HD void conv2d(const X& x, const IntegerStep& s, int8_t* A, const uint8_t* P) {
  const int8_t* in = A + s.in;
  const int8_t* w = param<int8_t>(P, s.weights);
  const int32_t* row_sum = param<int32_t>(P, s.row_sums);
  convolution(x, s, A, P, [&](const Pixel& p, int ky, int kx, int64_t at) {
    const int64_t row = (int64_t(p.c) * s.filter_h + ky) * s.filter_w + kx;
    return intmath::wrapping_add(dot_s8(w + row * s.in_c, in + at, s.in_c),
                                 int32_t(uint32_t(s.in_offset) * uint32_t(row_sum[row])));
  });
}

// One product per tap: output channel c reads input channel c / depth_multiplier.
template <class X>
TI_HD void depthwise_conv2d(const X& x, const IntegerStep& s, int8_t* A, const uint8_t* P) {
  const int8_t* in = A + s.in;
  const int8_t* w = param<int8_t>(P, s.weights);
  convolution(x, s, A, P, [&](const Pixel& p, int ky, int kx, int64_t at) {
    return int32_t(w[(int64_t(ky) * s.filter_w + kx) * s.out_c + p.c]) *
           (int32_t(in[at + p.c / s.depth_multiplier]) + s.in_offset);
  });
}

template <class X>
TI_HD void pool(const X& x, const IntegerStep& s, int8_t* A, bool average) {
  const int8_t* in = A + s.in;
  int8_t* y = A + s.out;
  x.items(s.count, [&](int64_t i) {
    const Pixel p = pixel_of(s, i);
    int32_t acc = average ? 0 : INT32_MIN;
    int count = 0;
    for_each_tap(s, p, [&](int, int, int64_t at) {
      const int32_t v = in[at + p.c];
      acc = average ? acc + v : (v > acc ? v : acc);
      ++count;
    });
    if (average) acc = count == 0 ? 0 : (acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count);
    y[i] = intmath::clamp_s8(acc, s.lo, s.hi);
  });
}

template <class X>
TI_HD void reduce(const X& x, const IntegerStep& s, int8_t* A, const uint8_t* P) {
  const int8_t* in = A + s.in;
  int8_t* y = A + s.out;
  x.items(s.count, [&](int64_t i) {
    const int64_t o = i / s.inner, j = i % s.inner;
    int32_t sum = 0;
    for (int64_t r = 0; r < s.reduced; ++r) sum += in[(o * s.reduced + r) * s.inner + j];
    y[i] = requantize(s, P, sum - s.in_offset, 0);
  });
}

// One row per item: the row's maximum, the sum of the tabled shares, its reciprocal, then each
// exp scaled by it (tflite/ops/softmax.cpp's Int8Softmax).
template <class X>
TI_HD void softmax(const X& x, const IntegerStep& s, int8_t* A, const uint8_t* P) {
  const int32_t* exp_of = param<int32_t>(P, s.table_a);
  const int32_t* share = param<int32_t>(P, s.table_b);
  x.items(s.outer, [&](int64_t row) {
    const int8_t* in = A + s.in + row * s.inner;
    int8_t* y = A + s.out + row * s.inner;
    int32_t max = -128;
    for (int64_t c = 0; c < s.inner; ++c) max = in[c] > max ? in[c] : max;
    int32_t sum = 0;  // 12 integer bits
    for (int64_t c = 0; c < s.inner; ++c) sum = intmath::wrapping_add(sum, share[max - in[c]]);
    int bits_over_unit = 0;
    const int32_t scale = intmath::reciprocal(sum, 12, &bits_over_unit);
    int exponent = bits_over_unit + 31 - 8;
    exponent = exponent < 0 ? 0 : (exponent > 31 ? 31 : exponent);
    for (int64_t c = 0; c < s.inner; ++c)
      y[c] = intmath::clamp_s8(intmath::multiply(exp_of[max - in[c]], scale, -exponent, false) - 128, -128, 127);
  });
}

TI_HD inline int16_t clamp16(int32_t v) { return int16_t(v < -32768 ? -32768 : (v > 32767 ? 32767 : v)); }

// The integer LSTM as one block (tflite/ops/lstm/sequence_lstm_int8.cpp, its scalar kernels):
// the state from its zero point, then per time step every gate row (phase one, reading h), a
// barrier, every cell unit's activations, cell and hidden update (phase two, writing c and h),
// a barrier. Phase one reads the h phase two wrote only after the barrier between them.
template <class X>
TI_HD void lstm(const X& x, const IntegerStep& s, int8_t* A, const uint8_t* P) {
  const int n = s.units, rows = s.rows, input = s.depth;
  int8_t* h = A + s.state;
  int16_t* c = reinterpret_cast<int16_t*>(A + s.cell);
  int16_t* gate = reinterpret_cast<int16_t*>(A + s.scratch);
  const int8_t *wx = param<int8_t>(P, s.weights), *wh = param<int8_t>(P, s.weights_h);
  const int32_t *bx = param<int32_t>(P, s.bias), *bh = param<int32_t>(P, s.bias_h);
  const int32_t *mx = param<int32_t>(P, s.multiplier), *sx = param<int32_t>(P, s.shift);
  const int32_t *mh = param<int32_t>(P, s.multiplier_h), *sh = param<int32_t>(P, s.shift_h);
  const int16_t* sigmoid = param<int16_t>(P, s.tables) + 32768;
  const int16_t* tanh_gate = sigmoid + 65536;
  const int16_t* tanh_cell = tanh_gate + 65536;
  const bool single = s.requant == kRequantSingle;
  x.items(int64_t(s.batch) * n, [&](int64_t k) {
    h[k] = int8_t(s.state_zp);
    c[k] = 0;
  });
  x.sync();
  for (int b = 0; b < s.batch; ++b) {
    int8_t* hb = h + int64_t(b) * n;
    int16_t* cb = c + int64_t(b) * n;
    for (int t = 0; t < s.lstm_time; ++t) {
      const int64_t step_row = s.time_major ? int64_t(t) * s.batch + b : int64_t(b) * s.lstm_time + t;
      const int8_t* xt = A + s.in + step_row * input;
      x.items(rows, [&](int64_t r) {
        const int32_t ax = dot_s8(wx + r * input, xt, input), ah = dot_s8(wh + r * n, hb, n);
        const int16_t gx = clamp16(intmath::multiply(intmath::wrapping_add(bx[r], ax), mx[r], sx[r], false));
        const int32_t th = intmath::multiply(intmath::wrapping_add(bh[r], ah), mh[r], sh[r], false);
        gate[r] = clamp16(intmath::wrapping_add(th, gx));
      });
      x.sync();
      int8_t* y = A + s.out + step_row * n;
      x.items(n, [&](int64_t k) {
        const int16_t i = sigmoid[gate[s.gate_row[0] + k]], f = sigmoid[gate[s.gate_row[1] + k]];
        const int16_t g = tanh_gate[gate[s.gate_row[2] + k]], o = sigmoid[gate[s.gate_row[3] + k]];
        const int16_t kept = int16_t(intmath::divide_by_pot(int32_t(f) * cb[k], 15));
        const int16_t added = int16_t(intmath::divide_by_pot(int32_t(i) * g, s.cell_shift));
        int32_t v = clamp16(int32_t(kept) + added);
        if (s.cell_clip > 0) v = v < -s.cell_clip ? -s.cell_clip : (v > s.cell_clip ? s.cell_clip : v);
        cb[k] = int16_t(v);
        const int32_t prod = int32_t(o) * tanh_cell[cb[k]];
        hb[k] = intmath::clamp_s8(intmath::multiply(prod, s.hidden_multiplier, s.hidden_shift, single) + s.out_zp, -128, 127);
        y[k] = hb[k];
      });
      x.sync();
    }
  }
}

template <IntKind K, class X>
TI_HD void run_kind(const X& x, const IntegerStep& s, int8_t* A, const uint8_t* P) {
  if constexpr (K == IntKind::Gather) gather(x, s, A, P);
  else if constexpr (K == IntKind::Table) table(x, s, A, P);
  else if constexpr (K == IntKind::Binary) binary(x, s, A, P);
  else if constexpr (K == IntKind::FullyConnected) fully_connected(x, s, A, P);
  else if constexpr (K == IntKind::Conv2D) conv2d(x, s, A, P);
  else if constexpr (K == IntKind::DepthwiseConv2D) depthwise_conv2d(x, s, A, P);
  else if constexpr (K == IntKind::MaxPool) pool(x, s, A, false);
  else if constexpr (K == IntKind::AvgPool) pool(x, s, A, true);
  else if constexpr (K == IntKind::Reduce) reduce(x, s, A, P);
  else if constexpr (K == IntKind::Softmax) softmax(x, s, A, P);
  else if constexpr (K == IntKind::Lstm) lstm(x, s, A, P);
}

template <class X>
TI_HD void run_step(const X& x, const IntegerStep& s, int8_t* A, const uint8_t* P) {
  switch (s.kind) {
    case IntKind::Gather: return run_kind<IntKind::Gather>(x, s, A, P);
    case IntKind::Table: return run_kind<IntKind::Table>(x, s, A, P);
    case IntKind::Binary: return run_kind<IntKind::Binary>(x, s, A, P);
    case IntKind::FullyConnected: return run_kind<IntKind::FullyConnected>(x, s, A, P);
    case IntKind::Conv2D: return run_kind<IntKind::Conv2D>(x, s, A, P);
    case IntKind::DepthwiseConv2D: return run_kind<IntKind::DepthwiseConv2D>(x, s, A, P);
    case IntKind::MaxPool: return run_kind<IntKind::MaxPool>(x, s, A, P);
    case IntKind::AvgPool: return run_kind<IntKind::AvgPool>(x, s, A, P);
    case IntKind::Reduce: return run_kind<IntKind::Reduce>(x, s, A, P);
    case IntKind::Softmax: return run_kind<IntKind::Softmax>(x, s, A, P);
    case IntKind::Lstm: return run_kind<IntKind::Lstm>(x, s, A, P);
    case IntKind::Count: return;
  }
}

}  // namespace tickinfer::cuda::intsteps
