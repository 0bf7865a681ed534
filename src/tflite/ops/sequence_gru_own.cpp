// SEQUENCE_GRU in tickinfer's own arithmetic (OpOptions::own_arithmetic; `tickinfer quantize
// --mode int8|auto` writes it, no TFLite file has it). The same Keras GRU as ops/sequence_gru.cpp,
// computed for speed instead of for equality with the converter's loop:
//  - the input products of every step first, as one float block (the kernel set's gemm_rows over
//    W's values: an int8 W's values are its int8 grid times the row scales, a bf16 W's widened), so
//    the inputs are not quantized at all (the converter's loop quantizes and scales every input
//    row through a hybrid FULLY_CONNECTED);
//  - the recurrent product with int8 U: the state h quantized to int8 each step (symmetric, one
//    scale, TFLite's row quantization), the kernel set's int8 dot products (VNNI where the CPU has
//    it), and the int32 sums scaled and biased in one pass (KernelSet::scale_sums); float U through
//    the kernel set's gemv, bf16 U through the bf16 gemv;
//  - the gates with the graph engine's cell (KernelSet::gru_cell: its vector sigmoid and tanh and
//    fused multiply-adds, as a `.keras` plan's GRU computes them), not TFLite's LOGISTIC and TANH
//    replicas, which were 38 % of a step of the exact form (docs/performance.md); reset_before
//    with the set's add, activation and mul around U_h's product of r * h.
// The outputs differ from the converter's loop by those activations' last bits, the inputs'
// quantization it does and this form does not, and the state's (symmetric here, asymmetric
// there); the tests hold them to Keras within the quantizer's tolerances.
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "kernels/activation_spec.hpp"
#include "kernels/kernel_set.hpp"
#include "tflite/fused_activation_spec.hpp"
#include "tflite/kernels/quantize_rows.hpp"
#include "tflite/ops/sequence_gru_matrices.hpp"

namespace tickinfer::tfl::ops::gru {

namespace {

// U's rows [row0, row0 + rows) times a quantized state: y = sums * (h_scale * u_scale[row]) + bias.
class Int8Recurrence {
 public:
  Int8Recurrence(const PrepareContext& ctx, const Tensor& u, int row0, int rows, int cols)
      : rows_(rows),
        cols_(cols),
        k_(kernels::s8_kernels(ctx.isa, fc::reaches_minus_128(u))),
        row_quant_(&kernels::quantize_row_kernels(ctx.isa)),
        scale_sums_(::tickinfer::kernels::kernel_set(ctx.isa).scale_sums) {
    const auto* w = reinterpret_cast<const int8_t*>(u.data.data()) + static_cast<size_t>(row0) * cols;
    stride_ = k_.stride(cols);
    packed_.resize(kernels::s8_packed_bytes(rows, cols));
    k_.pack(w, rows, cols, packed_.data());
    for (int r = 0; r < rows; ++r) {
      scale_.push_back(u.quant.per_axis() ? u.quant.scale[static_cast<size_t>(row0 + r)] : u.quant.scale[0]);
    }
    hq_.assign(static_cast<size_t>(stride_), 0);  // the gemv reads `stride_` bytes; the padding stays 0
    acc_.assign(static_cast<size_t>(kernels::s8_padded_rows(rows)), 0);
  }

  // y[0, rows) = U h + bias (rows floats). noexcept, no allocation.
  void product(const float* h, const float* bias, float* y) noexcept {
    const float sh = kernels::quantize_row_symmetric(*row_quant_, h, cols_, hq_.data());
    k_.gemv(packed_.data(), rows_, stride_, hq_.data(), acc_.data());
    scale_sums_(acc_.data(), scale_.data(), sh, bias, y, rows_);
  }
  std::string describe() const { return std::string("int8 sums ") + k_.name + ", state quantized each step"; }

 private:
  int rows_, cols_, stride_ = 0;
  const kernels::S8Kernels& k_;
  const kernels::QuantizeRowKernels* row_quant_;
  decltype(::tickinfer::kernels::KernelSet::scale_sums) scale_sums_;
  ::tickinfer::kernels::AlignedVector<int8_t> packed_;
  std::vector<float> scale_;
  ::tickinfer::kernels::AlignedVector<int8_t> hq_;
  std::vector<int32_t> acc_;
};

// Rows [row0, row0 + rows) of a float, bf16 or int8 weight matrix [*, cols] as float values
// (int8 times its scale), transposed and packed for the kernel set's gemv and gemm_rows.
::tickinfer::kernels::AlignedVector<float> packed_values(const Tensor& w, int row0, int rows, int cols) {
  std::vector<float> kn(static_cast<size_t>(rows) * cols);  // [cols x rows]
  for (int r = 0; r < rows; ++r) {
    const size_t row = static_cast<size_t>(row0 + r);
    for (int c = 0; c < cols; ++c) {
      const size_t at = row * cols + c;
      float v;
      if (w.type == DType::I8) {
        v = static_cast<float>(reinterpret_cast<const int8_t*>(w.data.data())[at]) *
            (w.quant.per_axis() ? w.quant.scale[row] : w.quant.scale[0]);
      } else if (w.type == DType::BF16) {
        const uint32_t bits = uint32_t{reinterpret_cast<const uint16_t*>(w.data.data())[at]} << 16;
        std::memcpy(&v, &bits, sizeof v);
      } else {
        v = reinterpret_cast<const float*>(w.data.data())[at];
      }
      kn[static_cast<size_t>(c) * rows + r] = v;
    }
  }
  ::tickinfer::kernels::AlignedVector<float> packed(::tickinfer::kernels::packed_floats(cols, rows));
  ::tickinfer::kernels::pack_weights(kn.data(), cols, rows, packed.data());
  return packed;
}

// One block of U's rows: int8 as above, bf16 through the bf16 gemv (GateMatrix: the weights stay
// 16-bit), float through the kernel set's gemv.
class Recurrence {
 public:
  Recurrence(const PrepareContext& ctx, const Tensor& u, int row0, int rows, int cols)
      : rows_(rows), cols_(cols), ks_(::tickinfer::kernels::kernel_set(ctx.isa)) {
    if (u.type == DType::I8) {
      int8_.emplace(ctx, u, row0, rows, cols);
    } else if (u.type == DType::BF16) {
      bf16_.emplace(ctx, u, row0, rows, cols);
    } else {
      packed_ = packed_values(u, row0, rows, cols);
    }
  }
  // y[0, rows) = U h + bias (rows floats). noexcept, no allocation.
  void product(const float* h, const float* bias, float* y) noexcept {
    constexpr float inf = std::numeric_limits<float>::infinity();
    if (int8_) return int8_->product(h, bias, y);
    if (bf16_) return bf16_->product(h, 1, bias, y);
    ks_.gemv(h, cols_, packed_.data(), rows_, bias, y, -inf, inf);
  }
  std::string describe() const {
    return int8_ ? int8_->describe() : bf16_ ? bf16_->describe() : std::string("float gemv ") + ks_.name;
  }

 private:
  int rows_, cols_;
  const ::tickinfer::kernels::KernelSet& ks_;
  std::optional<Int8Recurrence> int8_;
  std::optional<GateMatrix> bf16_;
  ::tickinfer::kernels::AlignedVector<float> packed_;
};

// The candidate's activation as the GRU cell takes it (prepare admits TANH, RELU, RELU6, NONE).
::tickinfer::ActivationSpec candidate_spec(FusedActivation a) {
  ::tickinfer::ActivationSpec s;
  graph_activation(a, &s);
  return s;
}

class OwnArithmeticGru final : public PreparedOp {
 public:
  OwnArithmeticGru(const PrepareContext& ctx, int T, int F, int H)
      : T_(T), F_(F), H_(H), reset_after_(ctx.op.options.reset_after),
        x_(ctx.input_index(0)), h_(ctx.input_index(5)), out_(ctx.output_index(0)),
        ks_(::tickinfer::kernels::kernel_set(ctx.isa)), act_(candidate_spec(ctx.op.options.activation)) {
    rec_.kind = ::tickinfer::ActKind::Sigmoid;
    wx_ = packed_values(ctx.input(1), 0, 3 * H, F);
    const Tensor& u = ctx.input(2);
    if (reset_after_) {
      uh_.emplace(ctx, u, 0, 3 * H, H);
    } else {
      uh_.emplace(ctx, u, 0, 2 * H, H);
      uc_.emplace(ctx, u, 2 * H, H, H);
    }
    b_in_ = gate_bias(ctx, 3, H);
    b_rec_ = gate_bias(ctx, 4, H);
    xs_.assign(static_cast<size_t>(T) * 3 * H, 0.0f);
    rs_.assign(static_cast<size_t>(3) * H, 0.0f);
    rh_.assign(static_cast<size_t>(H), 0.0f);
  }

  void eval(const TensorMemory& mem) noexcept override {
    const size_t rows = static_cast<size_t>(3) * H_;
    constexpr float inf = std::numeric_limits<float>::infinity();
    ks_.gemm_rows(mem.at<float>(x_), T_, static_cast<size_t>(F_), F_, wx_.data(), static_cast<int>(rows), b_in_.data(),
                  xs_.data(), rows, -inf, inf);
    float* h = mem.at<float>(h_);
    float* out = mem.at<float>(out_);
    for (int t = 0; t < T_; ++t) {
      float* xs = xs_.data() + t * rows;
      if (reset_after_) {
        uh_->product(h, b_rec_.data(), rs_.data());
        ks_.gru_cell(xs, rs_.data(), h, H_, rec_, act_);
      } else {
        step_reset_before(xs, h);
      }
      std::memcpy(out + static_cast<size_t>(t) * H_, h, sizeof(float) * static_cast<size_t>(H_));
    }
  }

  std::string describe() const override {
    return std::string("SEQUENCE_GRU own arithmetic ") + (reset_after_ ? "reset_after" : "reset_before") +
           " time=" + std::to_string(T_) + " input=" + std::to_string(F_) + " units=" + std::to_string(H_) +
           " (W: float gemm_rows " + ks_.name + "; U: " + uh_->describe() +
           (reset_after_ ? std::string("; gates: ") + ks_.name + " gru cell)"
                         : "; U_h: " + uc_->describe() + "; gates: " + ks_.name + " activations)");
  }
  int64_t macs() const override { return int64_t{T_} * 3 * H_ * (F_ + H_); }

 private:
  // Keras' reset_after=False step: the reset gate scales h before U_h's product (no recurrent bias).
  void step_reset_before(float* xs, float* h) noexcept {
    const int H = H_;
    float* z = xs;
    float* hh = xs + 2 * H;
    uh_->product(h, b_rec_.data(), rs_.data());  // zeros: reset_before has no recurrent bias
    ks_.add(z, rs_.data(), z, 2 * H);
    ks_.activation(rec_, z, z, 2 * H);
    ks_.mul(z + H, h, rh_.data(), H);
    uc_->product(rh_.data(), b_rec_.data(), rs_.data());
    ks_.add(hh, rs_.data(), hh, H);
    ks_.activation(act_, hh, hh, H);
    for (int k = 0; k < H; ++k) h[k] = z[k] * h[k] + (1.0f - z[k]) * hh[k];
  }

  int T_, F_, H_;
  bool reset_after_;
  int x_, h_, out_;
  const ::tickinfer::kernels::KernelSet& ks_;
  ::tickinfer::ActivationSpec rec_, act_;
  ::tickinfer::kernels::AlignedVector<float> wx_;  // W's values, packed [F x 3H]
  std::optional<Recurrence> uh_, uc_;  // U (reset_before: U_zr); U_h (reset_before only)
  std::vector<float> b_in_, b_rec_;    // [3H], zeros where left out (b_rec_ always, reset_before)
  // Scratch, sized at prepare: every step's input product [T, 3H], the recurrent product, r * h.
  std::vector<float> xs_, rs_, rh_;
};

}  // namespace

std::unique_ptr<PreparedOp> make_own_arithmetic_gru(const PrepareContext& ctx, int T, int F, int H) {
  return std::make_unique<OwnArithmeticGru>(ctx, T, F, H);
}

}  // namespace tickinfer::tfl::ops::gru
