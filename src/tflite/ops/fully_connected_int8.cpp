// FULLY_CONNECTED with an int8 filter, full integer (int8 in/out, int32 bias); the hybrid form
// (float in/out) is fully_connected_hybrid.cpp. Interop facts, section 6.
//
// Two int8 implementations: the reference (isa "scalar") is TFLite's loop as written,
//   acc = sum_d w[o][d] * (x[d] + input_offset) + bias[o]; requantize; clamp;
// where "requantize" is TFLite's: since 2.20 the reference kernel scales in double precision
// (kernels/requant_scaled.hpp) for a dense filter, while a filter the file stores sparse runs its
// block-sparse kernel, which multiplies by a fixed-point multiplier and rounds twice (FcRequant).
// the fast one packs the filter for its kernel set (tflite/kernels/gemv_s8.hpp) and folds
//   bias[o] + input_offset * rowsum(w[o]) into one constant per unit, so the kernel is a plain
// s8 x s8 dot product; with single rounding on AVX2 the requantization runs on each block of 8
// sums in registers. Both are exact in int32, so they agree bit for bit.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/aligned_allocator.hpp"
#include "tflite/kernels/gemv_s8.hpp"
#include "tflite/kernels/requant_scaled.hpp"
#include "tflite/ops/fc_sparse_choice.hpp"
#include "tflite/ops/fully_connected.hpp"

namespace tickinfer::tfl::ops::fc {
// Filter scales checks shared by int8 and hybrid: symmetric int8, per tensor or one per unit.
void check_filter_quant(const PrepareContext& ctx, const Tensor& w, int units) {
  if (w.quant.empty()) ctx.fail("filter '" + w.name + "' has no quantization parameters");
  if (w.quant.per_axis()) {
    if (w.quant.axis != 0 || static_cast<int>(w.quant.scale.size()) != units) {
      ctx.fail("filter '" + w.name + "' per-channel quantization must have one scale per unit on axis 0");
    }
  }
  for (int64_t zp : w.quant.zero_point) {
    if (zp != 0) ctx.fail("filter '" + w.name + "' must be symmetric (zero point 0), got " + std::to_string(zp));
  }
  for (float s : w.quant.scale) {
    if (!(s > 0.0f) || !std::isfinite(s)) ctx.fail("filter '" + w.name + "' has a non-positive scale");
  }
}

bool reaches_minus_128(const Tensor& w) {
  return kernels::s8_reaches_minus_128(reinterpret_cast<const int8_t*>(w.data.data()), w.data.size());
}

namespace {

// Per-unit multiplier/shift from the filter's per-tensor or per-channel scales.
void filter_multipliers(const PrepareContext& ctx, const Tensor& w, int units, float in_scale, float out_scale,
                        std::vector<int32_t>* mult, std::vector<int32_t>* shift) {
  mult->resize(static_cast<size_t>(units));
  shift->resize(static_cast<size_t>(units));
  const bool per_channel = w.quant.per_axis();
  for (int o = 0; o < units; ++o) {
    double m;
    if (per_channel) {
      m = static_cast<double>(in_scale) * static_cast<double>(w.quant.scale[static_cast<size_t>(o)]) /
          static_cast<double>(out_scale);
    } else {
      // GetQuantizedConvolutionMultipler: the scale product is taken in float.
      m = static_cast<double>(in_scale * w.quant.scale[0]) / static_cast<double>(out_scale);
    }
    const QuantizedMultiplier q = quantize_multiplier(m, rounding(ctx));
    (*mult)[static_cast<size_t>(o)] = q.multiplier;
    (*shift)[static_cast<size_t>(o)] = q.shift;
  }
}

// How an int8 FULLY_CONNECTED requantizes: what InterpreterOptions asks for, which with the
// PyPI interpreters' mix (tflite_mixed_rounding) is TFLite 2.20's double-precision scaling for a
// dense filter and the fixed-point double rounding of the sparse kernel for a sparse one
// (op_support.hpp, rounding()); a uniform build rounds as `rounding` says.
enum class FcRequant : uint8_t { Double, Single, Scaled };

FcRequant fc_requant(const PrepareContext& ctx) {
  if (rounding(ctx) == Rounding::Double) return FcRequant::Double;
  return ctx.options.tflite_mixed_rounding ? FcRequant::Scaled : FcRequant::Single;
}

// The per-unit scales of FcRequant::Scaled, formed as TFLite's reference kernel forms them.
std::vector<double> filter_scales(const Tensor& w, int units, float in_scale, float out_scale) {
  std::vector<double> out(static_cast<size_t>(units));
  for (int o = 0; o < units; ++o) {
    const float sw = w.quant.per_axis() ? w.quant.scale[static_cast<size_t>(o)] : w.quant.scale[0];
    out[static_cast<size_t>(o)] =
        static_cast<double>(in_scale) * static_cast<double>(sw) / static_cast<double>(out_scale);
  }
  return out;
}


class Int8FcReference final : public PreparedOp {
 public:
  Int8FcReference(const FcGeometry& g, const int8_t* w, const int32_t* bias, std::vector<int32_t> mult,
                  std::vector<int32_t> shift, std::vector<double> scale, FcRequant mode, int32_t input_offset,
                  int32_t out_zp, int32_t lo, int32_t hi)
      : g_(g), w_(w), bias_(bias), mult_(std::move(mult)), shift_(std::move(shift)), scale_(std::move(scale)),
        mode_(mode), input_offset_(input_offset), out_zp_(out_zp), lo_(lo), hi_(hi) {}
  void eval(const TensorMemory& mem) noexcept override {
    const int8_t* x = mem.at<int8_t>(g_.input);
    int8_t* y = mem.at<int8_t>(g_.output);
    for (int b = 0; b < g_.batch; ++b) {
      for (int o = 0; o < g_.units; ++o) {
        int32_t acc = 0;
        for (int d = 0; d < g_.depth; ++d) {
          acc = wrapping_add(acc, static_cast<int32_t>(w_[o * g_.depth + d]) * (static_cast<int32_t>(x[b * g_.depth + d]) + input_offset_));
        }
        if (bias_) acc = wrapping_add(acc, bias_[o]);
        const size_t u = static_cast<size_t>(o);
        if (mode_ == FcRequant::Scaled) {
          y[b * g_.units + o] = kernels::requant_scaled_one(acc, scale_[u], out_zp_, lo_, hi_);
          continue;
        }
        acc = mode_ == FcRequant::Double ? multiply_by_quantized_multiplier<Rounding::Double>(acc, mult_[u], shift_[u])
                                         : multiply_by_quantized_multiplier<Rounding::Single>(acc, mult_[u], shift_[u]);
        acc = wrapping_add(acc, out_zp_);
        y[b * g_.units + o] = static_cast<int8_t>(std::clamp(acc, lo_, hi_));
      }
    }
  }
  std::string describe() const override { return "int8 fc reference"; }
  int64_t macs() const override { return int64_t{g_.batch} * g_.units * g_.depth; }
  bool integer_form(std::vector<IntegerForm>* forms) const override {
    IntegerForm* f = &forms->emplace_back();
    f->kind = IntegerKind::FullyConnected;
    f->inputs = {g_.input};
    f->output = g_.output;
    f->count = int64_t{g_.batch} * g_.units;
    requant_form(mode_ == FcRequant::Scaled   ? RequantForm::Scaled
                 : mode_ == FcRequant::Double ? RequantForm::Double
                                              : RequantForm::Single,
                 mult_, shift_, input_offset_, out_zp_, lo_, hi_, f);
    f->scale = scale_;
    f->weights = w_;
    f->weight_count = int64_t{g_.units} * g_.depth;
    f->bias = bias_;
    f->batch = g_.batch;
    f->units = g_.units;
    f->depth = g_.depth;
    return true;
  }

 private:
  FcGeometry g_;
  const int8_t* w_;
  const int32_t* bias_;
  std::vector<int32_t> mult_, shift_;
  std::vector<double> scale_;
  FcRequant mode_;
  int32_t input_offset_, out_zp_, lo_, hi_;
};

class Int8FcFast final : public PreparedOp {
 public:
  Int8FcFast(const FcGeometry& g, const int8_t* w, const int32_t* bias, std::vector<int32_t> mult,
             std::vector<int32_t> shift, std::vector<double> scale, int32_t input_offset, int32_t out_zp, int32_t lo,
             int32_t hi, const kernels::S8Kernels& k, FcRequant mode)
      : g_(g), k_(k), requant_(k.requant(mode == FcRequant::Double ? Rounding::Double : Rounding::Single)),
        fused_(mode == FcRequant::Single ? k.gemv_requant_single : nullptr),
        scaled_(mode == FcRequant::Scaled ? kernels::requant_scaled_for(k.isa) : nullptr), mult_(std::move(mult)),
        shift_(std::move(shift)), scale_(std::move(scale)) {
    stride_ = k.stride(g.depth);
    packed_.resize(kernels::s8_packed_bytes(g.units, g.depth));
    k.pack(w, g.units, g.depth, packed_.data());
    std::vector<int32_t> sums(static_cast<size_t>(g.units));
    kernels::row_sums_s8(w, g.units, g.depth, sums.data());
    bias_eff_.resize(static_cast<size_t>(g.units));
    for (int o = 0; o < g.units; ++o) {
      const uint32_t b = bias ? static_cast<uint32_t>(bias[o]) : 0u;
      bias_eff_[static_cast<size_t>(o)] =
          static_cast<int32_t>(b + static_cast<uint32_t>(input_offset) * static_cast<uint32_t>(sums[static_cast<size_t>(o)]));
    }
    xpad_.assign(static_cast<size_t>(stride_), 0);
    acc_.assign(static_cast<size_t>(kernels::s8_padded_rows(g.units)), 0);
    params_.bias = bias_eff_.data();
    params_.multiplier = mult_.data();
    params_.shift = shift_.data();
    params_.output_zero_point = out_zp;
    params_.act_min = lo;
    params_.act_max = hi;
    scaled_q_ = {bias_eff_.data(), scale_.data(), out_zp, lo, hi};
    if (fused_) {
      fused_q_ = kernels::pack_block_requant_single(g.units, bias_eff_.data(), mult_.data(), shift_.data(), out_zp, lo, hi);
    }
  }
  void eval(const TensorMemory& mem) noexcept override {
    const int8_t* x = mem.at<int8_t>(g_.input);
    int8_t* y = mem.at<int8_t>(g_.output);
    for (int b = 0; b < g_.batch; ++b) {
      const int8_t* xb = x + static_cast<size_t>(b) * g_.depth;
      int8_t* yb = y + static_cast<size_t>(b) * g_.units;
      if (sparse_) {
        sparse_row(*sparse_, xb, yb);
      } else {
        dense_row(xb, yb);
      }
    }
  }
  // The block-sparse form instead of the packed one where the filter is pruned enough for it to
  // pay (fc_sparse_choice.hpp); the same requantization either way, so the same bytes out.
  void consider_sparse(const PrepareContext& ctx, const int8_t* w, bool reaches_minus_128) {
    std::vector<int8_t> y(static_cast<size_t>(g_.units));
    sparse_ = choose_sparse_fc(
        ctx.options.sparse, ctx.isa, reaches_minus_128, w, g_.units, g_.depth,
        [&](const int8_t* x) { dense_row(x, y.data()); },
        [&](const SparseFc& s, const int8_t* x) {
          sacc_.resize(s.acc_size());
          sparse_row(s, x, y.data());
        },
        note_);
    if (sparse_) sacc_.resize(sparse_->acc_size());
  }
  std::string describe() const override {
    return std::string("int8 fc packed ") + k_.name + (scaled_ ? ", double-precision requantization" : "") +
           (fused_ ? fused_q_.high_word ? ", fused single-rounding requantization (high word)"
                                        : ", fused single-rounding requantization"
                   : "") +
           (note_.empty() ? "" : "; " + note_);
  }
  int64_t macs() const override { return int64_t{g_.batch} * g_.units * g_.depth; }

 private:
  FcGeometry g_;
  const kernels::S8Kernels& k_;
  kernels::RequantS8Fn requant_;
  kernels::GemvRequantSingleFn fused_;
  kernels::RequantScaledFn scaled_;  // FcRequant::Scaled: in place of requant_
  kernels::BlockRequantSingle fused_q_;
  kernels::ScaledRequant scaled_q_;
  int stride_ = 0;
  tickinfer::kernels::AlignedVector<int8_t> packed_;
  std::vector<int32_t> bias_eff_, mult_, shift_;
  std::vector<double> scale_;
  std::vector<int8_t> xpad_;
  std::vector<int32_t> acc_;
  kernels::RequantParams params_;
  std::unique_ptr<SparseFc> sparse_;
  std::vector<int32_t> sacc_;  // the sparse kernel's sums: whole groups of 16 rows
  std::string note_;           // the dense/sparse decision, for describe()

  void dense_row(const int8_t* xb, int8_t* yb) noexcept {
    // The kernel reads `stride_` bytes of x: a row that ends short of that is copied into the
    // zero-padded scratch first.
    if (g_.depth != stride_) {
      std::memcpy(xpad_.data(), xb, static_cast<size_t>(g_.depth));
      xb = xpad_.data();
    }
    if (fused_) {
      fused_(packed_.data(), g_.units, stride_, xb, fused_q_, yb);
    } else {
      k_.gemv(packed_.data(), g_.units, stride_, xb, acc_.data());
      requant_row(acc_.data(), yb);
    }
  }
  void requant_row(const int32_t* acc, int8_t* yb) noexcept {
    if (scaled_) {
      scaled_(acc, g_.units, scaled_q_, yb);
    } else {
      requant_(acc, g_.units, params_, yb);
    }
  }
  void sparse_row(const SparseFc& s, const int8_t* xb, int8_t* yb) noexcept {
    if (fused_ && s.fused) return s.fused(s.view, xb, fused_q_, yb);
    s.gemv(s.view, xb, sacc_.data());
    requant_row(sacc_.data(), yb);
  }
};

}  // namespace

std::unique_ptr<PreparedOp> make_int8(const PrepareContext& ctx, const FcGeometry& g) {
  const Tensor& in = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& out = ctx.output(0);
  const AffineParams ip = per_tensor_params(ctx, in, "input");
  const AffineParams op = per_tensor_params(ctx, out, "output");
  check_filter_quant(ctx, w, g.units);
  const int32_t* bias = nullptr;
  if (g.bias >= 0) {
    const Tensor& b = ctx.input(2);
    require_type(ctx, b, "bias", {DType::I32});
    bias = const_data<int32_t>(b);
  }
  int32_t lo, hi;
  int8_activation_range(ctx, ctx.op.options.activation, op, &lo, &hi);
  std::vector<int32_t> mult, shift;
  filter_multipliers(ctx, w, g.units, ip.scale, op.scale, &mult, &shift);
  const int32_t input_offset = -ip.zero_point;
  const FcRequant mode = fc_requant(ctx);
  std::vector<double> scale = filter_scales(w, g.units, ip.scale, op.scale);
  if (ctx.isa == ::tickinfer::kernels::Isa::Scalar) {
    return std::make_unique<Int8FcReference>(g, const_data<int8_t>(w), bias, std::move(mult), std::move(shift),
                                             std::move(scale), mode, input_offset, op.zero_point, lo, hi);
  }
  const bool m128 = reaches_minus_128(w);
  const kernels::S8Kernels& k = kernels::s8_kernels(ctx.isa, m128);
  auto fc = std::make_unique<Int8FcFast>(g, const_data<int8_t>(w), bias, std::move(mult), std::move(shift),
                                         std::move(scale), input_offset, op.zero_point, lo, hi, k, mode);
  fc->consider_sparse(ctx, const_data<int8_t>(w), m128);
  return fc;
}

}  // namespace tickinfer::tfl::ops::fc
