// Elementwise unary ops: LOGISTIC, TANH, RELU, RELU6, LEAKY_RELU, GELU, HARD_SWISH, ELU, EXP,
// NEG, ABS, SQRT, RSQRT, LOG, SQUARE.
// float: TFLite's reference formulas. int8: a 256-entry table built at prepare time from the
// formula TFLite's int8 kernel applies to each value (LUTPopulate for LOGISTIC/TANH; fixed-point
// requantization for the RELU family), so eval is a table lookup and matches bit for bit.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <cmath>

#include "tflite/kernels/leaky_relu.hpp"
#include "tflite/kernels/logistic_f32.hpp"
#include "tflite/kernels/lut.hpp"
#include "tflite/kernels/platform_expf.hpp"
#include "tflite/kernels/platform_tanhf.hpp"
#include "tflite/ops/ops.hpp"
#include "tflite/ops/op_support.hpp"
#include "tflite/ops/unary_int8.hpp"

namespace tickinfer::tfl::ops {
namespace {

using FloatFn = float (*)(float);

// LOGISTIC: TFLite's reference formula (tflite/kernels/logistic_f32.hpp), in chunks of 2^20.
class FloatLogistic final : public PreparedOp {
 public:
  FloatLogistic(int in, int out, int64_t n, kernels::LogisticArrayFn logistic)
      : in_(in), out_(out), n_(n), logistic_(logistic) {}
  void eval(const TensorMemory& mem) noexcept override {
    const float* x = mem.at<float>(in_);
    float* y = mem.at<float>(out_);
    for (int64_t i0 = 0; i0 < n_; i0 += 1 << 20) {
      logistic_(x + i0, y + i0, static_cast<int>(std::min<int64_t>(1 << 20, n_ - i0)));
    }
  }
  std::string describe() const override { return "float logistic"; }

 private:
  int in_, out_;
  int64_t n_;
  kernels::LogisticArrayFn logistic_;
};

// TANH: std::tanh per element, through its vector replica (tflite/kernels/platform_tanhf.hpp,
// bit for bit).
class FloatTanh final : public PreparedOp {
 public:
  FloatTanh(int in, int out, int64_t n, kernels::TanhfArrayFn tanhf) : in_(in), out_(out), n_(n), tanhf_(tanhf) {}
  void eval(const TensorMemory& mem) noexcept override {
    const float* x = mem.at<float>(in_);
    float* y = mem.at<float>(out_);
    for (int64_t i0 = 0; i0 < n_; i0 += 1 << 20)
      tanhf_(x + i0, y + i0, static_cast<int>(std::min<int64_t>(1 << 20, n_ - i0)));
  }
  std::string describe() const override { return "float tanh"; }

 private:
  int in_, out_;
  int64_t n_;
  kernels::TanhfArrayFn tanhf_;
};

class FloatUnary final : public PreparedOp {
 public:
  FloatUnary(int in, int out, int64_t n, FloatFn f, const char* name) : in_(in), out_(out), n_(n), f_(f), name_(name) {}
  void eval(const TensorMemory& mem) noexcept override {
    const float* x = mem.at<float>(in_);
    float* y = mem.at<float>(out_);
    for (int64_t i = 0; i < n_; ++i) y[i] = f_(x[i]);
  }
  std::string describe() const override { return std::string("float ") + name_; }

 private:
  int in_, out_;
  int64_t n_;
  FloatFn f_;
  const char* name_;
};

class FloatLeakyRelu final : public PreparedOp {
 public:
  FloatLeakyRelu(int in, int out, int64_t n, float alpha, kernels::LeakyReluFn f)
      : in_(in), out_(out), n_(n), alpha_(alpha), f_(f) {}
  // TFLite's x > 0 ? x : x * alpha as a select of bits (tflite/kernels/leaky_relu.hpp).
  void eval(const TensorMemory& mem) noexcept override { f_(mem.at<float>(in_), mem.at<float>(out_), n_, alpha_); }
  std::string describe() const override { return "float leaky_relu"; }

 private:
  int in_, out_;
  int64_t n_;
  float alpha_;
  kernels::LeakyReluFn f_;
};

class LutUnary final : public PreparedOp {
 public:
  LutUnary(int in, int out, int64_t n, const char* name, kernels::ApplyLutS8Fn apply)
      : in_(in), out_(out), n_(n), name_(name), apply_(apply) {}
  kernels::LutS8 lut{};
  void eval(const TensorMemory& mem) noexcept override { apply_(lut, mem.at<int8_t>(in_), mem.at<int8_t>(out_), n_); }
  std::string describe() const override { return std::string("int8 ") + name_ + " (256-entry table)"; }
  bool integer_form(std::vector<IntegerForm>* forms) const override { return table_form(lut.table, in_, out_, n_, forms); }

 private:
  int in_, out_;
  int64_t n_;
  const char* name_;
  kernels::ApplyLutS8Fn apply_;
};

FloatFn float_fn(const PrepareContext& ctx) {
  switch (ctx.op.code) {
    case OpCode::Relu: return [](float x) { return std::max(0.0f, x); };
    case OpCode::Relu6: return [](float x) { return std::min(std::max(0.0f, x), 6.0f); };
    case OpCode::HardSwish: return [](float x) { return x * std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6.0f; };
    case OpCode::Elu: return [](float x) { return x < 0.0f ? std::expm1(x) : x; };
    case OpCode::Exp: return [](float x) { return std::exp(x); };
    case OpCode::Neg: return [](float x) { return -x; };
    case OpCode::Abs: return [](float x) { return std::fabs(x); };
    case OpCode::Sqrt: return [](float x) { return std::sqrt(x); };
    case OpCode::Rsqrt: return [](float x) { return 1.0f / std::sqrt(x); };
    case OpCode::Log: return [](float x) { return std::log(x); };
    case OpCode::Square: return [](float x) { return x * x; };
    default: break;
  }
  return nullptr;
}

float gelu_exact(float x) { return 0.5f * x * (1.0f + std::erf(x * static_cast<float>(M_SQRT1_2))); }
float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
}

}  // namespace

std::unique_ptr<PreparedOp> prepare_activation(const PrepareContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  const int64_t n = require_static(ctx, in);
  if (require_static(ctx, out) != n) {
    ctx.fail("output '" + out.name + "' " + shape_str(out.shape) + " must match input " + shape_str(in.shape));
  }
  require_type(ctx, in, "input", {DType::F32, DType::I8});
  require_same_type(ctx, in, out);
  const char* name = op_name(ctx.op.code);
  if (in.type == DType::F32) {
    if (ctx.op.code == OpCode::LeakyRelu) {
      return std::make_unique<FloatLeakyRelu>(ctx.input_index(0), ctx.output_index(0), n, ctx.op.options.alpha,
                                              kernels::leaky_relu(ctx.isa));
    }
    if (ctx.op.code == OpCode::Tanh)
      return std::make_unique<FloatTanh>(ctx.input_index(0), ctx.output_index(0), n, kernels::tanhf_array(ctx.isa));
    if (ctx.op.code == OpCode::Logistic)
      return std::make_unique<FloatLogistic>(ctx.input_index(0), ctx.output_index(0), n, kernels::logistic_array(ctx.isa));
    FloatFn f = ctx.op.code == OpCode::Gelu ? (ctx.op.options.approximate ? gelu_tanh : gelu_exact) : float_fn(ctx);
    if (!f) ctx.fail("float32 is not supported for this op");
    return std::make_unique<FloatUnary>(ctx.input_index(0), ctx.output_index(0), n, f, name);
  }
  auto op = std::make_unique<LutUnary>(ctx.input_index(0), ctx.output_index(0), n, name, kernels::apply_lut_s8_fn(ctx.isa));
  build_unary_int8_lut(ctx, per_tensor_params(ctx, in, "input"), per_tensor_params(ctx, out, "output"), &op->lut);
  return op;
}

}  // namespace tickinfer::tfl::ops
