// SEQUENCE_GRU, tickinfer's own op (TFLite has no GRU: its converter writes a WHILE loop of float
// ops, tflite/rewrite/gru_loop.hpp). It computes a Keras GRU layer over the whole window exactly
// as that loop's body does, op by op:
//   xs = FULLY_CONNECTED(x_t, W, b_in)                  [3H]: the z, r and candidate blocks
//   reset_after:  rs = FULLY_CONNECTED(h, U, b_rec)     [3H]
//     z = LOGISTIC(xs_z + rs_z), r = LOGISTIC(xs_r + rs_r), hh = TANH(xs_h + r * rs_h)
//   reset_before: rs = FULLY_CONNECTED(h, U_zr)         [2H], no bias
//     z, r as above, hh = TANH(xs_h + FULLY_CONNECTED(r * h, U_h))
//   h' = z * h + (1 - z) * hh
// every product and sum its own float rounding (no FMA: the library builds with
// -ffp-contract=off), LOGISTIC and TANH TFLite's reference float kernels (kernels/logistic_f32.hpp,
// platform_tanhf.hpp), and an all-zero FULLY_CONNECTED input skipped (output = bias), as TFLite
// skips it. So with int8 weights (the quantizer's int8-dynamic GRU, or a dynamic-range converter
// file's loop lowered by tflite/rewrite/gru_loop_lowering.cpp) every step's products are
// fc::HybridFcRows, the hybrid FULLY_CONNECTED's own arithmetic, and the op equals the loop run op
// by op bit for bit. Float weights are summed in TFLite's reference order (as the float
// FULLY_CONNECTED sums them), so the float op equals its loop bit for bit too; bf16 weights (the
// quantizer's, TFLite has none) go through the bf16 gemv. That is the converter's arithmetic;
// with OpOptions::own_arithmetic the op is built in tickinfer's own instead, for speed, held to
// Keras rather than to the converter's bits (sequence_gru_own.cpp); the checks below are both's.
//
// Operands: 0 x [1, T, F] (time_major: [T, 1, F]); 1 W [3H, F] and 2 U [3H, H], FULLY_CONNECTED
// filters (rows z, r, h), both float32, both bfloat16 or both int8 with scales per tensor or per
// row; 3 b_in [3H] and 4 b_rec [3H] float32 or left out (-1; reset_before has no b_rec);
// 5 h [1, H]: the state, read at the first step and left holding the last (a variable tensor in
// the quantizer's programs; the lowered loop copies the loop's h in and out).
// Output 0: every h_t, [1, T, H] (time_major: [T, 1, H]). OpOptions::reset_after picks the form;
// OpOptions::activation is the candidate's (TANH as above, or RELU, RELU6, NONE for Keras' relu and
// linear: a FULLY_CONNECTED's fused clamps).
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "tflite/kernels/logistic_f32.hpp"
#include "tflite/kernels/platform_tanhf.hpp"
#include "tflite/ops/ops.hpp"
#include "tflite/ops/sequence_gru_matrices.hpp"

namespace tickinfer::tfl::ops {

namespace {

class SequenceGru final : public PreparedOp {
 public:
  SequenceGru(const PrepareContext& ctx, int T, int F, int H)
      : T_(T), F_(F), H_(H), reset_after_(ctx.op.options.reset_after), act_(ctx.op.options.activation),
        x_(ctx.input_index(0)), h_(ctx.input_index(5)), out_(ctx.output_index(0)),
        logistic_(kernels::logistic_array(ctx.isa)), tanhf_(kernels::tanhf_array(ctx.isa)) {
    const Tensor& w = ctx.input(1);
    const Tensor& u = ctx.input(2);
    wx_.emplace(ctx, w, 0, 3 * H, F);
    if (reset_after_) {
      wh_.emplace(ctx, u, 0, 3 * H, H);
    } else {
      wh_.emplace(ctx, u, 0, 2 * H, H);
      wc_.emplace(ctx, u, 2 * H, H, H);
    }
    b_in_ = gru::gate_bias(ctx, 3, H);
    b_rec_ = gru::gate_bias(ctx, 4, H);
    xs_.assign(static_cast<size_t>(T) * 3 * H, 0.0f);
    rs_.assign(static_cast<size_t>(3) * H, 0.0f);
    rh_.assign(static_cast<size_t>(H), 0.0f);
    cand_.assign(static_cast<size_t>(H), 0.0f);
  }

  void eval(const TensorMemory& mem) noexcept override {
    const size_t rows = static_cast<size_t>(3) * H_;
    wx_->product(mem.at<float>(x_), T_, b_in_.data(), xs_.data());
    float* h = mem.at<float>(h_);
    float* out = mem.at<float>(out_);
    for (int t = 0; t < T_; ++t) {
      step(xs_.data() + t * rows, h);
      std::memcpy(out + static_cast<size_t>(t) * H_, h, sizeof(float) * static_cast<size_t>(H_));
    }
  }

  std::string describe() const override {
    return std::string("SEQUENCE_GRU ") + (reset_after_ ? "reset_after" : "reset_before") + " time=" + std::to_string(T_) +
           " input=" + std::to_string(F_) + " units=" + std::to_string(H_) + " (W: " + wx_->describe() +
           "; U: " + wh_->describe() + ")";
  }
  int64_t macs() const override { return int64_t{T_} * 3 * H_ * (F_ + H_); }

 private:
  // One step: xs (this step's input product with b_in) becomes the gates; h is updated in place.
  void step(float* xs, float* h) noexcept {
    const int H = H_, zr = 2 * H;
    float* rs = rs_.data();
    wh_->product(h, 1, b_rec_.data(), rs);
    for (int k = 0; k < zr; ++k) xs[k] = xs[k] + rs[k];
    logistic_(xs, xs, zr);
    const float* z = xs;
    const float* r = xs + H;
    float* hh = xs + zr;
    if (reset_after_) {
      for (int k = 0; k < H; ++k) {
        const float rh = r[k] * rs[zr + k];
        hh[k] = hh[k] + rh;
      }
    } else {
      for (int k = 0; k < H; ++k) rh_[static_cast<size_t>(k)] = r[k] * h[k];
      wc_->product(rh_.data(), 1, b_rec_.data(), cand_.data());  // zeros: U_h has no bias
      for (int k = 0; k < H; ++k) hh[k] = hh[k] + cand_[static_cast<size_t>(k)];
    }
    switch (act_) {
      case FusedActivation::Tanh: tanhf_(hh, hh, H); break;
      case FusedActivation::Relu:
        for (int k = 0; k < H; ++k) hh[k] = std::max(0.0f, hh[k]);
        break;
      case FusedActivation::Relu6:
        for (int k = 0; k < H; ++k) hh[k] = std::min(6.0f, std::max(0.0f, hh[k]));
        break;
      default: break;  // linear
    }
    for (int k = 0; k < H; ++k) {
      const float keep = z[k] * h[k];
      const float one_minus_z = 1.0f - z[k];
      const float take = one_minus_z * hh[k];
      h[k] = keep + take;
    }
  }

  int T_, F_, H_;
  bool reset_after_;
  FusedActivation act_;  // the candidate's: TANH, RELU, RELU6 or NONE (linear)
  int x_, h_, out_;
  kernels::LogisticArrayFn logistic_;
  kernels::TanhfArrayFn tanhf_;
  std::optional<gru::GateMatrix> wx_, wh_, wc_;  // W; U (reset_before: U_zr); U_h (reset_before only)
  std::vector<float> b_in_, b_rec_;         // [3H], zeros where left out (b_rec_ always, reset_before)
  // Scratch, sized at prepare: every step's input product [T, 3H], the recurrent product, r * h
  // and its product (reset_before).
  std::vector<float> xs_, rs_, rh_, cand_;
};

}  // namespace

std::unique_ptr<PreparedOp> prepare_sequence_gru(const PrepareContext& ctx) {
  const Op& op = ctx.op;
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& u = ctx.input(2);
  const Tensor& h = ctx.input(5);
  const Tensor& y = ctx.output(0);
  const bool tm = op.options.time_major;
  if (x.type != DType::F32 || x.shape.size() != 3 || x.shape[tm ? 1 : 0] != 1) {
    ctx.fail("input '" + x.name + "' must be float32 [1, T, F] (time major: [T, 1, F]); it is " + dtype_name(x.type) +
             shape_str(x.shape));
  }
  const int T = x.shape[tm ? 0 : 1], F = x.shape[2];
  if (T < 1 || F < 1) ctx.fail("input '" + x.name + "' " + shape_str(x.shape) + " has no time steps or no features");
  if (w.shape.size() != 2 || w.shape[0] % 3 != 0 || w.shape[0] == 0 || w.shape[1] != F) {
    ctx.fail("input weights '" + w.name + "' must be [3H, " + std::to_string(F) + "]; they are " + shape_str(w.shape));
  }
  const int H = w.shape[0] / 3;
  if (u.shape != Shape{3 * H, H}) ctx.fail("recurrent weights '" + u.name + "' must be " + shape_str({3 * H, H}));
  if (!w.is_constant() || !u.is_constant() || w.type != u.type ||
      (w.type != DType::F32 && w.type != DType::BF16 && w.type != DType::I8)) {
    ctx.fail("the weights must be constants, both float32, both bfloat16 or both int8");
  }
  if (w.type == DType::I8) {
    fc::check_filter_quant(ctx, w, 3 * H);
    fc::check_filter_quant(ctx, u, 3 * H);
  }
  const FusedActivation act = op.options.activation;
  if (act != FusedActivation::Tanh && act != FusedActivation::Relu && act != FusedActivation::Relu6 &&
      act != FusedActivation::None) {
    ctx.fail("fused_activation_function " + std::to_string(static_cast<int>(act)) +
             " is not a GRU candidate's (TANH, RELU, RELU6 or NONE)");
  }
  if (!op.options.reset_after && ctx.has_input(4)) ctx.fail("reset_before has no recurrent bias (operand 4 must be left out)");
  if (h.is_constant() || h.type != DType::F32 || element_count(h.shape) != H) {
    ctx.fail("state '" + h.name + "' must be a float32 tensor of " + std::to_string(H) + " values, not a constant");
  }
  // The op writes h in place at every step: not over its input, its output or a model input.
  const int hi = op.inputs[5];
  const bool model_input = std::find(ctx.program.inputs.begin(), ctx.program.inputs.end(), hi) != ctx.program.inputs.end();
  if (hi == op.inputs[0] || hi == op.outputs[0] || model_input) {
    ctx.fail("state '" + h.name + "' is the op's input, its output or a model input; it must be a tensor of its own");
  }
  const Shape want = tm ? Shape{T, 1, H} : Shape{1, T, H};
  if (y.type != DType::F32 || y.shape != want) ctx.fail("output '" + y.name + "' must be float32 " + shape_str(want));
  if (op.options.own_arithmetic) return gru::make_own_arithmetic_gru(ctx, T, F, H);
  return std::make_unique<SequenceGru>(ctx, T, F, H);
}

}  // namespace tickinfer::tfl::ops
