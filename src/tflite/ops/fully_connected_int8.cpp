// FULLY_CONNECTED with an int8 filter: full-integer (int8 in/out, int32 bias) and hybrid
// (float in/out, per-row dynamic input quantization). Interop facts, section 6.
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

#include "tflite/kernels/hybrid_epilogue.hpp"
#include "tflite/kernels/gemv_s8.hpp"
#include "tflite/kernels/quantize_rows.hpp"
#include "tflite/kernels/requant_scaled.hpp"
#include "tflite/ops/fc_sparse_choice.hpp"
#include "tflite/ops/fully_connected.hpp"

namespace tickinfer::tfl::ops::fc {
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

bool reaches_minus_128(const Tensor& w) {
  return kernels::s8_reaches_minus_128(reinterpret_cast<const int8_t*>(w.data.data()), w.data.size());
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
          acc += static_cast<int32_t>(w_[o * g_.depth + d]) * (static_cast<int32_t>(x[b * g_.depth + d]) + input_offset_);
        }
        if (bias_) acc += bias_[o];
        const size_t u = static_cast<size_t>(o);
        if (mode_ == FcRequant::Scaled) {
          y[b * g_.units + o] = kernels::requant_scaled_one(acc, scale_[u], out_zp_, lo_, hi_);
          continue;
        }
        acc = mode_ == FcRequant::Double ? multiply_by_quantized_multiplier<Rounding::Double>(acc, mult_[u], shift_[u])
                                         : multiply_by_quantized_multiplier<Rounding::Single>(acc, mult_[u], shift_[u]);
        acc += out_zp_;
        y[b * g_.units + o] = static_cast<int8_t>(std::clamp(acc, lo_, hi_));
      }
    }
  }
  std::string describe() const override { return "int8 fc reference"; }
  int64_t macs() const override { return int64_t{g_.batch} * g_.units * g_.depth; }

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
  std::vector<int8_t> packed_;
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

// Hybrid: per batch row, quantize the input (symmetric or asymmetric), s8 dot products, then
// out = bias + dot * (row_scale * filter_scale[o]) in float, then the fused activation.
// The integer dot products are exact in every kernel set, so the float arithmetic after them sees
// the same int32 values whichever runs.
class HybridFc final : public PreparedOp {
 public:
  HybridFc(const FcGeometry& g, const int8_t* w, const float* bias, const std::vector<float>& wscale,
           bool asymmetric, float lo, float hi, const kernels::S8Kernels& k, kernels::HybridEpilogueFn epilogue,
           kernels::QuantizeRowBodyFn row_body)
      : g_(g), bias_(bias), asymmetric_(asymmetric), lo_(lo), hi_(hi), k_(k), epilogue_(epilogue), row_body_(row_body) {
    stride_ = k.stride(g.depth);
    packed_.resize(kernels::s8_packed_bytes(g.units, g.depth));
    k.pack(w, g.units, g.depth, packed_.data());
    acc_.assign(static_cast<size_t>(kernels::s8_padded_rows(g.units)), 0);
    row_sums_.resize(static_cast<size_t>(g.units));
    kernels::row_sums_s8(w, g.units, g.depth, row_sums_.data());
    wscale_ = wscale;
    xq_.assign(static_cast<size_t>(stride_), 0);
  }
  void eval(const TensorMemory& mem) noexcept override {
    const float* x = mem.at<float>(g_.input);
    float* y = mem.at<float>(g_.output);
    const size_t n_in = static_cast<size_t>(g_.batch) * g_.depth;
    bool all_zero = true;  // TFLite skips the product for an all-zero input: output = bias
    for (size_t i = 0; i < n_in && all_zero; ++i) all_zero = x[i] == 0.0f;
    for (int b = 0; b < g_.batch; ++b) {
      float* yb = y + static_cast<size_t>(b) * g_.units;
      for (int o = 0; o < g_.units; ++o) yb[o] = bias_ ? bias_[o] : 0.0f;
      if (all_zero) continue;
      const float* xb = x + static_cast<size_t>(b) * g_.depth;
      float row_scale;
      int32_t zp = 0;
      if (asymmetric_) {
        kernels::quantize_row_asymmetric(row_body_, xb, g_.depth, xq_.data(), &row_scale, &zp);
      } else {
        row_scale = kernels::quantize_row_symmetric(row_body_, xb, g_.depth, xq_.data());
      }
      if (sparse_) {
        sparse_->gemv(sparse_->view, xq_.data(), acc_.data());
      } else {
        k_.gemv(packed_.data(), g_.units, stride_, xq_.data(), acc_.data());
      }
      if (sparse_in_file_) {
        sparse_file_epilogue(zp, row_scale, yb);
        continue;
      }
      kernels::HybridRow row{acc_.data(), asymmetric_ ? row_sums_.data() : nullptr, static_cast<float>(zp), row_scale,
                             wscale_.data(), lo_, hi_};
      epilogue_(row, g_.units, yb);
    }
    if (all_zero) {  // the bias rows were not clamped by the epilogue
      for (size_t i = 0; i < static_cast<size_t>(g_.batch) * g_.units; ++i) y[i] = std::min(std::max(y[i], lo_), hi_);
    }
  }
  // A filter the file stores sparse runs TFLite's sparse hybrid kernel (EvalSparseHybridImpl),
  // whose float steps differ from the dense one's: the zero-point term leaves the output first,
  // as scale * row sum in float, then each row's integer dot product is scaled in.
  void set_sparse_in_file(bool per_channel) {
    sparse_in_file_ = true;
    per_channel_ = per_channel;
  }
  std::string describe() const override {
    return std::string("hybrid fc ") + (asymmetric_ ? "asymmetric " : "symmetric ") + k_.name +
           (sparse_in_file_ ? ", TFLite's sparse-kernel epilogue" : "") +
           (note_.empty() ? "" : "; " + note_);
  }
  // As Int8FcFast's: only the integer dot products differ, so only they are timed.
  void consider_sparse(const PrepareContext& ctx, const int8_t* w, bool reaches_minus_128) {
    std::vector<int8_t> xpad(static_cast<size_t>(stride_), 0);
    std::vector<int32_t> acc(acc_.size() + kernels::kS8SparseRows);
    sparse_ = choose_sparse_fc(
        ctx.options.sparse, ctx.isa, reaches_minus_128, w, g_.units, g_.depth,
        [&](const int8_t* x) {
          std::memcpy(xpad.data(), x, static_cast<size_t>(g_.depth));
          k_.gemv(packed_.data(), g_.units, stride_, xpad.data(), acc.data());
        },
        [&](const SparseFc& s, const int8_t* x) { s.gemv(s.view, x, acc.data()); }, note_);
    if (sparse_ && acc_.size() < sparse_->acc_size()) acc_.resize(sparse_->acc_size());
  }
  int64_t macs() const override { return int64_t{g_.batch} * g_.units * g_.depth; }

 private:
  FcGeometry g_;
  const float* bias_;
  bool asymmetric_;
  float lo_, hi_;
  const kernels::S8Kernels& k_;
  kernels::HybridEpilogueFn epilogue_;
  kernels::QuantizeRowBodyFn row_body_;
  int stride_ = 0;
  std::vector<int8_t> packed_;  // in k_'s layout
  std::vector<int32_t> row_sums_;
  std::vector<float> wscale_;
  std::vector<int8_t> xq_;
  std::vector<int32_t> acc_;
  std::unique_ptr<SparseFc> sparse_;
  std::string note_;
  bool sparse_in_file_ = false, per_channel_ = false;

  void sparse_file_epilogue(int32_t zp, float row_scale, float* yb) const noexcept {
    const float sf = per_channel_ ? row_scale : row_scale * wscale_[0];
    if (asymmetric_) {
      const float scaled_zp = sf * static_cast<float>(zp);
      for (int o = 0; o < g_.units; ++o) {
        float scale = scaled_zp;
        if (per_channel_) scale *= wscale_[static_cast<size_t>(o)];
        yb[o] -= scale * static_cast<float>(row_sums_[static_cast<size_t>(o)]);
      }
    }
    for (int o = 0; o < g_.units; ++o) {
      float scale = sf;
      if (per_channel_) scale *= wscale_[static_cast<size_t>(o)];
      yb[o] += static_cast<float>(acc_[static_cast<size_t>(o)]) * scale;
      yb[o] = std::min(std::max(yb[o], lo_), hi_);
    }
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

std::unique_ptr<PreparedOp> make_hybrid(const PrepareContext& ctx, const FcGeometry& g) {
  const Tensor& w = ctx.input(1);
  check_filter_quant(ctx, w, g.units);
  std::vector<float> wscale(static_cast<size_t>(g.units));
  for (int o = 0; o < g.units; ++o) wscale[static_cast<size_t>(o)] = w.quant.per_axis() ? w.quant.scale[static_cast<size_t>(o)] : w.quant.scale[0];
  float lo, hi;
  float_activation_range(ctx, ctx.op.options.activation, &lo, &hi);
  const float* bias = g.bias >= 0 ? const_data<float>(ctx.input(2)) : nullptr;
  const bool m128 = reaches_minus_128(w);
  const kernels::S8Kernels& k = kernels::s8_kernels(ctx.isa, m128);
  auto fc = std::make_unique<HybridFc>(g, const_data<int8_t>(w), bias, wscale, ctx.op.options.asymmetric_quantize_inputs,
                                       lo, hi, k, kernels::hybrid_epilogue(ctx.isa), kernels::quantize_row_body(ctx.isa));
  fc->consider_sparse(ctx, const_data<int8_t>(w), m128);
  if (w.sparse_in_file) fc->set_sparse_in_file(w.quant.per_axis());
  return fc;
}

}  // namespace tickinfer::tfl::ops::fc
