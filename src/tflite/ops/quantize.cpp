// QUANTIZE (float -> int8/int16; int8/int16 -> int8/int16 requantize) and DEQUANTIZE
// (int8/int16/uint8/float16 -> float). TFLite reference semantics:
//   quantize:    q = clamp(round_half_away(x / scale) + zp)   (division in float)
//   requantize:  q = clamp(MBQM(q_in - zp_in, M = in_scale / out_scale) + zp_out)
//   dequantize:  x = scale * (q - zp)
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "tflite/kernels/quantize_input.hpp"
#include "tflite/ops/ops.hpp"
#include "tflite/ops/op_support.hpp"

namespace tickinfer::tfl::ops {
namespace {

template <class Q>
class QuantizeFloat final : public PreparedOp {
 public:
  // fast: for int8, a kernel computing the same (tflite/kernels/quantize_input.hpp), or nullptr.
  QuantizeFloat(int in, int out, int64_t n, AffineParams p, kernels::QuantizeF32S8Fn fast = nullptr)
      : in_(in), out_(out), n_(n), p_(p), fast_(fast) {}
  void eval(const TensorMemory& mem) noexcept override {
    const float* x = mem.at<float>(in_);
    Q* y = mem.at<Q>(out_);
    if constexpr (std::is_same_v<Q, int8_t>) {
      if (fast_) {
        fast_(x, y, static_cast<size_t>(n_), p_.scale, p_.zero_point);
        return;
      }
    }
    constexpr float lo = static_cast<float>(std::numeric_limits<Q>::min());
    constexpr float hi = static_cast<float>(std::numeric_limits<Q>::max());
    for (int64_t i = 0; i < n_; ++i) {
      // Clamp in float before the zero point is added back as an int: the same result as TFLite's
      // int32 arithmetic for every finite input, and defined for huge ones. NaN maps to zp.
      float r = std::round(x[i] / p_.scale);
      r = std::clamp(r, lo - 70000.0f, hi + 70000.0f);
      if (r != r) r = 0.0f;
      const int32_t v = static_cast<int32_t>(r) + p_.zero_point;
      y[i] = static_cast<Q>(std::clamp<int32_t>(v, std::numeric_limits<Q>::min(), std::numeric_limits<Q>::max()));
    }
  }
  std::string describe() const override { return fast_ ? "quantize float (vector kernel)" : "quantize float"; }

 private:
  int in_, out_;
  int64_t n_;
  AffineParams p_;
  kernels::QuantizeF32S8Fn fast_;
};

template <class In, class Out, Rounding R>
class Requantize final : public PreparedOp {
 public:
  Requantize(int in, int out, int64_t n, int32_t in_zp, int32_t out_zp, QuantizedMultiplier m)
      : in_(in), out_(out), n_(n), in_zp_(in_zp), out_zp_(out_zp), m_(m) {}
  void eval(const TensorMemory& mem) noexcept override {
    const In* x = mem.at<In>(in_);
    Out* y = mem.at<Out>(out_);
    for (int64_t i = 0; i < n_; ++i) {
      const int32_t v = multiply_by_quantized_multiplier<R>(static_cast<int32_t>(x[i]) - in_zp_, m_.multiplier, m_.shift) + out_zp_;
      y[i] = static_cast<Out>(std::clamp<int32_t>(v, std::numeric_limits<Out>::min(), std::numeric_limits<Out>::max()));
    }
  }
  std::string describe() const override { return "requantize"; }
  // int8 -> int8: its formula for each of the 256 inputs, as a table.
  bool integer_form(std::vector<IntegerForm>* forms) const override {
    if constexpr (!std::is_same_v<In, int8_t> || !std::is_same_v<Out, int8_t>) {
      return false;
    } else {
      int8_t table[256];
      for (int v = -128; v < 128; ++v) {
        const int32_t r = multiply_by_quantized_multiplier<R>(v - in_zp_, m_.multiplier, m_.shift) + out_zp_;
        table[static_cast<uint8_t>(v)] = static_cast<int8_t>(std::clamp<int32_t>(r, -128, 127));
      }
      return table_form(table, in_, out_, n_, forms);
    }
  }

 private:
  int in_, out_;
  int64_t n_;
  int32_t in_zp_, out_zp_;
  QuantizedMultiplier m_;
};

template <class Q>
class Dequantize final : public PreparedOp {
 public:
  Dequantize(int in, int out, int64_t n, AffineParams p) : in_(in), out_(out), n_(n), p_(p) {}
  void eval(const TensorMemory& mem) noexcept override {
    const Q* x = mem.at<Q>(in_);
    float* y = mem.at<float>(out_);
    const double scale = p_.scale;  // DequantizationParams holds the scale as a double
    for (int64_t i = 0; i < n_; ++i) y[i] = static_cast<float>(scale * (static_cast<int32_t>(x[i]) - p_.zero_point));
  }
  std::string describe() const override { return "dequantize"; }

 private:
  int in_, out_;
  int64_t n_;
  AffineParams p_;
};

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const int exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ffu;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(mant), -24);  // zero or subnormal
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    bits |= sign;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  uint32_t bits;
  if (exp == 31) bits = sign | 0x7f800000u | (mant << 13);  // inf / NaN
  else bits = sign | (static_cast<uint32_t>(exp - 15 + 127) << 23) | (mant << 13);
  std::memcpy(&f, &bits, 4);
  return f;
}

class DequantizeF16 final : public PreparedOp {
 public:
  DequantizeF16(int in, int out, int64_t n) : in_(in), out_(out), n_(n) {}
  void eval(const TensorMemory& mem) noexcept override {
    const uint16_t* x = mem.at<uint16_t>(in_);
    float* y = mem.at<float>(out_);
    for (int64_t i = 0; i < n_; ++i) y[i] = half_to_float(x[i]);
  }
  std::string describe() const override { return "dequantize float16"; }

 private:
  int in_, out_;
  int64_t n_;
};

template <class In, class Out>
std::unique_ptr<PreparedOp> make_requantize(const PrepareContext& ctx, int64_t n, const AffineParams& ip,
                                            const AffineParams& op) {
  // quantize.cc: effective scale = (double)in_scale / (double)out_scale.
  const QuantizedMultiplier m =
      quantize_multiplier(static_cast<double>(ip.scale) / static_cast<double>(op.scale), rounding(ctx));
  if (rounding(ctx) == Rounding::Double) {
    return std::make_unique<Requantize<In, Out, Rounding::Double>>(ctx.input_index(0), ctx.output_index(0), n,
                                                                   ip.zero_point, op.zero_point, m);
  }
  return std::make_unique<Requantize<In, Out, Rounding::Single>>(ctx.input_index(0), ctx.output_index(0), n,
                                                                 ip.zero_point, op.zero_point, m);
}

}  // namespace

std::unique_ptr<PreparedOp> prepare_quantize(const PrepareContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  const int64_t n = require_static(ctx, in);
  if (require_static(ctx, out) != n) {
    ctx.fail("output '" + out.name + "' " + shape_str(out.shape) + " must match input " + shape_str(in.shape));
  }
  const int i = ctx.input_index(0), o = ctx.output_index(0);
  if (ctx.op.code == OpCode::Dequantize) {
    require_type(ctx, out, "output", {DType::F32});
    require_type(ctx, in, "input", {DType::I8, DType::I16, DType::U8, DType::F16});
    if (in.type == DType::F16) return std::make_unique<DequantizeF16>(i, o, n);
    const AffineParams ip = per_tensor_params(ctx, in, "input");
    if (in.type == DType::I8) return std::make_unique<Dequantize<int8_t>>(i, o, n, ip);
    if (in.type == DType::I16) return std::make_unique<Dequantize<int16_t>>(i, o, n, ip);
    return std::make_unique<Dequantize<uint8_t>>(i, o, n, ip);
  }
  require_type(ctx, in, "input", {DType::F32, DType::I8, DType::I16});
  require_type(ctx, out, "output", {DType::I8, DType::I16});
  const AffineParams op = per_tensor_params(ctx, out, "output");
  if (in.type == DType::F32) {
    if (out.type == DType::I8) {
      // Scalar: the reference loop itself; every other ISA the family's variant (equal to it bit for bit).
      const bool reference = ctx.isa == ::tickinfer::kernels::Isa::Scalar;
      return std::make_unique<QuantizeFloat<int8_t>>(i, o, n, op,
                                                     reference ? nullptr : kernels::quantize_f32_to_s8(ctx.isa));
    }
    return std::make_unique<QuantizeFloat<int16_t>>(i, o, n, op);
  }
  const AffineParams ip = per_tensor_params(ctx, in, "input");
  if (in.type == DType::I8 && out.type == DType::I8) return make_requantize<int8_t, int8_t>(ctx, n, ip, op);
  if (in.type == DType::I8) return make_requantize<int8_t, int16_t>(ctx, n, ip, op);
  if (out.type == DType::I8) return make_requantize<int16_t, int8_t>(ctx, n, ip, op);
  return make_requantize<int16_t, int16_t>(ctx, n, ip, op);
}

}  // namespace tickinfer::tfl::ops
