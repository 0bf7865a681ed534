// int8 binary elementwise ops, bit for bit as TFLite's reference integer kernels:
//  ADD / SUB (add.cc, sub.cc): both inputs are shifted left by 20 bits, scaled by
//    in_scale / (2 * max_in_scale), added (or subtracted), then scaled by
//    2 * max_in_scale / (2^20 * out_scale); each scaling is MultiplyByQuantizedMultiplier.
//  MUL (mul.cc): (a - zp_a) * (b - zp_b) scaled by a_scale * b_scale / out_scale.
//  SQUARED_DIFFERENCE (squared_difference.cc): like SUB with a 7-bit left shift, the difference
//    squared in int32, then scaled by (2 * max_in_scale)^2 / (2^14 * out_scale).
//  MAXIMUM / MINIMUM (maximum_minimum.cc): compare the stored values; no requantization.
// Multipliers are derived in double from the float scales, as each Prepare does.
#include <algorithm>
#include <cmath>
#include <string>

#include "tflite/kernels/gemv_s8.hpp"
#include "tflite/kernels/lut.hpp"
#include "tflite/ops/elementwise.hpp"

namespace tickinfer::tfl::ops {
namespace {

struct Scaled {
  int32_t multiplier = 0;
  int shift = 0;
};

template <Rounding R>
inline int32_t scale(int32_t x, const Scaled& s) {
  return multiply_by_quantized_multiplier<R>(x, s.multiplier, s.shift);
}

// ADD, SUB, MUL and SQUARED_DIFFERENCE all end in one requantization of an int32 per element
// (MultiplyByQuantizedMultiplier, + the output zero point, clamped): that last step runs on the
// int8 kernel set's vector requantization, 64 elements at a time, and what comes before it is
// the raw int32. An input's own scaling (ADD, SUB, SQUARED_DIFFERENCE: a shift and a
// MultiplyByQuantizedMultiplier of one int8 value) takes one of 256 values, so it is a table
// built at prepare by the same function. Same bits as the per-element loop, which made three
// scalar requantizations per element for ADD (27 ns per element measured on a layer norm's).
enum class RawKind { Add, Sub, Mul, SquaredDifference };

template <RawKind K>
class Int8BinaryRequant final : public PreparedOp {
  static constexpr int kBlock = 64;

 public:
  Int8BinaryRequant(int a, int b, int out, BroadcastPlan plan, std::string what, Rounding rounding,
                    kernels::RequantS8Fn requant)
      : a_(a), b_(b), out_(out), plan_(std::move(plan)), what_(std::move(what)), requant_(requant),
        rounding_(rounding == Rounding::Double ? RequantForm::Double : RequantForm::Single), scale_(kBlock) {}
  // table_a/table_b: the scaled input per stored value (index value + 128; ADD/SUB/SQUARED_DIFFERENCE);
  // off_a/off_b: minus the zero points (MUL).
  template <class TableA, class TableB>
  void set(TableA table_a, TableB table_b, int32_t off_a, int32_t off_b, QuantizedMultiplier out, int32_t zp_out,
           int32_t lo, int32_t hi) {
    for (int v = -128; v < 128; ++v) {
      table_a_[v + 128] = table_a(v);
      table_b_[v + 128] = table_b(v);
    }
    off_a_ = off_a;
    off_b_ = off_b;
    scale_.set_scale(out.multiplier, out.shift);
    scale_.set_output(zp_out, lo, hi);
  }
  void eval(const TensorMemory& mem) noexcept override {
    const int8_t* x = mem.at<int8_t>(a_);
    const int8_t* z = mem.at<int8_t>(b_);
    int8_t* y = mem.at<int8_t>(out_);
    const int64_t n = plan_.count;
    int32_t raw[kBlock];
    for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
      const int m = static_cast<int>(std::min<int64_t>(kBlock, n - i0));
      if (plan_.same) {
        for (int j = 0; j < m; ++j) raw[j] = raw_of(x[i0 + j], z[i0 + j]);
      } else {
        const int32_t* ia = plan_.index_a.data() + i0;
        const int32_t* ib = plan_.index_b.data() + i0;
        for (int j = 0; j < m; ++j) raw[j] = raw_of(x[ia[j]], z[ib[j]]);
      }
      requant_(raw, m, scale_.params(), y + i0);
    }
  }
  std::string describe() const override { return what_ + (plan_.same ? "" : " (broadcast)") + ", vector requantization"; }
  bool integer_form(std::vector<IntegerForm>* forms) const override {
    IntegerForm* f = &forms->emplace_back();
    f->kind = IntegerKind::Binary;
    f->inputs = {a_, b_};
    f->output = out_;
    f->count = plan_.count;
    f->raw = K == RawKind::Add ? BinaryRaw::Add
             : K == RawKind::Sub ? BinaryRaw::Sub
             : K == RawKind::Mul ? BinaryRaw::Mul
                                 : BinaryRaw::SquaredDifference;
    std::memcpy(f->table_a, table_a_, sizeof table_a_);
    std::memcpy(f->table_b, table_b_, sizeof table_b_);
    f->off_a = off_a_;
    f->off_b = off_b_;
    if (!plan_.same) f->index_a = plan_.index_a, f->index_b = plan_.index_b;
    const kernels::RequantParams& q = scale_.params();  // every lane holds the output's scale
    requant_form(rounding_, {q.multiplier[0]}, {q.shift[0]}, 0, q.output_zero_point, q.act_min, q.act_max, f);
    return true;
  }

  // The op with operand `side` (0: a, 1: b) fixed at the stored value c, for every value of the
  // other: what eval would write, through the same raw value and requantization.
  void table_with(int side, int8_t c, kernels::LutS8* lut) const noexcept {
    int32_t raw[256];
    int8_t y[256];
    for (int v = -128; v < 128; ++v) {
      const auto q = static_cast<int8_t>(v);
      raw[v + 128] = side == 1 ? raw_of(q, c) : raw_of(c, q);
    }
    for (int i0 = 0; i0 < 256; i0 += kBlock) requant_(raw + i0, kBlock, scale_.params(), y + i0);
    for (int v = -128; v < 128; ++v) lut->table[static_cast<uint8_t>(v)] = y[v + 128];
  }

 private:
  int32_t raw_of(int8_t a, int8_t b) const noexcept {
    if constexpr (K == RawKind::Mul) {
      return (a + off_a_) * (b + off_b_);
    } else {
      const int32_t sa = table_a_[a + 128], sb = table_b_[b + 128];
      if constexpr (K == RawKind::Add) return sa + sb;
      if constexpr (K == RawKind::Sub) return sa - sb;
      const int32_t d = sa - sb;
      return d * d;
    }
  }

  int a_, b_, out_;
  BroadcastPlan plan_;
  std::string what_;
  kernels::RequantS8Fn requant_;
  int32_t table_a_[256] = {}, table_b_[256] = {};
  int32_t off_a_ = 0, off_b_ = 0;
  RequantForm rounding_;
  kernels::UniformRequant scale_;  // the output's scale in each lane of a block
};

// A binary op whose other operand is one constant value (an attention's 1 / sqrt(d) scale, a
// layer norm's epsilon) is a function of this operand alone: a 256-entry table the op itself
// fills at prepare (Int8BinaryRequant::table_with), then one load per element.
class Int8BinaryWithConstant final : public PreparedOp {
 public:
  Int8BinaryWithConstant(int in, int out, int64_t count, const kernels::LutS8& lut, std::string what,
                         kernels::ApplyLutS8Fn apply)
      : in_(in), out_(out), count_(count), lut_(lut), what_(std::move(what)), apply_(apply) {}
  void eval(const TensorMemory& mem) noexcept override { apply_(lut_, mem.at<int8_t>(in_), mem.at<int8_t>(out_), count_); }
  std::string describe() const override { return what_ + " (one constant operand: 256-entry table)"; }
  bool integer_form(std::vector<IntegerForm>* forms) const override { return table_form(lut_.table, in_, out_, count_, forms); }

 private:
  int in_, out_;
  int64_t count_;
  kernels::LutS8 lut_;
  std::string what_;
  kernels::ApplyLutS8Fn apply_;
};

struct MaximumS8 {
  int8_t operator()(int8_t a, int8_t b) const noexcept { return a > b ? a : b; }
};
struct MinimumS8 {
  int8_t operator()(int8_t a, int8_t b) const noexcept { return a < b ? a : b; }
};

Scaled scaled(const PrepareContext& ctx, double m) {
  const QuantizedMultiplier q = quantize_multiplier(m, rounding(ctx));
  return {q.multiplier, q.shift};
}

// The op as a table where one operand is a single constant value and the other has the output's
// elements; as it is otherwise.
template <RawKind K>
std::unique_ptr<PreparedOp> with_constant(const PrepareContext& ctx, std::unique_ptr<Int8BinaryRequant<K>> op,
                                          const std::string& name) {
  const int64_t n_out = num_elements(ctx.output(0));
  for (int side : {1, 0}) {
    const Tensor& c = ctx.input(side);
    if (!c.is_constant() || num_elements(c) != 1 || num_elements(ctx.input(1 - side)) != n_out) continue;
    kernels::LutS8 lut{};
    op->table_with(side, const_data<int8_t>(c)[0], &lut);
    return std::make_unique<Int8BinaryWithConstant>(ctx.input_index(1 - side), ctx.output_index(0), n_out, lut, name,
                                                    kernels::apply_lut_s8_fn(ctx.isa));
  }
  return op;
}

template <RawKind K>
std::unique_ptr<Int8BinaryRequant<K>> make_requant(const PrepareContext& ctx, BroadcastPlan plan, const std::string& name) {
  return std::make_unique<Int8BinaryRequant<K>>(ctx.input_index(0), ctx.input_index(1), ctx.output_index(0),
                                                std::move(plan), name, rounding(ctx),
                                                kernels::s8_kernels(ctx.isa, false).requant(rounding(ctx)));
}

template <Rounding R>
std::unique_ptr<PreparedOp> make(const PrepareContext& ctx, BroadcastPlan plan) {
  const AffineParams pa = per_tensor_params(ctx, ctx.input(0), "input");
  const AffineParams pb = per_tensor_params(ctx, ctx.input(1), "input");
  const AffineParams po = per_tensor_params(ctx, ctx.output(0), "output");
  const std::string name = std::string("int8 ") + op_name(ctx.op.code);
  int32_t lo = -128, hi = 127;
  // An input's scaling before the sum or difference: (v - zp) << left_shift, times a multiplier.
  auto input_table = [](int32_t zp, int left_shift, Scaled m) {
    return [=](int v) { return scale<R>((v - zp) * (1 << left_shift), m); };
  };
  auto none = [](int) { return 0; };
  switch (ctx.op.code) {
    case OpCode::Add:
    case OpCode::Sub: {
      int8_activation_range(ctx, ctx.op.options.activation, po, &lo, &hi);
      constexpr int kLeftShift = 20;
      // 2 * max(...) is a float (exact); the ratios are taken in double.
      const double twice_max = 2.0f * std::max(pa.scale, pb.scale);
      const Scaled in_a = scaled(ctx, static_cast<double>(pa.scale) / twice_max);
      const Scaled in_b = scaled(ctx, static_cast<double>(pb.scale) / twice_max);
      const Scaled out = scaled(ctx, twice_max / static_cast<double>(static_cast<float>(1 << kLeftShift) * po.scale));
      const QuantizedMultiplier q{out.multiplier, out.shift};
      if (ctx.op.code == OpCode::Sub) {
        auto op = make_requant<RawKind::Sub>(ctx, std::move(plan), name);
        op->set(input_table(pa.zero_point, kLeftShift, in_a), input_table(pb.zero_point, kLeftShift, in_b), 0, 0, q,
                po.zero_point, lo, hi);
        return with_constant(ctx, std::move(op), name);
      }
      auto op = make_requant<RawKind::Add>(ctx, std::move(plan), name);
      op->set(input_table(pa.zero_point, kLeftShift, in_a), input_table(pb.zero_point, kLeftShift, in_b), 0, 0, q,
              po.zero_point, lo, hi);
      return with_constant(ctx, std::move(op), name);
    }
    case OpCode::Mul: {
      int8_activation_range(ctx, ctx.op.options.activation, po, &lo, &hi);
      const Scaled out = scaled(ctx, static_cast<double>(pa.scale * pb.scale / po.scale));
      auto op = make_requant<RawKind::Mul>(ctx, std::move(plan), name);
      op->set(none, none, -pa.zero_point, -pb.zero_point, {out.multiplier, out.shift}, po.zero_point, lo, hi);
      return with_constant(ctx, std::move(op), name);
    }
    case OpCode::SquaredDifference: {
      constexpr int kLeftShift = 7;
      const double twice_max = 2.0 * static_cast<double>(std::max(pa.scale, pb.scale));
      const Scaled in_a = scaled(ctx, static_cast<double>(pa.scale) / twice_max);
      const Scaled in_b = scaled(ctx, static_cast<double>(pb.scale) / twice_max);
      const Scaled out = scaled(ctx, twice_max * twice_max /
                                         static_cast<double>(static_cast<float>(1 << (2 * kLeftShift)) * po.scale));
      auto op = make_requant<RawKind::SquaredDifference>(ctx, std::move(plan), name);
      op->set(input_table(pa.zero_point, kLeftShift, in_a), input_table(pb.zero_point, kLeftShift, in_b), 0, 0,
              {out.multiplier, out.shift}, po.zero_point, -128, 127);
      return with_constant(ctx, std::move(op), name);
    }
    case OpCode::Maximum: return make_binary<int8_t>(ctx, std::move(plan), MaximumS8{}, name);
    case OpCode::Minimum: return make_binary<int8_t>(ctx, std::move(plan), MinimumS8{}, name);
    default: break;
  }
  ctx.fail("int8 is not supported for this op");
}

}  // namespace

std::unique_ptr<PreparedOp> make_elementwise_int8(const PrepareContext& ctx, BroadcastPlan plan) {
  if (rounding(ctx) == Rounding::Double) return make<Rounding::Double>(ctx, std::move(plan));
  return make<Rounding::Single>(ctx, std::move(plan));
}

}  // namespace tickinfer::tfl::ops
