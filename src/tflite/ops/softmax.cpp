// SOFTMAX over the last dimension, as TFLite's reference kernels (the BUILTIN_REF registration):
//  float: x - max, exp((x - max) * beta), summed in order, each divided by the sum.
//  int8:  reference_ops::Softmax, all integer: the difference to the row maximum is scaled by
//    beta * in_scale into a value with 5 integer bits (skipped below diff_min), gemmlowp's
//    fixed-point exp, a sum with 12 integer bits, its reciprocal, and each exp times it,
//    rounded to 8 bits and offset by -128 (the output is fixed at scale 1/256, zero point -128).
#include <algorithm>
#include <cmath>
#include <limits>

#include "tflite/fixed_point_math.hpp"
#include "tflite/ops/ops.hpp"
#include "tflite/ops/op_support.hpp"

namespace tickinfer::tfl::ops {
namespace {

struct Rows {
  int64_t outer = 0;
  int depth = 0;
};

class FloatSoftmax final : public PreparedOp {
 public:
  FloatSoftmax(int in, int out, Rows r, float beta) : in_(in), out_(out), r_(r), beta_(beta) {}
  void eval(const TensorMemory& mem) noexcept override {
    const float* x = mem.at<float>(in_);
    float* y = mem.at<float>(out_);
    for (int64_t i = 0; i < r_.outer; ++i, x += r_.depth, y += r_.depth) {
      float max = std::numeric_limits<float>::lowest();
      for (int c = 0; c < r_.depth; ++c) max = std::max(max, x[c]);
      float sum = 0.0f;
      for (int c = 0; c < r_.depth; ++c) {
        const float e = std::exp((x[c] - max) * beta_);
        y[c] = e;
        sum += e;
      }
      for (int c = 0; c < r_.depth; ++c) y[c] = y[c] / sum;
    }
  }
  std::string describe() const override { return "float softmax"; }

 private:
  int in_, out_;
  Rows r_;
  float beta_;
};

constexpr int kScaledDiffIntegerBits = 5;
constexpr int kAccumulationIntegerBits = 12;

template <Rounding R>
class Int8Softmax final : public PreparedOp {
 public:
  Int8Softmax(int in, int out, Rows r, QuantizedMultiplier beta, int32_t diff_min)
      : in_(in), out_(out), r_(r), beta_(beta), diff_min_(diff_min) {}
  void eval(const TensorMemory& mem) noexcept override {
    const int8_t* x = mem.at<int8_t>(in_);
    int8_t* y = mem.at<int8_t>(out_);
    for (int64_t i = 0; i < r_.outer; ++i, x += r_.depth, y += r_.depth) {
      int32_t max = -128;
      for (int c = 0; c < r_.depth; ++c) max = std::max<int32_t>(max, x[c]);
      int32_t sum_of_exps = 0;  // 12 integer bits
      for (int c = 0; c < r_.depth; ++c) {
        const int32_t diff = x[c] - max;
        if (diff >= diff_min_) sum_of_exps = fx::add(sum_of_exps, fx::rescale(exp_of(diff), 0, kAccumulationIntegerBits));
      }
      int num_bits_over_unit = 0;
      const int32_t shifted_scale = fx::get_reciprocal(sum_of_exps, kAccumulationIntegerBits, &num_bits_over_unit);
      const int exponent = std::min(std::max(num_bits_over_unit + 31 - 8, 0), 31);
      for (int c = 0; c < r_.depth; ++c) {
        const int32_t diff = x[c] - max;
        if (diff >= diff_min_) {
          const int32_t unsat = rounding_divide_by_pot(fx::mul(shifted_scale, exp_of(diff)), exponent);
          y[c] = static_cast<int8_t>(std::min(std::max(unsat - 128, -128), 127));
        } else {
          y[c] = -128;
        }
      }
    }
  }
  std::string describe() const override { return "int8 softmax (fixed-point exp)"; }

 private:
  // exp(beta * in_scale * diff): MultiplyByQuantizedMultiplierGreaterThanOne, then fixed-point exp.
  int32_t exp_of(int32_t diff) const noexcept {
    int32_t scaled;
    if constexpr (R == Rounding::Double) {
      scaled = saturating_rounding_doubling_high_mul(shift_left_wrapping(diff, beta_.shift), beta_.multiplier);
    } else {
      scaled = multiply_by_quantized_multiplier<R>(diff, beta_.multiplier, beta_.shift);
    }
    return fx::exp_on_negative_values(scaled, kScaledDiffIntegerBits);
  }

  int in_, out_;
  Rows r_;
  QuantizedMultiplier beta_;
  int32_t diff_min_;
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
  if (in.type == DType::F32) return std::make_unique<FloatSoftmax>(ctx.input_index(0), ctx.output_index(0), r, beta);

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
  if (rounding(ctx) == Rounding::Double) {
    return std::make_unique<Int8Softmax<Rounding::Double>>(ctx.input_index(0), ctx.output_index(0), r, m, diff_min);
  }
  return std::make_unique<Int8Softmax<Rounding::Single>>(ctx.input_index(0), ctx.output_index(0), r, m, diff_min);
}

}  // namespace tickinfer::tfl::ops
