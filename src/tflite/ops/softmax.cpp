// SOFTMAX over the last dimension, as TFLite's reference kernels (the BUILTIN_REF registration):
//  float: x - max, exp((x - max) * beta), summed in order, each divided by the sum.
//  int8:  reference_ops::Softmax, all integer: the difference to the row maximum is scaled by
//    beta * in_scale into a value with 5 integer bits (skipped below diff_min), gemmlowp's
//    fixed-point exp, a sum with 12 integer bits, its reciprocal, and each exp times it,
//    rounded to 8 bits and offset by -128 (the output is fixed at scale 1/256, zero point -128).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "tflite/fixed_point_math.hpp"
#include "tflite/kernels/gemv_s8.hpp"
#include "tflite/kernels/softmax_float.hpp"
#include "tflite/ops/ops.hpp"
#include "tflite/ops/op_support.hpp"

namespace tickinfer::tfl::ops {
namespace {

struct Rows {
  int64_t outer = 0;
  int depth = 0;
};

// The float rows run in tflite/kernels/softmax_float.hpp (bit for bit the reference loop above,
// at vector speed).
class FloatSoftmax final : public PreparedOp {
 public:
  FloatSoftmax(int in, int out, Rows r, float beta, kernels::FloatSoftmaxKernel k)
      : in_(in), out_(out), r_(r), beta_(beta), k_(k) {}
  void eval(const TensorMemory& mem) noexcept override {
    k_.rows(mem.at<float>(in_), mem.at<float>(out_), r_.outer, r_.depth, beta_, k_.expf);
  }
  std::string describe() const override { return "float softmax"; }

 private:
  int in_, out_;
  Rows r_;
  float beta_;
  kernels::FloatSoftmaxKernel k_;
};

constexpr int kScaledDiffIntegerBits = 5;
constexpr int kAccumulationIntegerBits = 12;

// An int8 difference to the row maximum takes one of 256 values (0 down to -255), so the
// fixed-point exp of each, and its share of the sum, are computed once at prepare by the same
// functions (bit for bit what the per-element computation gives; measured 73 ns per element that
// way on a 64 x 64 attention softmax). A difference below diff_min (skipped by TFLite: no share of
// the sum, output -128) is stored as an exp of 0, which gives exactly that: a share of 0 and an
// output of 0 - 128.
class Int8Softmax final : public PreparedOp {
 public:
  static constexpr int kDiffs = 256;
  // A share is at most 2^19 (an exp of at most 1 with 12 integer bits), so fewer than 4096 of them
  // cannot reach the saturating add's limit: a plain sum gives the same bits.
  static constexpr int kPlainSumDepth = 4096;

  template <Rounding R>
  static std::unique_ptr<Int8Softmax> make(int in, int out, Rows r, QuantizedMultiplier beta, int32_t diff_min,
                                           kernels::RequantS8Fn requant) {
    auto op = std::unique_ptr<Int8Softmax>(new Int8Softmax(in, out, r, requant));
    for (int k = 0; k < kDiffs; ++k) {
      const int32_t diff = -k;
      const int32_t e = diff >= diff_min ? exp_of<R>(diff, beta) : 0;
      op->exp_[k] = e;
      op->share_[k] = fx::rescale(e, 0, kAccumulationIntegerBits);
    }
    return op;
  }
  void eval(const TensorMemory& mem) noexcept override {
    const int8_t* x = mem.at<int8_t>(in_);
    int8_t* y = mem.at<int8_t>(out_);
    const int depth = r_.depth;
    for (int64_t i = 0; i < r_.outer; ++i, x += depth, y += depth) {
      int8_t max = -128;
      for (int c = 0; c < depth; ++c) max = x[c] > max ? x[c] : max;
      int32_t sum_of_exps = 0;  // 12 integer bits
      if (depth < kPlainSumDepth) {
        for (int c = 0; c < depth; ++c) {
          const int d = max - x[c];  // 0 to 255
          exps_[static_cast<size_t>(c)] = exp_[d];
          sum_of_exps += share_[d];
        }
      } else {
        for (int c = 0; c < depth; ++c) {
          const int d = max - x[c];
          exps_[static_cast<size_t>(c)] = exp_[d];
          sum_of_exps = fx::add(sum_of_exps, share_[d]);
        }
      }
      int num_bits_over_unit = 0;
      const int32_t shifted_scale = fx::get_reciprocal(sum_of_exps, kAccumulationIntegerBits, &num_bits_over_unit);
      const int exponent = std::min(std::max(num_bits_over_unit + 31 - 8, 0), 31);
      // RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(exp, scale), exponent) - 128, clamped:
      // the double-rounding MultiplyByQuantizedMultiplier with shift -exponent, so the int8 set's
      // vector requantization computes it, the row's scale in every lane.
      scale_.set_scale(shifted_scale, -exponent);
      requant_(exps_.data(), depth, scale_.params(), y);
    }
  }
  std::string describe() const override { return "int8 softmax (fixed-point exp, tabled per difference)"; }
  // Rows of `depth` (outer, inner); table_a: the exp of each difference, table_b: its share of the sum.
  bool integer_form(std::vector<IntegerForm>* forms) const override {
    IntegerForm& f = forms->emplace_back();
    f.kind = IntegerKind::Softmax;
    f.inputs = {in_};
    f.output = out_;
    f.count = r_.outer * r_.depth;
    f.outer = r_.outer;
    f.inner = r_.depth;
    std::copy(exp_, exp_ + kDiffs, f.table_a);
    std::copy(share_, share_ + kDiffs, f.table_b);
    return true;
  }

 private:
  Int8Softmax(int in, int out, Rows r, kernels::RequantS8Fn requant)
      : in_(in), out_(out), r_(r), requant_(requant), exps_(static_cast<size_t>(r.depth)), scale_(r.depth) {
    scale_.set_output(-128, -128, 127);
  }

  // exp(beta * in_scale * diff): MultiplyByQuantizedMultiplierGreaterThanOne, then fixed-point exp.
  template <Rounding R>
  static int32_t exp_of(int32_t diff, QuantizedMultiplier beta) noexcept {
    int32_t scaled;
    if constexpr (R == Rounding::Double) {
      scaled = saturating_rounding_doubling_high_mul(shift_left_wrapping(diff, beta.shift), beta.multiplier);
    } else {
      scaled = multiply_by_quantized_multiplier<R>(diff, beta.multiplier, beta.shift);
    }
    return fx::exp_on_negative_values(scaled, kScaledDiffIntegerBits);
  }

  int in_, out_;
  Rows r_;
  int32_t exp_[kDiffs];    // the fixed-point exp of difference -k (0 below diff_min)
  int32_t share_[kDiffs];  // the same with 12 integer bits: its share of the row's sum
  kernels::RequantS8Fn requant_;  // the double-rounding one
  std::vector<int32_t> exps_;     // one row's exps
  kernels::UniformRequant scale_;  // the row's reciprocal in every lane
};

}  // namespace

std::unique_ptr<PreparedOp> prepare_softmax(const PrepareContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  require_type(ctx, in, "input", {DType::F32, DType::I8});
  require_same_type(ctx, in, out);
  const int64_t n = require_static(ctx, in);
  if (in.shape.empty()) ctx.fail("input '" + in.name + "' must have at least one dimension");
  if (require_static(ctx, out) != n) ctx.fail("output '" + out.name + "' must match input " + shape_str(in.shape));
  Rows r;
  r.depth = in.shape.back();
  if (r.depth <= 0) ctx.fail("input '" + in.name + "' has an empty last dimension");
  r.outer = n / r.depth;
  const float beta = ctx.op.options.beta;
  if (!std::isfinite(beta) || !(beta > 0.0f)) ctx.fail("beta " + std::to_string(beta) + " must be positive");
  if (in.type == DType::F32)
    return std::make_unique<FloatSoftmax>(ctx.input_index(0), ctx.output_index(0), r, beta, kernels::float_softmax_kernel(ctx.isa));

  const AffineParams ip = per_tensor_params(ctx, in, "input");
  const AffineParams op = per_tensor_params(ctx, out, "output");
  if (op.zero_point != -128 || std::fabs(op.scale - 1.0f / 256) > 0.001f / 256) {
    ctx.fail("int8 output must have scale 1/256 and zero point -128 (TFLite's fixed SOFTMAX output)");
  }
  // PreprocessSoftmaxScaling: beta * in_scale as a value with 5 integer bits, capped so the
  // multiplier stays representable.
  const double cap = rounding(ctx) == Rounding::Single ? static_cast<double>((int64_t{1} << 30) - 1)
                                                       : static_cast<double>((int64_t{1} << 31) - 1);
  const double real = std::min(static_cast<double>(beta) * static_cast<double>(ip.scale) *
                                   static_cast<double>(int64_t{1} << (31 - kScaledDiffIntegerBits)),
                               cap);
  const QuantizedMultiplier m = quantize_multiplier(real, rounding(ctx));
  // A shift of 31 is the cap itself: an input scale so large (a masked score quantized with the
  // mask's -2.4e38 in range) that only the row's maximum passes diff_min = 0, as in TFLite.
  if (m.shift < 0 || m.shift > 31) ctx.fail("input scale " + std::to_string(ip.scale) + " is too small for int8 softmax");
  // CalculateInputRadius: the largest difference whose scaled value still fits.
  const double radius = 1.0 * ((1 << kScaledDiffIntegerBits) - 1) *
                        static_cast<double>(int64_t{1} << (31 - kScaledDiffIntegerBits)) /
                        static_cast<double>(int64_t{1} << m.shift);
  const int32_t diff_min = -static_cast<int32_t>(std::floor(radius));
  const kernels::RequantS8Fn requant = kernels::s8_kernels(ctx.isa, false).requant(Rounding::Double);
  if (rounding(ctx) == Rounding::Double) {
    return Int8Softmax::make<Rounding::Double>(ctx.input_index(0), ctx.output_index(0), r, m, diff_min, requant);
  }
  return Int8Softmax::make<Rounding::Single>(ctx.input_index(0), ctx.output_index(0), r, m, diff_min, requant);
}

}  // namespace tickinfer::tfl::ops
