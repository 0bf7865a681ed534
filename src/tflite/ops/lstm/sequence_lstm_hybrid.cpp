// Hybrid (dynamic-range) UNIDIRECTIONAL_SEQUENCE_LSTM: int8 weights, float input, states, biases.
//
// Per time step, as TFLite's LstmStepHybrid computes it: the input row and the output_state row
// are each quantized to int8 (symmetric, or asymmetric with a zero point when the op's
// asymmetric_quantize_inputs is set; an all-zero row is skipped), and every gate is
//   z = b + (W_x qx - zx rowsum(W_x)) (sx s_Wx) + (W_h qh - zh rowsum(W_h)) (sh s_Wh)
// in float, in that order; the peephole uses the dequantized int8 peephole weights; the gate
// activations (TFLite's own float logistic / tanh) and the cell update are the float LSTM's. A projection quantizes o .* act(c) the
// same way. All gates' rows are stacked so each step is one int8 gemv over x and one over h.
#include <algorithm>
#include <cstring>
#include <string>

#include "tflite/kernels/gemv_s8.hpp"
#include "tflite/kernels/hybrid_epilogue.hpp"
#include "tflite/kernels/quantize_rows.hpp"
#include "tflite/ops/lstm/lstm_s8_gates.hpp"
#include "tflite/ops/lstm/sequence_lstm_float_math.hpp"
#include "tflite/ops/lstm/sequence_lstm_variants.hpp"

namespace tickinfer::tfl::ops::lstm {

namespace {

// One int8 matrix (gates stacked), dense for the gemv kernels or block-sparse, and its row sums.
struct Int8Matrix {
  S8Gates m;
  std::vector<int32_t> row_sums;
};

class HybridLstm final : public PreparedOp {
 public:
  HybridLstm(const PrepareContext& ctx, const LstmOperands& o) : o_(o) {
    act_k_ = &kernels::tflite_float_activations(ctx.isa);
    gate_fn_ = kernels::hybrid_gate(ctx.isa);
    row_quant_ = &kernels::quantize_row_kernels(ctx.isa);
    act_ = fused_activation(ctx, ctx.op.options.activation);
    asymmetric_ = ctx.op.options.asymmetric_quantize_inputs;
    cell_clip_ = ctx.op.options.cell_clip;
    proj_clip_ = ctx.op.options.proj_clip;

    int gates = 0;
    // Stacked in the order i, c, o, f: the forget gate last, so a step from a zero cell state
    // (f .* c = 0 whatever f is) can leave its rows out of the gemvs.
    for (int g : {kInputGate, kCellGate, kOutputGate, kForgetGate}) gate_row_[g] = o.has_gate(g) ? o.n_cell * gates++ : -1;
    rows_ = gates * o.n_cell;
    init(wx_, rows_, o.n_input);
    init(wh_, rows_, o.n_output);
    bias_.assign(static_cast<size_t>(rows_), 0.0f);
    for (int g = 0; g < kGates; ++g) {
      if (gate_row_[g] < 0) continue;
      wx_scale_[g] = fill(ctx, wx_, gate_row_[g], o.input_weights[g], kInputToGate + g);
      wh_scale_[g] = fill(ctx, wh_, gate_row_[g], o.recurrent_weights[g], kRecurrentToGate + g);
      const std::vector<float> b = constant_as_f32(ctx, o.bias[g], operand_name(kGateBias + g));
      if (o.layer_norm) {
        ln_[g] = constant_as_f32(ctx, o.layer_norm_weights[g], operand_name(kLayerNorm + g));
        ln_bias_[g] = b;
      } else {
        std::copy(b.begin(), b.end(), bias_.begin() + gate_row_[g]);
      }
      if (o.peephole_weights[g] >= 0) {
        // TFLite multiplies the int8 peephole weights by their scale before use.
        const int operand = g == kInputGate ? kCellToInput : g == kForgetGate ? kCellToForget : kCellToOutput;
        const Tensor& p = ctx.program.tensors[static_cast<size_t>(o.peephole_weights[g])];
        const float s = weight_scale(ctx, p, operand);
        peephole_[g].resize(static_cast<size_t>(o.n_cell));
        for (int k = 0; k < o.n_cell; ++k) {
          peephole_[g][static_cast<size_t>(k)] = s * static_cast<float>(static_cast<int8_t>(p.data[static_cast<size_t>(k)]));
        }
      }
    }
    if (o.projection) {
      init(wp_, o.n_output, o.n_cell);
      wp_scale_ = fill(ctx, wp_, 0, o.projection_weights, kProjectionWeights);
      proj_bias_ = o.projection_bias >= 0 ? constant_as_f32(ctx, o.projection_bias, operand_name(kProjectionBias))
                                          : std::vector<float>(static_cast<size_t>(o.n_output), 0.0f);
    }
    // One kernel set for all the matrices, packed for it.
    const bool minus_128 = wx_.m.reaches_minus_128() || wh_.m.reaches_minus_128() ||
                           (o.projection && wp_.m.reaches_minus_128());
    s8_ = &kernels::s8_kernels(ctx.isa, minus_128);
    // Each dense or block-sparse, as measured here (lstm_s8_gates.hpp).
    wx_.m.finish(*s8_, ctx.options.sparse, ctx.isa, minus_128, "W_x");
    wh_.m.finish(*s8_, ctx.options.sparse, ctx.isa, minus_128, "W_h");
    if (o.projection) {
      wp_.m.finish(*s8_, ctx.options.sparse, ctx.isa, minus_128, "W_proj");
      qhidden_.assign(static_cast<size_t>(wp_.m.stride()), 0);
      acc_p_.assign(wp_.m.acc_rows(), 0);
    }
    qx_.assign(static_cast<size_t>(wx_.m.stride()), 0);
    qh_.assign(static_cast<size_t>(wh_.m.stride()), 0);
    acc_x_.assign(wx_.m.acc_rows(), 0);
    acc_h_.assign(wh_.m.acc_rows(), 0);
    z_.assign(static_cast<size_t>(rows_), 0.0f);
    hidden_.assign(static_cast<size_t>(o.n_cell), 0.0f);
    one_minus_f_.assign(static_cast<size_t>(o.n_cell), 0.0f);
  }

  void eval(const TensorMemory& mem) noexcept override {
    cell_base_ = mem.at<float>(o_.cell_state);
    o_.for_each_step<float, float>(mem, [this](const float* x, float* h, float* c, float* y) { step(x, h, c, y); });
  }

  std::string describe() const override {
    return std::string("UNIDIRECTIONAL_SEQUENCE_LSTM hybrid (int8 weights, float activations, ") +
           (asymmetric_ ? "asymmetric" : "symmetric") + " input quantization) time=" + std::to_string(o_.n_time) +
           " input=" + std::to_string(o_.n_input) + " cell=" + std::to_string(o_.n_cell) +
           " output=" + std::to_string(o_.n_output) + (o_.cifg ? " cifg" : "") + (o_.peephole ? " peephole" : "") +
           (o_.layer_norm ? " layer-norm" : "") + (o_.projection ? " projection" : "") + " gemv=" + s8_->name +
           " activations=" + act_k_->name + gate_notes(wx_.m, wh_.m, &wp_.m);
  }

  int64_t macs() const override {
    const int64_t per_step = int64_t{rows_} * (o_.n_input + o_.n_output) +
                             (o_.projection ? int64_t{o_.n_cell} * o_.n_output : 0);
    return per_step * o_.n_time * o_.n_batch;
  }

 private:
  static void init(Int8Matrix& m, int rows, int cols) {
    m.m.init(rows, cols);
    m.row_sums.assign(static_cast<size_t>(rows), 0);
  }

  static float weight_scale(const PrepareContext& ctx, const Tensor& t, int operand) {
    if (t.type != DType::I8) {
      ctx.fail(std::string("hybrid LSTM: ") + operand_name(operand) + " ('" + t.name + "') is " + dtype_name(t.type) +
               ", expected int8");
    }
    if (t.quant.scale.size() != 1 || !(t.quant.scale[0] > 0.0f)) {
      ctx.fail(std::string("hybrid LSTM: ") + operand_name(operand) + " ('" + t.name +
               "') needs one positive per-tensor scale (per-axis weights are not supported for LSTM)");
    }
    if (!t.quant.zero_point.empty() && t.quant.zero_point[0] != 0) {
      ctx.fail(std::string("hybrid LSTM: ") + operand_name(operand) + " ('" + t.name + "') must be symmetric (zero point 0)");
    }
    return t.quant.scale[0];
  }

  // Copies an int8 weight tensor [n, cols] into rows [row0, row0 + n) of m; returns its scale.
  static float fill(const PrepareContext& ctx, Int8Matrix& m, int row0, int tensor, int operand) {
    const Tensor& t = ctx.program.tensors[static_cast<size_t>(tensor)];
    const float scale = weight_scale(ctx, t, operand);
    const int n = t.shape[0];
    const auto* w = reinterpret_cast<const int8_t*>(t.data.data());
    m.m.set_rows(row0, w, n);
    kernels::row_sums_s8(w, n, m.m.cols(), m.row_sums.data() + row0);
    return scale;
  }

  // Quantizes a float row into q (TFLite's BatchQuantizeFloats); returns its scale and zero point.
  void quantize(const float* x, int n, int8_t* q, float* scale, int32_t* zp) const noexcept {
    if (asymmetric_) {
      kernels::quantize_row_asymmetric(*row_quant_, x, n, q, scale, zp);
    } else {
      *scale = kernels::quantize_row_symmetric(*row_quant_, x, n, q);
      *zp = 0;
    }
  }

  float* gate(int g) { return z_.data() + gate_row_[g]; }

  // Where TFLite's hybrid step keeps gate g of batch row b in its scratch buffer (input, cell,
  // forget, output; CIFG: cell, forget, output; n_batch rows per gate), in floats: the Eigen
  // traversal's packet/scalar split follows it (tflite_sigmoid_in_buffer).
  int64_t scratch_offset(int g, int64_t b) const noexcept {
    int slot = 0;
    switch (g) {
      case kInputGate: slot = 0; break;
      case kCellGate: slot = 1; break;
      case kForgetGate: slot = 2; break;
      default: slot = 3; break;
    }
    if (o_.cifg) --slot;
    return (int64_t{slot} * o_.n_batch + b) * o_.n_cell;
  }

  void step(const float* x, float* h, float* c, float* y) noexcept {
    const int n = o_.n_cell;
    const int64_t row = (c - cell_base_) / n;  // the batch row (for_each_step walks rows in order)
    const bool x_zero = all_zero(x, o_.n_input);
    const bool h_zero = all_zero(h, o_.n_output);
    // A zero cell state makes f .* c zero for any (finite) f: the forget gate, the last n rows, is
    // then not computed, unless CIFG derives the input gate from it.
    const bool need_forget = o_.cifg || !all_zero(c, n);
    const int rows = need_forget ? rows_ : rows_ - n;
    float sx = 1.0f, sh = 1.0f;
    int32_t zx = 0, zh = 0;
    if (!x_zero) {
      quantize(x, o_.n_input, qx_.data(), &sx, &zx);
      wx_.m.gemv(*s8_, rows, qx_.data(), acc_x_.data());
    }
    if (!h_zero) {
      quantize(h, o_.n_output, qh_.data(), &sh, &zh);
      wh_.m.gemv(*s8_, rows, qh_.data(), acc_h_.data());
    }
    for (int g = 0; g < kGates; ++g) {
      if (gate_row_[g] < 0 || (g == kForgetGate && !need_forget)) continue;
      const size_t r0 = static_cast<size_t>(gate_row_[g]);
      kernels::HybridGateSide xs, hs;
      if (!x_zero) xs = {acc_x_.data() + r0, wx_.row_sums.data() + r0, zx, sx * wx_scale_[g]};
      if (!h_zero) hs = {acc_h_.data() + r0, wh_.row_sums.data() + r0, zh, sh * wh_scale_[g]};
      gate_fn_(bias_.data() + r0, xs, hs, n, z_.data() + r0);
    }

    for (int g : {kInputGate, kForgetGate}) {
      if (gate_row_[g] < 0 || (g == kForgetGate && !need_forget)) continue;
      if (!peephole_[g].empty()) multiply_accumulate(peephole_[g].data(), c, gate(g), n);
      if (o_.layer_norm) layer_norm(gate(g), ln_[g].data(), ln_bias_[g].data(), n);
      kernels::tflite_sigmoid_in_buffer(*act_k_, gate(g), gate(g), n, scratch_offset(g, row));
    }
    if (o_.layer_norm) layer_norm(gate(kCellGate), ln_[kCellGate].data(), ln_bias_[kCellGate].data(), n);
    apply_fused_activation(*act_k_, act_, gate(kCellGate), gate(kCellGate), n);

    const float* f = gate(kForgetGate);
    const float* g = gate(kCellGate);
    const float* i = o_.cifg ? one_minus_f_.data() : gate(kInputGate);
    if (o_.cifg) {
      for (int k = 0; k < n; ++k) one_minus_f_[static_cast<size_t>(k)] = 1.0f - f[k];
    }
    if (need_forget) {
      for (int k = 0; k < n; ++k) c[k] = f[k] * c[k];
    }
    for (int k = 0; k < n; ++k) c[k] += g[k] * i[k];
    if (cell_clip_ > 0.0f) clip(c, n, cell_clip_);

    float* og = gate(kOutputGate);
    if (!peephole_[kOutputGate].empty()) multiply_accumulate(peephole_[kOutputGate].data(), c, og, n);
    if (o_.layer_norm) layer_norm(og, ln_[kOutputGate].data(), ln_bias_[kOutputGate].data(), n);
    kernels::tflite_sigmoid_in_buffer(*act_k_, og, og, n, scratch_offset(kOutputGate, row));
    apply_fused_activation(*act_k_, act_, c, hidden_.data(), n);
    for (int k = 0; k < n; ++k) hidden_[static_cast<size_t>(k)] *= og[k];

    if (o_.projection) {
      std::memcpy(h, proj_bias_.data(), sizeof(float) * static_cast<size_t>(o_.n_output));
      if (!all_zero(hidden_.data(), n)) {
        float sp = 1.0f;
        int32_t zp = 0;
        quantize(hidden_.data(), n, qhidden_.data(), &sp, &zp);
        wp_.m.gemv(*s8_, o_.n_output, qhidden_.data(), acc_p_.data());
        const float scale = sp * wp_scale_;
        for (int r = 0; r < o_.n_output; ++r) {
          const size_t k = static_cast<size_t>(r);
          h[r] += static_cast<float>(acc_p_[k] - zp * wp_.row_sums[k]) * scale;
        }
      }
      if (proj_clip_ > 0.0f) clip(h, o_.n_output, proj_clip_);
    } else {
      std::memcpy(h, hidden_.data(), sizeof(float) * static_cast<size_t>(n));
    }
    std::memcpy(y, h, sizeof(float) * static_cast<size_t>(o_.n_output));
  }

  LstmOperands o_;
  const float* cell_base_ = nullptr;  // this eval's cell state, to tell the batch row of a step
  const kernels::FloatActivationKernels* act_k_ = nullptr;
  kernels::HybridGateFn gate_fn_ = nullptr;
  const kernels::QuantizeRowKernels* row_quant_ = nullptr;
  const kernels::S8Kernels* s8_ = nullptr;
  FusedActivation act_ = FusedActivation::Tanh;
  bool asymmetric_ = false;
  float cell_clip_ = 0.0f, proj_clip_ = 0.0f;

  int gate_row_[kGates] = {-1, -1, -1, -1};  // first row of each present gate in the stacks
  int rows_ = 0;
  Int8Matrix wx_, wh_, wp_;
  float wx_scale_[kGates] = {}, wh_scale_[kGates] = {}, wp_scale_ = 1.0f;
  std::vector<float> bias_;  // [rows_]; zero when layer norm adds the bias later
  std::vector<float> peephole_[kGates], ln_[kGates], ln_bias_[kGates], proj_bias_;

  // Scratch, sized at prepare (the int8 rows padded to the gemv stride).
  std::vector<int8_t> qx_, qh_, qhidden_;
  std::vector<int32_t> acc_x_, acc_h_, acc_p_;
  std::vector<float> z_, hidden_, one_minus_f_;
};

}  // namespace

std::unique_ptr<PreparedOp> prepare_hybrid(const PrepareContext& ctx, const LstmOperands& o) {
  for (int t : {o.input, o.output, o.output_state, o.cell_state}) {
    const Tensor& tensor = ctx.program.tensors[static_cast<size_t>(t)];
    if (tensor.type != DType::F32) {
      ctx.fail("hybrid LSTM: tensor '" + tensor.name + "' is " + dtype_name(tensor.type) + ", expected float32");
    }
  }
  for (int g = 0; g < kGates; ++g) {
    if (!o.has_gate(g)) continue;
    const Tensor& b = ctx.program.tensors[static_cast<size_t>(o.bias[g])];
    if (b.type != DType::F32) ctx.fail(std::string("hybrid LSTM: ") + operand_name(kGateBias + g) + " must be float32");
  }
  return std::make_unique<HybridLstm>(ctx, o);
}

}  // namespace tickinfer::tfl::ops::lstm
