// CONV_2D on NHWC with filter [out_c, kh, kw, in_c] (TFLite conv.cc and reference conv.h):
//  float:  sum over (ky, kx, ic) of in * w inside the input, + bias, fused activation clamp.
//  int8:   per output channel, acc = sum w * (in - in_zp) + bias, requantized by
//          in_scale * w_scale[oc] / out_scale (double), + out_zp, clamped (ConvPerChannel).
//  hybrid: float in/out, int8 filter. With per-channel scales that differ, each batch's input is
//          quantized asymmetrically (HybridConvPerChannel): out = sum w * (q - zp) * w_scale[oc]
//          * s + bias; otherwise symmetrically, with s folded with the one filter scale
//          (HybridConv). Then the fused activation.
// Taps outside the input contribute nothing. The fast float kernel gathers each output pixel's
// patch (outside taps as 0.0f, which adds exactly nothing) and runs the engine's float gemv over
// the filter packed once as a [patch x out_c] matrix, bias as the gemv's init; it differs from
// the reference loop only in fp32 summation order. On x86 the int8/hybrid kernels are implicit
// GEMMs (conv2d_implicit_gemm.hpp: AVX-512 VNNI, or AVX2), which read the patches where they lie;
// elsewhere (the portable set) they gather the patches of 4 output pixels at a time (outside taps
// filled with the input zero point, so they add exactly 0 after the offset) and multiply them by
// FULLY_CONNECTED's packed s8 filter in one gemm call, which loads each weight once for several
// pixels. All integer sums are exact, so every form agrees with the plain loops bit for bit.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/aligned_allocator.hpp"
#include "kernels/kernel_set.hpp"
#include "tflite/kernels/gemv_s8.hpp"
#include "tflite/kernels/hybrid_epilogue.hpp"
#include "tflite/kernels/leaky_relu.hpp"
#include "tflite/kernels/quantize_rows.hpp"
#include "tflite/ops/conv_filter_quant.hpp"
#include "tflite/ops/conv_patch.hpp"
#include "tflite/ops/conv2d_implicit_gemm.hpp"
#include "tflite/ops/ops.hpp"
#include "tflite/ops/window.hpp"

namespace tickinfer::tfl::ops {
namespace {

class FloatConv final : public PreparedOp {
 public:
  FloatConv(const ConvShape& s, const float* filter, const float* bias, float lo, float hi)
      : s_(s), filter_(filter), bias_(bias), lo_(lo), hi_(hi), patch_(static_cast<size_t>(s.patch)) {}
  void eval(const TensorMemory& mem) noexcept override {
    const Window& w = s_.w;
    const float* x = mem.at<float>(s_.input);
    float* y = mem.at<float>(s_.output);
    // Outside taps are gathered as 0: adding 0 * w leaves the reference's sum unchanged.
    for (int b = 0; b < w.batch; ++b)
      for (int oy = 0; oy < w.out_h; ++oy)
        for (int ox = 0; ox < w.out_w; ++ox) {
          gather_patch(w, x, b, oy, ox, 0.0f, patch_.data());
          float* out = y + out_offset(w, b, oy, ox);
          for (int oc = 0; oc < w.out_c; ++oc) {
            const float* row = filter_ + static_cast<int64_t>(oc) * s_.patch;
            float total = 0.0f;
            for (int k = 0; k < s_.patch; ++k) total += patch_[static_cast<size_t>(k)] * row[k];
            out[oc] = std::min(std::max(total + (bias_ ? bias_[oc] : 0.0f), lo_), hi_);
          }
          if (s_.leaky) kernels::leaky_relu_scalar(out, out, w.out_c, s_.alpha);
        }
  }
  std::string describe() const override { return std::string("float conv2d reference") + fused_note(s_); }
  int64_t macs() const override {
    return int64_t{s_.w.batch} * s_.w.out_h * s_.w.out_w * s_.w.out_c * s_.patch;
  }

 private:
  ConvShape s_;
  const float* filter_;
  const float* bias_;
  float lo_, hi_;
  std::vector<float> patch_;
};

// Float conv as one gemv per output pixel (see the top of the file); isa other than "scalar".
// With the set's gemm4_sequential (avx2 and avx512 sets, out_c > kDotMaxN) four consecutive
// pixels' patches go through one 4-row product, so each weight vector loaded serves four pixels;
// its sums round exactly like the reference loop, so this path equals FloatConv bit for bit. A
// last group of fewer than four pixels goes through it as that many rows.
class FloatConvGemv final : public PreparedOp {
  static constexpr int kRows = ::tickinfer::kernels::kGemm4Rows;

 public:
  FloatConvGemv(const ConvShape& s, const float* filter, const float* bias, float lo, float hi,
                const ::tickinfer::kernels::KernelSet& ks)
      : s_(s), lo_(lo), hi_(hi), ks_(ks), leaky_(kernels::leaky_relu(ks.isa)),
        gemm4_(::tickinfer::kernels::is_dot_form(s.w.out_c) ? nullptr : ks.gemm4_sequential),
        direct_(gemm4_ && patches_in_place(s.w)),
        patch_(static_cast<size_t>(s.patch) * kRows) {
    const int K = s.patch, N = s.w.out_c;
    std::vector<float> wt(static_cast<size_t>(K) * N);  // W[k][oc] = filter[oc][k]
    for (int oc = 0; oc < N; ++oc)
      for (int k = 0; k < K; ++k) wt[static_cast<size_t>(k) * N + oc] = filter[static_cast<size_t>(oc) * K + k];
    packed_.resize(::tickinfer::kernels::packed_floats(K, N));
    ::tickinfer::kernels::pack_weights(wt.data(), K, N, packed_.data());
    if (bias) bias_.assign(bias, bias + N);
  }
  void eval(const TensorMemory& mem) noexcept override {
    const Window& w = s_.w;
    const float* x = mem.at<float>(s_.input);
    float* y = mem.at<float>(s_.output);
    const float* init = bias_.empty() ? nullptr : bias_.data();
    // Pixels in (b, oy, ox) order: pixel i's output starts at i * out_c.
    const int64_t pixels = int64_t{w.batch} * w.out_h * w.out_w;
    const size_t K = static_cast<size_t>(s_.patch);
    if (direct_) return eval_direct(x, y, init);
    int64_t i = 0;
    if (gemm4_) {
      for (; i < pixels; i += kRows) {
        const int rows = static_cast<int>(std::min<int64_t>(kRows, pixels - i));
        for (int r = 0; r < rows; ++r) gather_pixel(x, i + r, patch_.data() + r * K);
        gemm4_(patch_.data(), rows, K, s_.patch, packed_.data(), w.out_c, init, y + i * w.out_c,
               static_cast<size_t>(w.out_c), lo_, hi_);
        fused_leaky(y + i * w.out_c, rows * w.out_c);
      }
    }
    for (; i < pixels; ++i) {
      gather_pixel(x, i, patch_.data());
      ks_.gemv(patch_.data(), s_.patch, packed_.data(), w.out_c, init, y + i * w.out_c, lo_, hi_);
      fused_leaky(y + i * w.out_c, w.out_c);
    }
  }
  std::string describe() const override {
    return std::string("float conv2d patch gemv ") + ks_.name +
           (direct_ ? " (4-pixel avx2 blocks, patches in place)" : gemm4_ ? " (4-pixel avx2 blocks)" : "") + fused_note(s_);
  }
  int64_t macs() const override {
    return int64_t{s_.w.batch} * s_.w.out_h * s_.w.out_w * s_.w.out_c * s_.patch;
  }

 private:
  ConvShape s_;
  float lo_, hi_;
  // One-row filters whose taps lie side by side and inside the input (no padding): a pixel's
  // patch is its kw * in_c consecutive input values, so the 4-pixel kernel reads them in place,
  // stride_w * in_c apart, instead of from a gathered copy. The same rows, the same bits.
  static bool patches_in_place(const Window& w) {
    return w.filter_h == 1 && w.dil_w == 1 && w.pad_h == 0 && w.pad_w == 0 &&
           (w.out_w - 1) * w.stride_w + w.filter_w <= w.in_w && (w.out_h - 1) * w.stride_h < w.in_h;
  }
  void eval_direct(const float* x, float* y, const float* init) const noexcept {
    const Window& w = s_.w;
    const size_t ldx = static_cast<size_t>(w.stride_w) * w.in_c;
    for (int b = 0; b < w.batch; ++b)
      for (int oy = 0; oy < w.out_h; ++oy) {
        const float* row = x + (static_cast<int64_t>(b) * w.in_h + int64_t{oy} * w.stride_h) * w.in_w * w.in_c;
        float* out = y + out_offset(w, b, oy, 0);
        for (int ox = 0; ox < w.out_w; ox += kRows) {
          const int rows = std::min(kRows, w.out_w - ox);
          gemm4_(row + ox * ldx, rows, ldx, s_.patch, packed_.data(), w.out_c, init, out + int64_t{ox} * w.out_c,
                 static_cast<size_t>(w.out_c), lo_, hi_);
          fused_leaky(out + int64_t{ox} * w.out_c, rows * w.out_c);
        }
      }
  }
  // The fused LEAKY_RELU on outputs just written (still in L1), by the LEAKY_RELU op's kernel.
  void fused_leaky(float* y, int n) const noexcept {
    if (s_.leaky) leaky_(y, y, n, s_.alpha);
  }
  void gather_pixel(const float* x, int64_t i, float* patch) const noexcept {
    const Window& w = s_.w;
    const int ox = static_cast<int>(i % w.out_w);
    const int64_t rest = i / w.out_w;
    gather_patch(w, x, static_cast<int>(rest / w.out_h), static_cast<int>(rest % w.out_h), ox, 0.0f, patch);
  }

  const ::tickinfer::kernels::KernelSet& ks_;
  kernels::LeakyReluFn leaky_;
  ::tickinfer::kernels::Gemm4SequentialFn gemm4_;
  bool direct_;  // patches_in_place, with the 4-pixel kernel
  tickinfer::kernels::AlignedVector<float> packed_;
  std::vector<float> bias_;
  std::vector<float> patch_;  // kRows gathered patches, each s_.patch floats
};

// The reference loop of ConvPerChannel, taps outside the input skipped (isa "scalar").
template <Rounding R>
class Int8ConvReference final : public PreparedOp {
 public:
  Int8ConvReference(const ConvShape& s, const int8_t* filter, const int32_t* bias, std::vector<int32_t> mult,
                    std::vector<int32_t> shift, int32_t in_offset, int32_t out_zp, int32_t lo, int32_t hi)
      : s_(s), filter_(filter), bias_(bias), mult_(std::move(mult)), shift_(std::move(shift)),
        in_offset_(in_offset), out_zp_(out_zp), lo_(lo), hi_(hi) {}
  void eval(const TensorMemory& mem) noexcept override {
    const Window& w = s_.w;
    const int8_t* x = mem.at<int8_t>(s_.input);
    int8_t* y = mem.at<int8_t>(s_.output);
    for (int b = 0; b < w.batch; ++b)
      for (int oy = 0; oy < w.out_h; ++oy)
        for (int ox = 0; ox < w.out_w; ++ox) {
          const int y0 = oy * w.stride_h - w.pad_h, x0 = ox * w.stride_w - w.pad_w;
          int8_t* out = y + out_offset(w, b, oy, ox);
          for (int oc = 0; oc < w.out_c; ++oc) {
            int32_t acc = 0;
            for (int ky = 0; ky < w.filter_h; ++ky) {
              const int iy = y0 + ky * w.dil_h;
              if (iy < 0 || iy >= w.in_h) continue;
              for (int kx = 0; kx < w.filter_w; ++kx) {
                const int ix = x0 + kx * w.dil_w;
                if (ix < 0 || ix >= w.in_w) continue;
                const int8_t* px = x + ((static_cast<int64_t>(b) * w.in_h + iy) * w.in_w + ix) * w.in_c;
                const int8_t* pw = filter_ + ((static_cast<int64_t>(oc) * w.filter_h + ky) * w.filter_w + kx) * w.in_c;
                for (int ic = 0; ic < w.in_c; ++ic) acc = wrapping_add(acc, static_cast<int32_t>(pw[ic]) * (px[ic] + in_offset_));
              }
            }
            if (bias_) acc = wrapping_add(acc, bias_[oc]);
            acc = multiply_by_quantized_multiplier<R>(acc, mult_[static_cast<size_t>(oc)], shift_[static_cast<size_t>(oc)]);
            out[oc] = static_cast<int8_t>(std::min(std::max(wrapping_add(acc, out_zp_), lo_), hi_));
          }
        }
  }
  std::string describe() const override { return "int8 conv2d reference"; }
  bool integer_form(std::vector<IntegerForm>* forms) const override {
    conv_integer_form(IntegerKind::Conv2D, s_.w, s_.input, s_.output, R, mult_, shift_, in_offset_, out_zp_, lo_, hi_,
                      filter_, int64_t{s_.w.out_c} * s_.patch, bias_, forms);
    return true;
  }
  int64_t macs() const override {
    return int64_t{s_.w.batch} * s_.w.out_h * s_.w.out_w * s_.w.out_c * s_.patch;
  }

 private:
  ConvShape s_;
  const int8_t* filter_;
  const int32_t* bias_;
  std::vector<int32_t> mult_, shift_;
  int32_t in_offset_, out_zp_, lo_, hi_;
};

bool reaches_minus_128(const Tensor& f) {
  return kernels::s8_reaches_minus_128(reinterpret_cast<const int8_t*>(f.data.data()), f.data.size());
}

// Gathered patch times the packed filter (s8 gemv), bias + in_offset * rowsum folded.
class Int8ConvGemv final : public PreparedOp {
 public:
  Int8ConvGemv(const ConvShape& s, const int8_t* filter, const int32_t* bias, std::vector<int32_t> mult,
               std::vector<int32_t> shift, int32_t in_zp, int32_t out_zp, int32_t lo, int32_t hi,
               const kernels::S8Kernels& k, Rounding r)
      : s_(s), in_zp_(static_cast<int8_t>(in_zp)), k_(k), requant_(k.requant_pixels(r)), mult_(std::move(mult)),
        shift_(std::move(shift)) {
    const int rows = s.w.out_c;
    stride_ = k.stride(s.patch);
    packed_.resize(kernels::s8_packed_bytes(rows, s.patch));
    k.pack(filter, rows, s.patch, packed_.data());
    std::vector<int32_t> sums(static_cast<size_t>(rows));
    kernels::row_sums_s8(filter, rows, s.patch, sums.data());
    bias_eff_.resize(static_cast<size_t>(rows));
    for (int o = 0; o < rows; ++o) {
      const uint32_t b = bias ? static_cast<uint32_t>(bias[o]) : 0u;
      bias_eff_[static_cast<size_t>(o)] = static_cast<int32_t>(
          b - static_cast<uint32_t>(in_zp) * static_cast<uint32_t>(sums[static_cast<size_t>(o)]));
    }
    patch_.assign(static_cast<size_t>(stride_) * kConvPositions, 0);
    acc_.assign(static_cast<size_t>(kernels::s8_padded_rows(rows)) * kConvPositions, 0);
    params_.bias = bias_eff_.data();
    params_.multiplier = mult_.data();
    params_.shift = shift_.data();
    params_.output_zero_point = out_zp;
    params_.act_min = lo;
    params_.act_max = hi;
  }
  void eval(const TensorMemory& mem) noexcept override {
    const Window& w = s_.w;
    const int8_t* x = mem.at<int8_t>(s_.input);
    int8_t* y = mem.at<int8_t>(s_.output);
    const int pixels = w.out_h * w.out_w;
    const int acc_step = kernels::s8_padded_rows(w.out_c);
    for (int b = 0; b < w.batch; ++b) {
      for (int i = 0; i < pixels; i += kConvPositions) {
        const int n = std::min(kConvPositions, pixels - i);
        gather_patches(w, x, b, i, n, in_zp_, stride_, patch_.data());
        k_.gemm(packed_.data(), w.out_c, stride_, patch_.data(), n, acc_.data());
        requant_(acc_.data(), w.out_c, n, acc_step, params_, y + (static_cast<int64_t>(b) * pixels + i) * w.out_c);
      }
    }
  }
  std::string describe() const override { return std::string("int8 conv2d patch gemm ") + k_.name; }
  int64_t macs() const override {
    return int64_t{s_.w.batch} * s_.w.out_h * s_.w.out_w * s_.w.out_c * s_.patch;
  }

 private:
  ConvShape s_;
  int8_t in_zp_;
  const kernels::S8Kernels& k_;
  kernels::RequantS8PixelsFn requant_;
  std::vector<int32_t> mult_, shift_;
  int stride_ = 0;
  tickinfer::kernels::AlignedVector<int8_t> packed_;
  std::vector<int32_t> bias_eff_;
  std::vector<int8_t> patch_;
  std::vector<int32_t> acc_;
  kernels::RequantParams params_;
};

// The patch's integer dot products are exact in every kernel set, so the float arithmetic after
// them is the same whichever runs.
class HybridConv final : public PreparedOp {
 public:
  HybridConv(const ConvShape& s, const int8_t* filter, const float* bias, std::vector<float> wscale, bool per_channel,
             float lo, float hi, const kernels::S8Kernels& k, const kernels::QuantizeRowKernels* row_quant,
             kernels::HybridConvEpilogueFn epilogue)
      : s_(s), bias_(bias), wscale_(std::move(wscale)), per_channel_(per_channel), lo_(lo), hi_(hi), k_(k),
        row_quant_(row_quant), epilogue_(epilogue) {
    const int rows = s.w.out_c;
    stride_ = k.stride(s.patch);
    packed_.resize(kernels::s8_packed_bytes(rows, s.patch));
    k.pack(filter, rows, s.patch, packed_.data());
    row_sums_.resize(static_cast<size_t>(rows));
    kernels::row_sums_s8(filter, rows, s.patch, row_sums_.data());
    batch_size_ = s.w.in_h * s.w.in_w * s.w.in_c;
    xq_.assign(static_cast<size_t>(batch_size_) * s.w.batch, 0);
    patch_.assign(static_cast<size_t>(stride_) * kConvPositions, 0);
    acc_.assign(static_cast<size_t>(kernels::s8_padded_rows(rows)) * kConvPositions, 0);
  }
  void eval(const TensorMemory& mem) noexcept override {
    const Window& w = s_.w;
    const float* x = mem.at<float>(s_.input);
    float* y = mem.at<float>(s_.output);
    for (int b = 0; b < w.batch; ++b) {
      const int64_t off = static_cast<int64_t>(b) * batch_size_;
      float scale;
      int32_t zp = 0;
      if (per_channel_) {
        kernels::quantize_row_asymmetric(*row_quant_, x + off, batch_size_, xq_.data() + off, &scale, &zp);
      } else {
        scale = kernels::quantize_row_symmetric(*row_quant_, x + off, batch_size_, xq_.data() + off) * wscale_[0];
      }
      kernels::HybridConvOut q;
      if (per_channel_) {
        q.row_sums = row_sums_.data();
        q.zero_point = zp;
        q.filter_scale = wscale_.data();
      }
      q.input_scale = scale;
      q.bias = bias_;
      q.lo = lo_;
      q.hi = hi_;
      q.leaky = s_.leaky;
      q.alpha = s_.alpha;
      const int pixels = w.out_h * w.out_w;
      const int acc_step = kernels::s8_padded_rows(w.out_c);
      for (int i = 0; i < pixels; i += kConvPositions) {
        const int n = std::min(kConvPositions, pixels - i);
        gather_patches(w, xq_.data(), b, i, n, static_cast<int8_t>(zp), stride_, patch_.data());
        k_.gemm(packed_.data(), w.out_c, stride_, patch_.data(), n, acc_.data());
        epilogue_(acc_.data(), w.out_c, n, acc_step, q, y + (static_cast<int64_t>(b) * pixels + i) * w.out_c);
      }
    }
  }
  std::string describe() const override {
    return std::string("hybrid conv2d ") + (per_channel_ ? "per-channel asymmetric " : "symmetric ") +
           k_.name + fused_note(s_);
  }
  int64_t macs() const override {
    return int64_t{s_.w.batch} * s_.w.out_h * s_.w.out_w * s_.w.out_c * s_.patch;
  }

 private:
  ConvShape s_;
  const float* bias_;
  std::vector<float> wscale_;
  bool per_channel_;
  float lo_, hi_;
  const kernels::S8Kernels& k_;
  const kernels::QuantizeRowKernels* row_quant_;
  kernels::HybridConvEpilogueFn epilogue_;
  int stride_ = 0, batch_size_ = 0;
  tickinfer::kernels::AlignedVector<int8_t> packed_;  // in k_'s layout
  std::vector<int32_t> row_sums_;
  tickinfer::kernels::AlignedVector<int8_t> xq_, patch_;
  std::vector<int32_t> acc_;
};

}  // namespace

std::unique_ptr<PreparedOp> prepare_conv2d(const PrepareContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& f = ctx.input(1);
  const Tensor& out = ctx.output(0);
  require_type(ctx, in, "input", {DType::F32, DType::I8});
  require_type(ctx, f, "filter", {DType::F32, DType::I8});
  if (f.shape.size() != 4) ctx.fail("filter '" + f.name + "' must be 4-D [out_c, kh, kw, in_c], got " + shape_str(f.shape));
  require_constant(ctx, f, "filter");
  ConvShape s;
  s.w = make_window(ctx, in, out, f.shape[1], f.shape[2], true);
  s.input = ctx.input_index(0);
  s.output = ctx.output_index(0);
  if (f.shape[0] != s.w.out_c || f.shape[3] != s.w.in_c || s.w.in_c <= 0 || s.w.out_c <= 0) {
    ctx.fail("filter '" + f.name + "' " + shape_str(f.shape) + " does not match input channels " +
             std::to_string(s.w.in_c) + " and output channels " + std::to_string(s.w.out_c));
  }
  s.patch = s.w.filter_h * s.w.filter_w * s.w.in_c;
  s.leaky = ctx.op.options.fused_leaky_relu;
  s.alpha = ctx.op.options.alpha;
  const Tensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  if (bias) {
    require_constant(ctx, *bias, "bias");
    if (num_elements(*bias) != s.w.out_c) ctx.fail("bias '" + bias->name + "' must hold one value per output channel");
  }
  const bool reference = ctx.isa == ::tickinfer::kernels::Isa::Scalar;
  const OpOptions& o = ctx.op.options;

  if (in.type == DType::F32) {
    require_type(ctx, out, "output", {DType::F32});
    if (bias) require_type(ctx, *bias, "bias", {DType::F32});
    const float* b = bias ? const_data<float>(*bias) : nullptr;
    float lo, hi;
    float_activation_range(ctx, o.activation, &lo, &hi);
    if (f.type == DType::F32) {
      // Only the 4-pixel sequential kernel sums as the reference loop does (and as TFLite's
      // BUILTIN_REF), which a dynamic-range program needs (fully_connected.cpp, FloatFcSequential):
      // without it, or for 4 output channels or fewer, the loop itself.
      const ::tickinfer::kernels::KernelSet& ks = ::tickinfer::kernels::kernel_set(ctx.isa);
      if (reference || !ks.gemm4_sequential || ::tickinfer::kernels::is_dot_form(s.w.out_c)) {
        return std::make_unique<FloatConv>(s, const_data<float>(f), b, lo, hi);
      }
      return std::make_unique<FloatConvGemv>(s, const_data<float>(f), b, lo, hi, ks);
    }
    check_conv_filter_scales(ctx, f, s.w.out_c, 0);
    std::vector<float> wscale(static_cast<size_t>(s.w.out_c));
    bool differ = false;
    for (int oc = 0; oc < s.w.out_c; ++oc) {
      wscale[static_cast<size_t>(oc)] = conv_channel_scale(f, oc);
      differ = differ || wscale[static_cast<size_t>(oc)] != wscale[0];
    }
    if (const ImplicitGemmKind kind = implicit_gemm_kind(ctx.isa); kind != ImplicitGemmKind::None) {
      HybridConvQuant q;
      q.bias = b;
      q.filter_scale = std::move(wscale);
      q.per_channel = f.quant.per_axis() && differ;
      q.lo = lo;
      q.hi = hi;
      q.row_quant = &kernels::quantize_row_kernels(ctx.isa);
      q.epilogue = kernels::hybrid_conv_epilogue(ctx.isa);
      return make_hybrid_conv_implicit_gemm(kind, s, const_data<int8_t>(f), std::move(q));
    }
    const kernels::S8Kernels& k = kernels::s8_kernels(ctx.isa, reaches_minus_128(f));
    return std::make_unique<HybridConv>(s, const_data<int8_t>(f), b, std::move(wscale), f.quant.per_axis() && differ, lo,
                                        hi, k, &kernels::quantize_row_kernels(ctx.isa), kernels::hybrid_conv_epilogue(ctx.isa));
  }

  require_type(ctx, f, "filter", {DType::I8});
  require_type(ctx, out, "output", {DType::I8});
  if (s.leaky) ctx.fail("a LEAKY_RELU is fused only after a float-output convolution");
  if (bias) require_type(ctx, *bias, "bias", {DType::I32});
  check_conv_filter_scales(ctx, f, s.w.out_c, 0);
  const AffineParams ip = per_tensor_params(ctx, in, "input");
  const AffineParams op = per_tensor_params(ctx, out, "output");
  int32_t lo, hi;
  int8_activation_range(ctx, o.activation, op, &lo, &hi);
  ChannelMultipliers cm = conv_channel_multipliers(f, s.w.out_c, ip.scale, op.scale, rounding(ctx));
  std::vector<int32_t> mult = std::move(cm.multiplier), shift = std::move(cm.shift);
  const int32_t* b = bias ? const_data<int32_t>(*bias) : nullptr;
  if (reference) {
    if (rounding(ctx) == Rounding::Double) {
      return std::make_unique<Int8ConvReference<Rounding::Double>>(s, const_data<int8_t>(f), b, std::move(mult),
                                                                   std::move(shift), -ip.zero_point, op.zero_point, lo, hi);
    }
    return std::make_unique<Int8ConvReference<Rounding::Single>>(s, const_data<int8_t>(f), b, std::move(mult),
                                                                 std::move(shift), -ip.zero_point, op.zero_point, lo, hi);
  }
  if (const ImplicitGemmKind kind = implicit_gemm_kind(ctx.isa); kind != ImplicitGemmKind::None) {
    Int8ConvQuant q;
    q.bias = b;
    q.multiplier = std::move(mult);
    q.shift = std::move(shift);
    q.input_zero_point = ip.zero_point;
    q.output_zero_point = op.zero_point;
    q.act_min = lo;
    q.act_max = hi;
    q.rounding = rounding(ctx);
    return make_int8_conv_implicit_gemm(kind, s, const_data<int8_t>(f), std::move(q));
  }
  return std::make_unique<Int8ConvGemv>(s, const_data<int8_t>(f), b, std::move(mult), std::move(shift), ip.zero_point,
                                        op.zero_point, lo, hi, kernels::s8_kernels(ctx.isa, reaches_minus_128(f)),
                                        rounding(ctx));
}

}  // namespace tickinfer::tfl::ops
