// FULLY_CONNECTED: geometry checks, type dispatch, and the float and bf16-filter kernels.
// Float follows TFLite's reference loop: total = sum_d x[d] * w[o][d] in order, + bias, clamp.
#include "tflite/ops/fully_connected.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/aligned_allocator.hpp"
#include "kernels/kernel_set.hpp"
#include "tflite/kernels/gemv_bf16.hpp"
#include "tflite/ops/ops.hpp"

namespace tickinfer::tfl::ops {
namespace qk = ::tickinfer::tfl::kernels;
namespace fc {

FcGeometry check_geometry(const PrepareContext& ctx) {
  FcGeometry g;
  const Tensor& in = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& out = ctx.output(0);
  g.input = ctx.input_index(0);
  g.filter = ctx.input_index(1);
  g.output = ctx.output_index(0);
  if (w.shape.size() != 2) ctx.fail("filter '" + w.name + "' must be 2-D [units, depth], got " + shape_str(w.shape));
  require_constant(ctx, w, "filter");
  g.units = w.shape[0];
  g.depth = w.shape[1];
  if (g.units <= 0 || g.depth <= 0) ctx.fail("filter '" + w.name + "' has an empty shape " + shape_str(w.shape));
  const int64_t n_in = require_static(ctx, in);
  if (n_in % g.depth != 0) {
    ctx.fail("input '" + in.name + "' " + shape_str(in.shape) + " is not a whole number of rows of depth " +
             std::to_string(g.depth));
  }
  g.batch = static_cast<int>(n_in / g.depth);
  if (require_static(ctx, out) != static_cast<int64_t>(g.batch) * g.units) {
    ctx.fail("output '" + out.name + "' " + shape_str(out.shape) + " must hold " + std::to_string(g.batch) +
             " x " + std::to_string(g.units) + " values");
  }
  if (ctx.has_input(2)) {
    const Tensor& b = ctx.input(2);
    require_constant(ctx, b, "bias");
    if (num_elements(b) != g.units) {
      ctx.fail("bias '" + b.name + "' has " + std::to_string(num_elements(b)) + " values, expected " +
               std::to_string(g.units));
    }
    g.bias = ctx.input_index(2);
  }
  return g;
}

namespace {

// TFLite's reference float loop (used for isa "scalar").
class FloatFcReference final : public PreparedOp {
 public:
  FloatFcReference(const FcGeometry& g, const float* w, const float* bias, float lo, float hi)
      : g_(g), w_(w), bias_(bias), lo_(lo), hi_(hi) {}
  void eval(const TensorMemory& mem) noexcept override {
    const float* x = mem.at<float>(g_.input);
    float* y = mem.at<float>(g_.output);
    for (int b = 0; b < g_.batch; ++b) {
      float_reference_row(x + static_cast<size_t>(b) * g_.depth, w_, bias_, g_.units, g_.depth, lo_, hi_,
                          y + static_cast<size_t>(b) * g_.units);
    }
  }
  std::string describe() const override { return "float fc reference"; }
  int64_t macs() const override { return int64_t{g_.batch} * g_.units * g_.depth; }

 private:
  FcGeometry g_;
  const float* w_;
  const float* bias_;
  float lo_, hi_;
};

// TFLite's reference loop's sums (total += x * w, k ascending, every product and sum rounded to
// fp32, then total + bias) on the kernel set's 4-row sequential kernel (KernelSet::
// gemm4_sequential): bit for bit FloatFcReference, 8 to 32 lanes wide. Exactness is the point,
// not style: in a dynamic-range program a float FULLY_CONNECTED feeds a hybrid one, whose
// per-row input quantization turns a one-ulp difference into a whole quantization step of the
// next layer (measured: 5e-4 of the output on a Keras MultiHeadAttention file when this op
// summed in the engine gemv's fused, split order). Batch rows go four at a time, a last group
// of fewer (a batch of one: most calls) as that many rows.
class FloatFcSequential final : public PreparedOp {
  static constexpr int kRows = ::tickinfer::kernels::kGemm4Rows;

 public:
  FloatFcSequential(const FcGeometry& g, const float* w, const float* bias, float lo, float hi,
                    ::tickinfer::kernels::Gemm4SequentialFn gemm4, const char* isa)
      : g_(g), lo_(lo), hi_(hi), gemm4_(gemm4), isa_(isa) {
    std::vector<float> wt(static_cast<size_t>(g.depth) * g.units);  // W[k][n] = filter[n][k]
    for (int n = 0; n < g.units; ++n)
      for (int k = 0; k < g.depth; ++k) wt[static_cast<size_t>(k) * g.units + n] = w[static_cast<size_t>(n) * g.depth + k];
    packed_.resize(::tickinfer::kernels::packed_floats(g.depth, g.units));
    ::tickinfer::kernels::pack_weights(wt.data(), g.depth, g.units, packed_.data());
    if (bias) bias_.assign(bias, bias + g.units);
  }
  void eval(const TensorMemory& mem) noexcept override {
    const float* x = mem.at<float>(g_.input);
    float* y = mem.at<float>(g_.output);
    const float* init = bias_.empty() ? nullptr : bias_.data();
    const size_t K = static_cast<size_t>(g_.depth), N = static_cast<size_t>(g_.units);
    for (int b = 0; b < g_.batch; b += kRows) {
      const int rows = std::min(kRows, g_.batch - b);
      gemm4_(x + b * K, rows, K, g_.depth, packed_.data(), g_.units, init, y + b * N, N, lo_, hi_);
    }
  }
  std::string describe() const override { return std::string("float fc sequential (reference order) ") + isa_; }
  int64_t macs() const override { return int64_t{g_.batch} * g_.units * g_.depth; }

 private:
  FcGeometry g_;
  float lo_, hi_;
  ::tickinfer::kernels::Gemm4SequentialFn gemm4_;
  const char* isa_;
  tickinfer::kernels::AlignedVector<float> packed_;
  std::vector<float> bias_;
};

// bf16 filter, float input/output, fp32 accumulation: each weight is widened exactly
// (bits << 16) and multiplied in fp32, in the reference loop's order.
class Bf16Fc final : public PreparedOp {
 public:
  Bf16Fc(const FcGeometry& g, const uint16_t* w, const float* bias, float lo, float hi)
      : g_(g), w_(w), bias_(bias), lo_(lo), hi_(hi) {}
  void eval(const TensorMemory& mem) noexcept override {
    const float* x = mem.at<float>(g_.input);
    float* y = mem.at<float>(g_.output);
    for (int b = 0; b < g_.batch; ++b) {
      for (int o = 0; o < g_.units; ++o) {
        const uint16_t* row = w_ + static_cast<size_t>(o) * g_.depth;
        float total = 0.0f;
        for (int d = 0; d < g_.depth; ++d) {
          const uint32_t bits = static_cast<uint32_t>(row[d]) << 16;
          float wf;
          std::memcpy(&wf, &bits, 4);
          total += x[b * g_.depth + d] * wf;
        }
        const float v = total + (bias_ ? bias_[o] : 0.0f);
        y[b * g_.units + o] = std::min(std::max(v, lo_), hi_);
      }
    }
  }
  std::string describe() const override { return "bf16-filter fc (fp32 accumulate)"; }
  int64_t macs() const override { return int64_t{g_.batch} * g_.units * g_.depth; }

 private:
  FcGeometry g_;
  const uint16_t* w_;
  const float* bias_;
  float lo_, hi_;
};

// bf16 filter through the bf16 gemv (tflite/kernels/gemv_bf16.hpp): the filter is packed once,
// still bf16, into the float gemv's layout; products and sums are fp32 as in Bf16Fc, only the
// summation order differs.
class Bf16FcGemv final : public PreparedOp {
 public:
  Bf16FcGemv(const FcGeometry& g, const uint16_t* w, const float* bias, float lo, float hi,
             const qk::Bf16Gemv& k)
      : g_(g), lo_(lo), hi_(hi), k_(k) {
    std::vector<uint16_t> wt(static_cast<size_t>(g.depth) * g.units);  // W[k][n] = filter[n][k]
    for (int n = 0; n < g.units; ++n)
      for (int d = 0; d < g.depth; ++d) wt[static_cast<size_t>(d) * g.units + n] = w[static_cast<size_t>(n) * g.depth + d];
    packed_.resize(qk::bf16_packed_elems(g.depth, g.units));
    qk::pack_bf16_weights(wt.data(), g.depth, g.units, packed_.data());
    if (bias) bias_.assign(bias, bias + g.units);
  }
  void eval(const TensorMemory& mem) noexcept override {
    const float* x = mem.at<float>(g_.input);
    float* y = mem.at<float>(g_.output);
    for (int b = 0; b < g_.batch; ++b) {
      k_.gemv(x + static_cast<size_t>(b) * g_.depth, g_.depth, packed_.data(), g_.units,
              bias_.empty() ? nullptr : bias_.data(), y + static_cast<size_t>(b) * g_.units, lo_, hi_);
    }
  }
  std::string describe() const override { return std::string("bf16-filter fc packed gemv ") + k_.name; }
  int64_t macs() const override { return int64_t{g_.batch} * g_.units * g_.depth; }

 private:
  FcGeometry g_;
  float lo_, hi_;
  qk::Bf16Gemv k_;
  tickinfer::kernels::AlignedVector<uint16_t> packed_;
  std::vector<float> bias_;
};

}  // namespace
}  // namespace fc

std::unique_ptr<PreparedOp> prepare_fully_connected(const PrepareContext& ctx) {
  const fc::FcGeometry g = fc::check_geometry(ctx);
  const Tensor& in = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& out = ctx.output(0);
  require_type(ctx, in, "input", {DType::F32, DType::I8});
  require_type(ctx, w, "filter", {DType::F32, DType::I8, DType::BF16});
  if (in.type == DType::I8) {
    require_type(ctx, w, "filter", {DType::I8});
    require_type(ctx, out, "output", {DType::I8});
    return fc::make_int8(ctx, g);
  }
  require_type(ctx, out, "output", {DType::F32});
  const float* bias = nullptr;
  if (g.bias >= 0) {
    const Tensor& b = ctx.input(2);
    require_type(ctx, b, "bias", {DType::F32});
    bias = const_data<float>(b);
  }
  if (w.type == DType::I8) return fc::make_hybrid(ctx, g);
  float lo, hi;
  float_activation_range(ctx, ctx.op.options.activation, &lo, &hi);
  const bool reference = ctx.isa == ::tickinfer::kernels::Isa::Scalar;
  if (w.type == DType::BF16) {
    if (reference) return std::make_unique<fc::Bf16Fc>(g, const_data<uint16_t>(w), bias, lo, hi);
    return std::make_unique<fc::Bf16FcGemv>(g, const_data<uint16_t>(w), bias, lo, hi, qk::bf16_gemv(ctx.isa));
  }
  if (!reference) {
    if (auto sparse = fc::make_float_sparse(ctx, g, const_data<float>(w), bias, lo, hi)) return sparse;
  }
  // Every kernel set sums in the reference loop's order (FloatFcSequential): on sets without the
  // 4-row sequential kernel, and for 4 units or fewer (the packed layout's dot form), the loop.
  const ::tickinfer::kernels::KernelSet& ks = ::tickinfer::kernels::kernel_set(ctx.isa);
  if (reference || !ks.gemm4_sequential || ::tickinfer::kernels::is_dot_form(g.units)) {
    return std::make_unique<fc::FloatFcReference>(g, const_data<float>(w), bias, lo, hi);
  }
  return std::make_unique<fc::FloatFcSequential>(g, const_data<float>(w), bias, lo, hi, ks.gemm4_sequential, ks.name);
}

}  // namespace tickinfer::tfl::ops
