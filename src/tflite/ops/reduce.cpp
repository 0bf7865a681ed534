// MEAN and SUM over constant axes (TFLite reduce.cc, reference kernels).
//  float: each output sums its inputs in input order (ReduceSumImpl), MEAN then divides by the
//    number of reduced elements in float.
//  int8:  int32 sums of the stored values; then
//    out = MultiplyByQuantizedMultiplier(sum - in_zp * count, M) + out_zp, clamped,
//    where M = in_scale / out_scale (in double) and, for MEAN, M is divided by `count` the way
//    reference_ops::QuantizedMeanOrSum does it: the multiplier is shifted left by
//    s = min(floor(log2(count)), 32, 31 + shift), integer-divided by count, and s is taken off
//    the shift.
#include <algorithm>
#include <cstring>
#include <vector>

#include "tflite/kernels/gemv_s8.hpp"
#include "tflite/kernels/sum_rows_s8.hpp"
#include "tflite/ops/ops.hpp"
#include "tflite/ops/op_support.hpp"

namespace tickinfer::tfl::ops {
namespace {

struct ReduceGeometry {
  int64_t in_count = 0, out_count = 0, reduced = 1;  // reduced: input elements per output
  std::vector<int32_t> out_index;                    // output slot of each input element
  // Where the reduced axes are adjacent, the input is [outer, reduced, inner] and output (o, j)
  // sums x[(o * reduced + r) * inner + j] over r: whole rows of `inner` added at once, each
  // output still summing its inputs in input order. 0: the axes are apart (out_index walks).
  int64_t outer = 0, inner = 0;
};

// Output (o, j) += row r of block o, for every r in order: the adjacent-axes form of the float sum
// (whose order is TFLite's; the int8 sum's order does not matter: kernels/sum_rows_s8.hpp).
template <class Acc, class T>
void sum_blocks(const ReduceGeometry& g, const T* x, Acc* sum) noexcept {
  for (int64_t o = 0; o < g.outer; ++o) {
    Acc* s = sum + o * g.inner;
    for (int64_t r = 0; r < g.reduced; ++r) {
      const T* row = x + (o * g.reduced + r) * g.inner;
      for (int64_t j = 0; j < g.inner; ++j) s[j] += static_cast<Acc>(row[j]);
    }
  }
}

ReduceGeometry reduce_geometry(const PrepareContext& ctx, const Tensor& in, const Tensor& axes_t, const Tensor& out) {
  const int rank = static_cast<int>(in.shape.size());
  std::vector<bool> reduce(static_cast<size_t>(rank), false);
  for (int64_t a : const_ints(ctx, axes_t, "axes")) {
    const int64_t r = a < 0 ? a + rank : a;
    if (r < 0 || r >= rank) ctx.fail("axis " + std::to_string(a) + " is out of range for input rank " + std::to_string(rank));
    reduce[static_cast<size_t>(r)] = true;
  }
  ReduceGeometry g;
  g.in_count = require_static(ctx, in);
  if (g.in_count > (int64_t{1} << 31) - 1) ctx.fail("input '" + in.name + "' is too large");
  g.out_count = 1;
  for (int d = 0; d < rank; ++d) {
    if (reduce[static_cast<size_t>(d)]) g.reduced *= in.shape[static_cast<size_t>(d)];
    else g.out_count *= in.shape[static_cast<size_t>(d)];
  }
  if (require_static(ctx, out) != g.out_count) {
    ctx.fail("output '" + out.name + "' " + shape_str(out.shape) + " does not hold the " + std::to_string(g.out_count) +
             " values left after reducing input " + shape_str(in.shape));
  }
  if (g.reduced == 0) ctx.fail("input '" + in.name + "' reduces over an empty dimension");
  int first = rank, last = -1;
  for (int d = 0; d < rank; ++d) {
    if (reduce[static_cast<size_t>(d)]) {
      first = std::min(first, d);
      last = d;
    }
  }
  bool adjacent = last >= 0;
  for (int d = first; d <= last && adjacent; ++d) adjacent = reduce[static_cast<size_t>(d)];
  if (adjacent) {
    g.outer = g.inner = 1;
    for (int d = 0; d < first; ++d) g.outer *= in.shape[static_cast<size_t>(d)];
    for (int d = last + 1; d < rank; ++d) g.inner *= in.shape[static_cast<size_t>(d)];
    return g;
  }
  // Walk the input in order, tracking the output offset of the kept dimensions.
  g.out_index.resize(static_cast<size_t>(g.in_count));
  std::vector<int64_t> out_stride(static_cast<size_t>(rank), 0);
  int64_t s = 1;
  for (int d = rank; d-- > 0;) {
    if (!reduce[static_cast<size_t>(d)]) {
      out_stride[static_cast<size_t>(d)] = s;
      s *= in.shape[static_cast<size_t>(d)];
    }
  }
  std::vector<int> pos(static_cast<size_t>(rank), 0);
  int64_t o = 0;
  for (int64_t i = 0; i < g.in_count; ++i) {
    g.out_index[static_cast<size_t>(i)] = static_cast<int32_t>(o);
    for (int d = rank; d-- > 0;) {
      const size_t du = static_cast<size_t>(d);
      ++pos[du];
      o += out_stride[du];
      if (pos[du] < in.shape[du]) break;
      o -= out_stride[du] * in.shape[du];
      pos[du] = 0;
    }
  }
  return g;
}

class FloatReduce final : public PreparedOp {
 public:
  FloatReduce(int in, int out, ReduceGeometry g, bool mean)
      : in_(in), out_(out), g_(std::move(g)), mean_(mean), sum_(static_cast<size_t>(g_.out_count)) {}
  void eval(const TensorMemory& mem) noexcept override {
    const float* x = mem.at<float>(in_);
    float* y = mem.at<float>(out_);
    std::fill(sum_.begin(), sum_.end(), 0.0f);
    if (g_.inner > 0) {
      sum_blocks(g_, x, sum_.data());
    } else {
      for (int64_t i = 0; i < g_.in_count; ++i) sum_[static_cast<size_t>(g_.out_index[static_cast<size_t>(i)])] += x[i];
    }
    const float count = static_cast<float>(g_.reduced);
    for (int64_t o = 0; o < g_.out_count; ++o) y[o] = mean_ ? sum_[static_cast<size_t>(o)] / count : sum_[static_cast<size_t>(o)];
  }
  std::string describe() const override { return mean_ ? "float mean" : "float sum"; }

 private:
  int in_, out_;
  ReduceGeometry g_;
  bool mean_;
  std::vector<float> sum_;
};

template <Rounding R>
class Int8Reduce final : public PreparedOp {
 public:
  Int8Reduce(int in, int out, ReduceGeometry g, int32_t in_zp, int32_t out_zp, QuantizedMultiplier m, bool mean,
             kernels::SumRowsS8Fn sum_rows, kernels::RequantS8Fn requant)
      : in_(in), out_(out), g_(std::move(g)), offset_(static_cast<int32_t>(in_zp * g_.reduced)), out_zp_(out_zp),
        m_(m), mean_(mean), sum_rows_(sum_rows), requant_(requant), sum_(static_cast<size_t>(g_.out_count)),
        scale_(static_cast<int>(g_.out_count)) {
    // The kernel set's vector requantization reads a scale per lane: the tensor's in every lane.
    scale_.set_scale(m_.multiplier, m_.shift);
    scale_.set_output(out_zp_, -128, 127);
  }
  void eval(const TensorMemory& mem) noexcept override {
    const int8_t* x = mem.at<int8_t>(in_);
    int8_t* y = mem.at<int8_t>(out_);
    // Each sum starts at minus the input zero point's share (int32 wrap-around, as the reference's
    // sum - zp * count), so the requantization takes the sums as they are.
    std::fill(sum_.begin(), sum_.end(), static_cast<int32_t>(0u - static_cast<uint32_t>(offset_)));
    if (g_.inner > 0) {  // block o's rows into outputs [o * inner, (o + 1) * inner)
      for (int64_t o = 0; o < g_.outer; ++o) {
        sum_rows_(x + o * g_.reduced * g_.inner, g_.reduced, g_.inner, sum_.data() + o * g_.inner);
      }
    } else {
      for (int64_t i = 0; i < g_.in_count; ++i) sum_[static_cast<size_t>(g_.out_index[static_cast<size_t>(i)])] += x[i];
    }
    requant_(sum_.data(), static_cast<int>(g_.out_count), scale_.params(), y);
  }
  std::string describe() const override { return mean_ ? "int8 mean" : "int8 sum"; }
  bool integer_form(std::vector<IntegerForm>* forms) const override {
    if (g_.inner == 0) return false;  // axes apart: only the adjacent form is written out
    IntegerForm* f = &forms->emplace_back();
    f->kind = IntegerKind::Reduce;
    f->inputs = {in_};
    f->output = out_;
    f->count = g_.out_count;
    f->outer = g_.outer;
    f->reduced = g_.reduced;
    f->inner = g_.inner;
    requant_form(R == Rounding::Double ? RequantForm::Double : RequantForm::Single, {m_.multiplier}, {m_.shift}, offset_,
                 out_zp_, -128, 127, f);
    return true;
  }

 private:
  int in_, out_;
  ReduceGeometry g_;
  int32_t offset_, out_zp_;
  QuantizedMultiplier m_;
  bool mean_;
  kernels::SumRowsS8Fn sum_rows_;
  kernels::RequantS8Fn requant_;
  std::vector<int32_t> sum_;
  kernels::UniformRequant scale_;
};

// reference_ops::QuantizedMeanOrSum folds 1/count into the multiplier this way for MEAN.
QuantizedMultiplier fold_count(QuantizedMultiplier m, int64_t count) {
  int s = 63 - __builtin_clzll(static_cast<unsigned long long>(count));
  s = std::min(s, 32);
  s = std::min(s, 31 + m.shift);
  if (s < 0) s = 0;  // a shift below -31 (scale ratio under 2^-31) leaves nothing to fold into
  QuantizedMultiplier r;
  r.multiplier = static_cast<int32_t>((static_cast<int64_t>(m.multiplier) << s) / count);
  r.shift = m.shift - s;
  return r;
}

}  // namespace

std::unique_ptr<PreparedOp> prepare_reduce(const PrepareContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  require_type(ctx, in, "input", {DType::F32, DType::I8});
  require_same_type(ctx, in, out);
  ReduceGeometry g = reduce_geometry(ctx, in, ctx.input(1), out);
  const bool mean = ctx.op.code == OpCode::Mean;
  const int i = ctx.input_index(0), o = ctx.output_index(0);
  if (in.type == DType::F32) return std::make_unique<FloatReduce>(i, o, std::move(g), mean);
  const AffineParams ip = per_tensor_params(ctx, in, "input");
  const AffineParams op = per_tensor_params(ctx, out, "output");
  QuantizedMultiplier m =
      quantize_multiplier(static_cast<double>(ip.scale) / static_cast<double>(op.scale), rounding(ctx));
  if (m.shift < -31 || m.shift > 30) ctx.fail("input/output scale ratio is out of the supported range");
  if (mean) m = fold_count(m, g.reduced);
  if (m.shift < -31) ctx.fail("input/output scale ratio is out of the supported range");
  const kernels::S8Kernels& requant = kernels::s8_kernels(ctx.isa, false);
  if (rounding(ctx) == Rounding::Double) {
    return std::make_unique<Int8Reduce<Rounding::Double>>(i, o, std::move(g), ip.zero_point, op.zero_point, m, mean,
                                                          kernels::sum_rows_s8(ctx.isa), requant.requant_double);
  }
  return std::make_unique<Int8Reduce<Rounding::Single>>(i, o, std::move(g), ip.zero_point, op.zero_point, m, mean,
                                                        kernels::sum_rows_s8(ctx.isa), requant.requant_single);
}

}  // namespace tickinfer::tfl::ops
