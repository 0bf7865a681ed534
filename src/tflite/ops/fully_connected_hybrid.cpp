// FULLY_CONNECTED with an int8 filter and float input/output (dynamic range): per batch row,
// quantize the input (symmetric or asymmetric), s8 dot products, then
//   out = bias + dot * (row_scale * filter_scale[o])
// in float, then the fused activation (interop facts, section 6). The integer dot products are
// exact in every kernel set, so the float arithmetic after them sees the same int32 values
// whichever runs.
#include <algorithm>
#include <cstring>
#include <vector>

#include "tflite/ops/fully_connected.hpp"

namespace tickinfer::tfl::ops::fc {

HybridFcRows::HybridFcRows(const PrepareContext& ctx, const Tensor& w, int units, int depth, bool asymmetric,
                           float lo, float hi)
    : units_(units),
      depth_(depth),
      asymmetric_(asymmetric),
      lo_(lo),
      hi_(hi),
      k_(kernels::s8_kernels(ctx.isa, reaches_minus_128(w))),
      epilogue_(kernels::hybrid_epilogue(ctx.isa)),
      row_quant_(&kernels::quantize_row_kernels(ctx.isa)) {
  const auto* wd = reinterpret_cast<const int8_t*>(w.data.data());
  wscale_.resize(static_cast<size_t>(units));
  for (int o = 0; o < units; ++o) {
    wscale_[static_cast<size_t>(o)] = w.quant.per_axis() ? w.quant.scale[static_cast<size_t>(o)] : w.quant.scale[0];
  }
  stride_ = k_.stride(depth);
  packed_.resize(kernels::s8_packed_bytes(units, depth));
  k_.pack(wd, units, depth, packed_.data());
  acc_.assign(static_cast<size_t>(kChunk) * kernels::s8_padded_rows(units), 0);
  row_sums_.resize(static_cast<size_t>(units));
  kernels::row_sums_s8(wd, units, depth, row_sums_.data());
  xq_.assign(static_cast<size_t>(kChunk) * stride_, 0);

  // The block-sparse form where it pays: only the integer dot products differ, so only they are
  // timed (as Int8FcFast's choice).
  std::vector<int8_t> xpad(static_cast<size_t>(stride_), 0);
  std::vector<int32_t> acc(acc_.size() + kernels::kS8SparseRows);
  sparse_ = choose_sparse_fc(
      ctx.options.sparse, ctx.isa, reaches_minus_128(w), wd, units, depth,
      [&](const int8_t* x) {
        std::memcpy(xpad.data(), x, static_cast<size_t>(depth));
        k_.gemv(packed_.data(), units, stride_, xpad.data(), acc.data());
      },
      [&](const SparseFc& s, const int8_t* x) { s.gemv(s.view, x, acc.data()); }, note_);
  if (sparse_ && acc_.size() < sparse_->acc_size()) acc_.resize(sparse_->acc_size());
  // A filter the file stores sparse runs TFLite's sparse hybrid kernel (EvalSparseHybridImpl),
  // whose float steps differ from the dense one's.
  sparse_in_file_ = w.sparse_in_file;
  per_channel_ = w.quant.per_axis();
}

void HybridFcRows::row(const float* x, float* y) noexcept {
  float row_scale;
  int32_t zp = 0;
  if (asymmetric_) {
    kernels::quantize_row_asymmetric(*row_quant_, x, depth_, xq_.data(), &row_scale, &zp);
  } else {
    row_scale = kernels::quantize_row_symmetric(*row_quant_, x, depth_, xq_.data());
  }
  if (sparse_) {
    sparse_->gemv(sparse_->view, xq_.data(), acc_.data());
  } else {
    k_.gemv(packed_.data(), units_, stride_, xq_.data(), acc_.data());
  }
  if (sparse_in_file_) return sparse_file_epilogue(zp, row_scale, y);
  const kernels::HybridRow r{acc_.data(), asymmetric_ ? row_sums_.data() : nullptr, static_cast<float>(zp), row_scale,
                             wscale_.data(), lo_, hi_};
  epilogue_(r, units_, y);
}

void HybridFcRows::rows(const float* x, int n, float* y) noexcept {
  if (sparse_ || sparse_in_file_) {
    for (int i = 0; i < n; ++i) row(x + static_cast<size_t>(i) * depth_, y + static_cast<size_t>(i) * units_);
    return;
  }
  const size_t acc_step = static_cast<size_t>(kernels::s8_padded_rows(units_));
  float row_scale[kChunk];
  int32_t zp[kChunk];
  for (int i0 = 0; i0 < n; i0 += kChunk) {
    const int m = std::min(kChunk, n - i0);
    for (int i = 0; i < m; ++i) {
      const float* xi = x + static_cast<size_t>(i0 + i) * depth_;
      int8_t* q = xq_.data() + static_cast<size_t>(i) * stride_;
      zp[i] = 0;
      if (asymmetric_) {
        kernels::quantize_row_asymmetric(*row_quant_, xi, depth_, q, &row_scale[i], &zp[i]);
      } else {
        row_scale[i] = kernels::quantize_row_symmetric(*row_quant_, xi, depth_, q);
      }
    }
    k_.gemm(packed_.data(), units_, stride_, xq_.data(), m, acc_.data());
    for (int i = 0; i < m; ++i) {
      const kernels::HybridRow r{acc_.data() + static_cast<size_t>(i) * acc_step,
                                 asymmetric_ ? row_sums_.data() : nullptr, static_cast<float>(zp[i]), row_scale[i],
                                 wscale_.data(), lo_, hi_};
      epilogue_(r, units_, y + static_cast<size_t>(i0 + i) * units_);
    }
  }
}

// TFLite's sparse hybrid kernel: the zero-point term leaves the output first, as scale * row sum
// in float, then each row's integer dot product is scaled in.
void HybridFcRows::sparse_file_epilogue(int32_t zp, float row_scale, float* y) const noexcept {
  const float sf = per_channel_ ? row_scale : row_scale * wscale_[0];
  if (asymmetric_) {
    const float scaled_zp = sf * static_cast<float>(zp);
    for (int o = 0; o < units_; ++o) {
      float scale = scaled_zp;
      if (per_channel_) scale *= wscale_[static_cast<size_t>(o)];
      y[o] -= scale * static_cast<float>(row_sums_[static_cast<size_t>(o)]);
    }
  }
  for (int o = 0; o < units_; ++o) {
    float scale = sf;
    if (per_channel_) scale *= wscale_[static_cast<size_t>(o)];
    y[o] += static_cast<float>(acc_[static_cast<size_t>(o)]) * scale;
    y[o] = std::min(std::max(y[o], lo_), hi_);
  }
}

std::string HybridFcRows::describe() const {
  return std::string(asymmetric_ ? "asymmetric " : "symmetric ") + k_.name +
         (sparse_in_file_ ? ", TFLite's sparse-kernel epilogue" : "") + (note_.empty() ? "" : "; " + note_);
}

namespace {

class HybridFc final : public PreparedOp {
 public:
  HybridFc(const PrepareContext& ctx, const FcGeometry& g, const Tensor& w, const float* bias, float lo, float hi)
      : g_(g), bias_(bias), lo_(lo), hi_(hi), rows_(ctx, w, g.units, g.depth, ctx.op.options.asymmetric_quantize_inputs, lo, hi) {}
  void eval(const TensorMemory& mem) noexcept override {
    const float* x = mem.at<float>(g_.input);
    float* y = mem.at<float>(g_.output);
    const size_t n_in = static_cast<size_t>(g_.batch) * g_.depth;
    // TFLite skips the product for an all-zero input: output = bias.
    const bool zero = all_zero(x, static_cast<int>(n_in));
    for (int b = 0; b < g_.batch; ++b) {
      float* yb = y + static_cast<size_t>(b) * g_.units;
      for (int o = 0; o < g_.units; ++o) yb[o] = bias_ ? bias_[o] : 0.0f;
      if (!zero) rows_.row(x + static_cast<size_t>(b) * g_.depth, yb);
    }
    if (zero) {  // the bias rows were not clamped by the epilogue
      for (size_t i = 0; i < static_cast<size_t>(g_.batch) * g_.units; ++i) y[i] = std::min(std::max(y[i], lo_), hi_);
    }
  }
  std::string describe() const override { return "hybrid fc " + rows_.describe(); }
  int64_t macs() const override { return int64_t{g_.batch} * g_.units * g_.depth; }

 private:
  FcGeometry g_;
  const float* bias_;
  float lo_, hi_;
  HybridFcRows rows_;
};

}  // namespace

std::unique_ptr<PreparedOp> make_hybrid(const PrepareContext& ctx, const FcGeometry& g) {
  const Tensor& w = ctx.input(1);
  check_filter_quant(ctx, w, g.units);
  float lo, hi;
  float_activation_range(ctx, ctx.op.options.activation, &lo, &hi);
  const float* bias = g.bias >= 0 ? const_data<float>(ctx.input(2)) : nullptr;
  return std::make_unique<HybridFc>(ctx, g, w, bias, lo, hi);
}

}  // namespace tickinfer::tfl::ops::fc
