// DEPTHWISE_CONV_2D on NHWC with filter [1, kh, kw, out_c], out_c = in_c * depth_multiplier,
// output channel oc reading input channel oc / depth_multiplier (TFLite depthwise_conv.cc and
// the reference kernels in reference/depthwiseconv_float.h, integer_ops/depthwise_conv.h and
// integer_ops/depthwise_conv_hybrid.h):
//  float:  total = sum over (ky, kx) inside the input of in * w, ky outer; + bias; clamp.
//  int8:   acc = sum w * (in - in_zp) + bias, requantized per channel by in_scale * w_scale[oc] /
//          out_scale with TFLite's fixed-point multiplier (DepthwiseConvPerChannel), + out_zp.
//  hybrid: float in/out, int8 filter with per-channel scales: each batch's input quantized
//          asymmetrically (scale s, zero point zp), acc = sum w * (q - zp), then
//          acc * (w_scale[oc] * s) + bias in float, then the fused activation.
// Taps outside the input contribute nothing. Plain loops: the book models' separable stacks get
// their fast kernels with them; these are the reference every later kernel is tested against.
#include <algorithm>
#include <vector>

#include "kernels/aligned_allocator.hpp"
#include "tflite/kernels/quantize_rows.hpp"
#include "tflite/ops/conv_filter_quant.hpp"
#include "tflite/ops/ops.hpp"
#include "tflite/ops/window.hpp"

namespace tickinfer::tfl::ops {
namespace {

struct DepthwiseShape {
  Window w;
  int input = -1, output = -1, multiplier = 1;
};

// Calls f(oc, input channel, tap weight index, input element index) for every tap of output pixel
// (b, oy, ox) that falls inside the input, ky outer, then kx, for each output channel.
template <class F>
inline void for_each_tap(const DepthwiseShape& s, int b, int oy, int ox, int oc, F f) noexcept {
  const Window& w = s.w;
  const int y0 = oy * w.stride_h - w.pad_h, x0 = ox * w.stride_w - w.pad_w;
  const int ic = oc / s.multiplier;
  for (int ky = 0; ky < w.filter_h; ++ky) {
    const int iy = y0 + ky * w.dil_h;
    if (iy < 0 || iy >= w.in_h) continue;
    for (int kx = 0; kx < w.filter_w; ++kx) {
      const int ix = x0 + kx * w.dil_w;
      if (ix < 0 || ix >= w.in_w) continue;
      f((static_cast<int64_t>(ky) * w.filter_w + kx) * w.out_c + oc,
        ((static_cast<int64_t>(b) * w.in_h + iy) * w.in_w + ix) * w.in_c + ic);
    }
  }
}

inline int64_t out_index(const Window& w, int b, int oy, int ox, int oc) {
  return ((static_cast<int64_t>(b) * w.out_h + oy) * w.out_w + ox) * w.out_c + oc;
}

int64_t depthwise_macs(const Window& w) {
  return int64_t{w.batch} * w.out_h * w.out_w * w.out_c * w.filter_h * w.filter_w;
}

class FloatDepthwise final : public PreparedOp {
 public:
  FloatDepthwise(const DepthwiseShape& s, const float* filter, const float* bias, float lo, float hi)
      : s_(s), filter_(filter), bias_(bias), lo_(lo), hi_(hi) {}
  void eval(const TensorMemory& mem) noexcept override {
    const Window& w = s_.w;
    const float* x = mem.at<float>(s_.input);
    float* y = mem.at<float>(s_.output);
    for (int b = 0; b < w.batch; ++b)
      for (int oy = 0; oy < w.out_h; ++oy)
        for (int ox = 0; ox < w.out_w; ++ox)
          for (int oc = 0; oc < w.out_c; ++oc) {
            float total = 0.0f;
            for_each_tap(s_, b, oy, ox, oc, [&](int64_t k, int64_t i) { total += x[i] * filter_[k]; });
            const float v = total + (bias_ ? bias_[oc] : 0.0f);
            y[out_index(w, b, oy, ox, oc)] = std::min(std::max(v, lo_), hi_);
          }
  }
  std::string describe() const override { return "float depthwise conv2d reference"; }
  int64_t macs() const override { return depthwise_macs(s_.w); }

 private:
  DepthwiseShape s_;
  const float* filter_;
  const float* bias_;
  float lo_, hi_;
};

template <Rounding R>
class Int8Depthwise final : public PreparedOp {
 public:
  Int8Depthwise(const DepthwiseShape& s, const int8_t* filter, const int32_t* bias, std::vector<int32_t> mult,
                std::vector<int32_t> shift, int32_t in_offset, int32_t out_zp, int32_t lo, int32_t hi)
      : s_(s), filter_(filter), bias_(bias), mult_(std::move(mult)), shift_(std::move(shift)), in_offset_(in_offset),
        out_zp_(out_zp), lo_(lo), hi_(hi) {}
  void eval(const TensorMemory& mem) noexcept override {
    const Window& w = s_.w;
    const int8_t* x = mem.at<int8_t>(s_.input);
    int8_t* y = mem.at<int8_t>(s_.output);
    for (int b = 0; b < w.batch; ++b)
      for (int oy = 0; oy < w.out_h; ++oy)
        for (int ox = 0; ox < w.out_w; ++ox)
          for (int oc = 0; oc < w.out_c; ++oc) {
            int32_t acc = 0;
            for_each_tap(s_, b, oy, ox, oc, [&](int64_t k, int64_t i) {
              acc = wrapping_add(acc, static_cast<int32_t>(filter_[k]) * (static_cast<int32_t>(x[i]) + in_offset_));
            });
            if (bias_) acc = wrapping_add(acc, bias_[oc]);
            const size_t c = static_cast<size_t>(oc);
            acc = wrapping_add(multiply_by_quantized_multiplier<R>(acc, mult_[c], shift_[c]), out_zp_);
            y[out_index(w, b, oy, ox, oc)] = static_cast<int8_t>(std::min(std::max(acc, lo_), hi_));
          }
  }
  std::string describe() const override { return "int8 depthwise conv2d reference"; }
  bool integer_form(std::vector<IntegerForm>* forms) const override {
    const Window& w = s_.w;
    conv_integer_form(IntegerKind::DepthwiseConv2D, w, s_.input, s_.output, R, mult_, shift_, in_offset_, out_zp_, lo_,
                      hi_, filter_, int64_t{w.filter_h} * w.filter_w * w.out_c, bias_, forms)
        .depth_multiplier = s_.multiplier;
    return true;
  }
  int64_t macs() const override { return depthwise_macs(s_.w); }

 private:
  DepthwiseShape s_;
  const int8_t* filter_;
  const int32_t* bias_;
  std::vector<int32_t> mult_, shift_;
  int32_t in_offset_, out_zp_, lo_, hi_;
};

class HybridDepthwise final : public PreparedOp {
 public:
  HybridDepthwise(const DepthwiseShape& s, const int8_t* filter, const float* bias, std::vector<float> wscale, float lo,
                  float hi, const kernels::QuantizeRowKernels* row_quant)
      : s_(s), filter_(filter), bias_(bias), wscale_(std::move(wscale)), lo_(lo), hi_(hi), row_quant_(row_quant) {
    batch_size_ = s.w.in_h * s.w.in_w * s.w.in_c;
    xq_.assign(static_cast<size_t>(s.w.batch) * static_cast<size_t>(batch_size_), 0);
  }
  void eval(const TensorMemory& mem) noexcept override {
    const Window& w = s_.w;
    const float* x = mem.at<float>(s_.input);
    float* y = mem.at<float>(s_.output);
    for (int b = 0; b < w.batch; ++b) {
      const int64_t off = static_cast<int64_t>(b) * batch_size_;
      float scale;
      int32_t zp = 0;
      kernels::quantize_row_asymmetric(*row_quant_, x + off, batch_size_, xq_.data() + off, &scale, &zp);
      for (int oy = 0; oy < w.out_h; ++oy)
        for (int ox = 0; ox < w.out_w; ++ox)
          for (int oc = 0; oc < w.out_c; ++oc) {
            int32_t acc = 0;
            for_each_tap(s_, b, oy, ox, oc, [&](int64_t k, int64_t i) {
              acc = wrapping_add(acc, static_cast<int32_t>(filter_[k]) * (static_cast<int32_t>(xq_[static_cast<size_t>(i)]) - zp));
            });
            float v = static_cast<float>(acc) * (wscale_[static_cast<size_t>(oc)] * scale);
            if (bias_) v += bias_[oc];
            y[out_index(w, b, oy, ox, oc)] = std::min(std::max(v, lo_), hi_);
          }
    }
  }
  std::string describe() const override { return "hybrid depthwise conv2d reference (per-channel asymmetric)"; }
  int64_t macs() const override { return depthwise_macs(s_.w); }

 private:
  DepthwiseShape s_;
  const int8_t* filter_;
  const float* bias_;
  std::vector<float> wscale_;
  float lo_, hi_;
  const kernels::QuantizeRowKernels* row_quant_;
  int batch_size_ = 0;
  tickinfer::kernels::AlignedVector<int8_t> xq_;
};

}  // namespace

std::unique_ptr<PreparedOp> prepare_depthwise_conv2d(const PrepareContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& f = ctx.input(1);
  const Tensor& out = ctx.output(0);
  require_type(ctx, in, "input", {DType::F32, DType::I8});
  require_type(ctx, f, "filter", {DType::F32, DType::I8});
  if (f.shape.size() != 4 || f.shape[0] != 1) {
    ctx.fail("filter '" + f.name + "' must be 4-D [1, kh, kw, out_c], got " + shape_str(f.shape));
  }
  require_constant(ctx, f, "filter");
  DepthwiseShape s;
  s.w = make_window(ctx, in, out, f.shape[1], f.shape[2], true);
  s.input = ctx.input_index(0);
  s.output = ctx.output_index(0);
  s.multiplier = ctx.op.options.depth_multiplier;
  if (s.w.in_c <= 0 || f.shape[3] != s.w.out_c || s.w.out_c != s.w.in_c * s.multiplier) {
    ctx.fail("filter '" + f.name + "' " + shape_str(f.shape) + " does not give " + std::to_string(s.w.in_c) +
             " input channels x depth_multiplier " + std::to_string(s.multiplier) + " = the output's " +
             std::to_string(s.w.out_c));
  }
  const Tensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  if (bias) {
    require_constant(ctx, *bias, "bias");
    if (num_elements(*bias) != s.w.out_c) ctx.fail("bias '" + bias->name + "' must hold one value per output channel");
  }
  const FusedActivation act = ctx.op.options.activation;
  if (in.type == DType::F32) {
    require_type(ctx, out, "output", {DType::F32});
    if (bias) require_type(ctx, *bias, "bias", {DType::F32});
    const float* b = bias ? const_data<float>(*bias) : nullptr;
    float lo, hi;
    float_activation_range(ctx, act, &lo, &hi);
    if (f.type == DType::F32) return std::make_unique<FloatDepthwise>(s, const_data<float>(f), b, lo, hi);
    check_conv_filter_scales(ctx, f, s.w.out_c, 3);
    std::vector<float> wscale(static_cast<size_t>(s.w.out_c));
    for (int oc = 0; oc < s.w.out_c; ++oc) wscale[static_cast<size_t>(oc)] = conv_channel_scale(f, oc);
    return std::make_unique<HybridDepthwise>(s, const_data<int8_t>(f), b, std::move(wscale), lo, hi,
                                             &kernels::quantize_row_kernels(ctx.isa));
  }
  require_type(ctx, f, "filter", {DType::I8});
  require_type(ctx, out, "output", {DType::I8});
  if (bias) require_type(ctx, *bias, "bias", {DType::I32});
  check_conv_filter_scales(ctx, f, s.w.out_c, 3);
  const AffineParams ip = per_tensor_params(ctx, in, "input");
  const AffineParams op = per_tensor_params(ctx, out, "output");
  int32_t lo, hi;
  int8_activation_range(ctx, act, op, &lo, &hi);
  ChannelMultipliers cm = conv_channel_multipliers(f, s.w.out_c, ip.scale, op.scale, rounding(ctx));
  std::vector<int32_t> mult = std::move(cm.multiplier), shift = std::move(cm.shift);
  const int32_t* b = bias ? const_data<int32_t>(*bias) : nullptr;
  if (rounding(ctx) == Rounding::Double) {
    return std::make_unique<Int8Depthwise<Rounding::Double>>(s, const_data<int8_t>(f), b, std::move(mult),
                                                             std::move(shift), -ip.zero_point, op.zero_point, lo, hi);
  }
  return std::make_unique<Int8Depthwise<Rounding::Single>>(s, const_data<int8_t>(f), b, std::move(mult),
                                                           std::move(shift), -ip.zero_point, op.zero_point, lo, hi);
}

}  // namespace tickinfer::tfl::ops
