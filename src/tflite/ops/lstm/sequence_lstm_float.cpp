// Float UNIDIRECTIONAL_SEQUENCE_LSTM (also the bfloat16-weight form, widened to fp32 at prepare).
//
// Not the Keras LSTM cell (KernelSet::lstm_cell, src/kernels/cells_*; used by engine plans of
// .keras models), on purpose: this op must round as TFLite's interpreter does, so that the
// hybrid LSTM built on the same steps matches TFLite bit for bit and this one within 1e-5
// (docs/quant-lstm.md). It applies TFLite's Eigen logistic/tanh approximations
// (tflite/kernels/tflite_float_activations.hpp) where the Keras cell uses vector_math's accurate
// sigmoid/tanh (its SIMD sets fuse sigmoid(a) * tanh(b) into one quotient and c = f*c + i*g into
// FMAs); it rounds c = f .* c and c += g .* i separately, as LstmStepFloat does; and it has
// CIFG, peepholes, layer norm, cell and projection clipping and projection, which Keras' cell
// has not. Only the gate matmuls are shared: the engine's packed gemv.
//
// Per time step, as TFLite's LstmStepFloat computes it:
//   z_g = W_g x + U_g h + b_g                      for the gates g present (i, f, c, o)
//   (peephole: z_i += p_i .* c, z_f += p_f .* c)   with the old cell state
//   (layer norm: z_g = normalize(z_g) .* ln_g + b_g instead of adding b_g up front)
//   i = sigmoid(z_i) (CIFG: i = 1 - f), f = sigmoid(z_f), g = act(z_c)
//   c = f .* c + g .* i, clipped to [-cell_clip, cell_clip] when cell_clip > 0
//   (peephole: z_o += p_o .* c) with the new cell state;  o = sigmoid(z_o)
//   h = o .* act(c); with projection h = clip(P h + p_b, proj_clip)
// The gates' input weights are packed into one [n_input] x [gates * n_cell] matrix and their
// recurrent weights into one [n_output] x [gates * n_cell] matrix at prepare, so each step is one
// gemv over x (from the biases) and one over h (accumulating); the second is skipped while h is
// all zeros (a reset state), which adds exactly nothing. With bf16 weights the two matrices stay
// bf16 (half the bytes) in the same layout and go through the bf16 gemv, widened in registers.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "kernels/kernel_set.hpp"
#include "tflite/kernels/gemv_bf16.hpp"
#include "tflite/ops/lstm/sequence_lstm_float_math.hpp"
#include "tflite/ops/lstm/sequence_lstm_variants.hpp"

namespace tickinfer::tfl::ops::lstm {

namespace {

class FloatLstm final : public PreparedOp {
 public:
  FloatLstm(const PrepareContext& ctx, const LstmOperands& o, bool bf16) : o_(o), bf16_(bf16) {
    ks_ = &::tickinfer::kernels::kernel_set(ctx.isa);
    act_k_ = &kernels::tflite_float_activations(ctx.isa);
    act_ = fused_activation(ctx, ctx.op.options.activation);
    cell_clip_ = ctx.op.options.cell_clip;
    proj_clip_ = ctx.op.options.proj_clip;

    int gates = 0;
    for (int g = 0; g < kGates; ++g) gate_off_[g] = o.has_gate(g) ? n_cell() * gates++ : -1;
    N_ = gates * o.n_cell;

    // Dense [n_input x N] and [n_output x N] matrices W[k][gate block + c], then the kernel layout.
    std::vector<float> dense_x(static_cast<size_t>(o.n_input) * static_cast<size_t>(N_));
    std::vector<float> dense_h(static_cast<size_t>(o.n_output) * static_cast<size_t>(N_));
    bias_.assign(static_cast<size_t>(N_), 0.0f);
    for (int g = 0; g < kGates; ++g) {
      if (gate_off_[g] < 0) continue;
      const std::vector<float> wx = constant_as_f32(ctx, o.input_weights[g], operand_name(kInputToGate + g));
      const std::vector<float> wh = constant_as_f32(ctx, o.recurrent_weights[g], operand_name(kRecurrentToGate + g));
      const std::vector<float> b = constant_as_f32(ctx, o.bias[g], operand_name(kGateBias + g));
      for (int c = 0; c < o.n_cell; ++c) {
        const size_t col = static_cast<size_t>(gate_off_[g] + c);
        for (int k = 0; k < o.n_input; ++k) {
          dense_x[static_cast<size_t>(k) * N_ + col] = wx[static_cast<size_t>(c) * o.n_input + k];
        }
        for (int k = 0; k < o.n_output; ++k) {
          dense_h[static_cast<size_t>(k) * N_ + col] = wh[static_cast<size_t>(c) * o.n_output + k];
        }
      }
      if (o.layer_norm) {
        ln_[g] = constant_as_f32(ctx, o.layer_norm_weights[g], operand_name(kLayerNorm + g));
        ln_bias_[g] = b;
      } else {
        std::copy(b.begin(), b.end(), bias_.begin() + gate_off_[g]);
      }
      if (o.peephole_weights[g] >= 0) {
        const int operand = g == kInputGate ? kCellToInput : g == kForgetGate ? kCellToForget : kCellToOutput;
        peephole_[g] = constant_as_f32(ctx, o.peephole_weights[g], operand_name(operand));
      }
    }
    // Only when every gate matrix is bf16: truncating a float32 one would change it.
    for (int g = 0; g < kGates; ++g) {
      if (gate_off_[g] < 0) continue;
      for (int t : {o.input_weights[g], o.recurrent_weights[g]}) {
        if (ctx.program.tensors[static_cast<size_t>(t)].type != DType::BF16) bf16_weights_ = false;
      }
    }
    if (bf16_weights_) {
      gemv_bf16_ = ::tickinfer::tfl::kernels::bf16_gemv(ctx.isa);
      pack_bf16(dense_x, o.n_input, &w_x_bf16_);
      pack_bf16(dense_h, o.n_output, &w_h_bf16_);
    } else {
      w_x_.resize(::tickinfer::kernels::packed_floats(o.n_input, N_));
      ::tickinfer::kernels::pack_weights(dense_x.data(), o.n_input, N_, w_x_.data());
      w_h_.resize(::tickinfer::kernels::packed_floats(o.n_output, N_));
      ::tickinfer::kernels::pack_weights(dense_h.data(), o.n_output, N_, w_h_.data());
    }

    if (o.projection) {
      // P is [n_output, n_cell]; the gemv wants [K = n_cell] x [N = n_output].
      const std::vector<float> p = constant_as_f32(ctx, o.projection_weights, operand_name(kProjectionWeights));
      std::vector<float> pt(p.size());
      for (int r = 0; r < o.n_output; ++r) {
        for (int c = 0; c < o.n_cell; ++c) {
          pt[static_cast<size_t>(c) * o.n_output + r] = p[static_cast<size_t>(r) * o.n_cell + c];
        }
      }
      w_proj_.resize(::tickinfer::kernels::packed_floats(o.n_cell, o.n_output));
      ::tickinfer::kernels::pack_weights(pt.data(), o.n_cell, o.n_output, w_proj_.data());
      proj_bias_ = o.projection_bias >= 0
                       ? constant_as_f32(ctx, o.projection_bias, operand_name(kProjectionBias))
                       : std::vector<float>(static_cast<size_t>(o.n_output), 0.0f);
    }
    z_.assign(static_cast<size_t>(N_), 0.0f);
    hidden_.assign(static_cast<size_t>(o.n_cell), 0.0f);
    one_minus_f_.assign(static_cast<size_t>(o.n_cell), 0.0f);
  }

  void eval(const TensorMemory& mem) noexcept override {
    o_.for_each_step<float, float>(mem, [this](const float* x, float* h, float* c, float* y) { step(x, h, c, y); });
  }

  std::string describe() const override {
    return std::string("UNIDIRECTIONAL_SEQUENCE_LSTM ") + (bf16_ ? "fp32 (bf16 weights widened)" : "fp32") +
           " time=" + std::to_string(o_.n_time) + " input=" + std::to_string(o_.n_input) +
           " cell=" + std::to_string(o_.n_cell) + " output=" + std::to_string(o_.n_output) +
           (o_.cifg ? " cifg" : "") + (o_.peephole ? " peephole" : "") + (o_.layer_norm ? " layer-norm" : "") +
           (o_.projection ? " projection" : "") + " gemv=" + (bf16_weights_ ? gemv_bf16_.name : ks_->name);
  }

  int64_t macs() const override {
    const int64_t per_step = int64_t{o_.n_input + o_.n_output} * N_ + (o_.projection ? int64_t{o_.n_cell} * o_.n_output : 0);
    return per_step * o_.n_time * o_.n_batch;
  }

 private:
  int n_cell() const { return o_.n_cell; }
  float* gate(int g) { return z_.data() + gate_off_[g]; }

  // dense: [K x N_] floats widened from bf16, so taking their upper halves back is exact.
  void pack_bf16(const std::vector<float>& dense, int K, std::vector<uint16_t>* packed) {
    std::vector<uint16_t> bits(dense.size());
    for (size_t i = 0; i < dense.size(); ++i) {
      uint32_t u;
      std::memcpy(&u, &dense[i], 4);
      bits[i] = static_cast<uint16_t>(u >> 16);
    }
    packed->resize(::tickinfer::tfl::kernels::bf16_packed_elems(K, N_));
    ::tickinfer::tfl::kernels::pack_bf16_weights(bits.data(), K, N_, packed->data());
  }

  void step(const float* x, float* h, float* c, float* y) noexcept {
    const int n = o_.n_cell;
    constexpr float kInf = std::numeric_limits<float>::infinity();
    if (bf16_weights_) {
      gemv_bf16_.gemv(x, o_.n_input, w_x_bf16_.data(), N_, bias_.data(), z_.data(), -kInf, kInf);
      if (!all_zero(h, o_.n_output)) {
        gemv_bf16_.gemv(h, o_.n_output, w_h_bf16_.data(), N_, z_.data(), z_.data(), -kInf, kInf);
      }
    } else {
      ks_->gemv(x, o_.n_input, w_x_.data(), N_, bias_.data(), z_.data(), -kInf, kInf);
      if (!all_zero(h, o_.n_output)) ks_->gemv(h, o_.n_output, w_h_.data(), N_, z_.data(), z_.data(), -kInf, kInf);
    }

    for (int g : {kInputGate, kForgetGate}) {
      if (gate_off_[g] < 0) continue;
      if (!peephole_[g].empty()) multiply_accumulate(peephole_[g].data(), c, gate(g), n);
      if (o_.layer_norm) layer_norm(gate(g), ln_[g].data(), ln_bias_[g].data(), n);
      act_k_->sigmoid(gate(g), gate(g), n);
    }
    if (o_.layer_norm) layer_norm(gate(kCellGate), ln_[kCellGate].data(), ln_bias_[kCellGate].data(), n);
    apply_fused_activation(*act_k_, act_, gate(kCellGate), gate(kCellGate), n);

    // c = f .* c + g .* i in TFLite's order of roundings.
    const float* f = gate(kForgetGate);
    const float* g = gate(kCellGate);
    const float* i = o_.cifg ? one_minus_f_.data() : gate(kInputGate);
    if (o_.cifg) {
      for (int k = 0; k < n; ++k) one_minus_f_[static_cast<size_t>(k)] = 1.0f - f[k];
    }
    for (int k = 0; k < n; ++k) c[k] = f[k] * c[k];
    for (int k = 0; k < n; ++k) c[k] += g[k] * i[k];
    if (cell_clip_ > 0.0f) clip(c, n, cell_clip_);

    float* og = gate(kOutputGate);
    if (!peephole_[kOutputGate].empty()) multiply_accumulate(peephole_[kOutputGate].data(), c, og, n);
    if (o_.layer_norm) layer_norm(og, ln_[kOutputGate].data(), ln_bias_[kOutputGate].data(), n);
    act_k_->sigmoid(og, og, n);
    apply_fused_activation(*act_k_, act_, c, hidden_.data(), n);
    for (int k = 0; k < n; ++k) hidden_[static_cast<size_t>(k)] *= og[k];

    if (o_.projection) {
      constexpr float kInf = std::numeric_limits<float>::infinity();
      ks_->gemv(hidden_.data(), n, w_proj_.data(), o_.n_output, proj_bias_.data(), h, -kInf, kInf);
      if (proj_clip_ > 0.0f) clip(h, o_.n_output, proj_clip_);
    } else {
      std::memcpy(h, hidden_.data(), sizeof(float) * static_cast<size_t>(n));
    }
    std::memcpy(y, h, sizeof(float) * static_cast<size_t>(o_.n_output));
  }

  LstmOperands o_;
  bool bf16_;
  const ::tickinfer::kernels::KernelSet* ks_ = nullptr;
  const kernels::FloatActivationKernels* act_k_ = nullptr;
  FusedActivation act_ = FusedActivation::Tanh;
  float cell_clip_ = 0.0f, proj_clip_ = 0.0f;
  int gate_off_[kGates] = {-1, -1, -1, -1};  // offset of each present gate's block in z_
  int N_ = 0;                                 // gate rows: present gates x n_cell
  std::vector<float> w_x_, w_h_;              // [n_input | n_output] x N_, pack_weights layout
  bool bf16_weights_ = bf16_;                  // gate matrices kept bf16 (all of them are bf16)
  std::vector<uint16_t> w_x_bf16_, w_h_bf16_; // the same, bf16, when the weights are bf16 (w_x_, w_h_ empty)
  ::tickinfer::tfl::kernels::Bf16Gemv gemv_bf16_{::tickinfer::kernels::Isa::Scalar, "scalar",
                                                 ::tickinfer::tfl::kernels::gemv_bf16_scalar};
  std::vector<float> bias_;                   // [N_]; zero when layer norm adds the bias later
  std::vector<float> peephole_[kGates], ln_[kGates], ln_bias_[kGates];
  std::vector<float> w_proj_, proj_bias_;
  // Scratch, sized at prepare: gate pre-activations, o .* act(c), 1 - f (CIFG).
  std::vector<float> z_, hidden_, one_minus_f_;
};

}  // namespace

std::unique_ptr<PreparedOp> prepare_float(const PrepareContext& ctx, const LstmOperands& o) {
  for (int t : {o.input, o.output, o.output_state, o.cell_state}) {
    const Tensor& tensor = ctx.program.tensors[static_cast<size_t>(t)];
    if (tensor.type != DType::F32) {
      ctx.fail("float LSTM: tensor '" + tensor.name + "' is " + dtype_name(tensor.type) + ", expected float32");
    }
  }
  const bool bf16 = ctx.program.tensors[static_cast<size_t>(o.input_weights[kOutputGate])].type == DType::BF16;
  return std::make_unique<FloatLstm>(ctx, o, bf16);
}

}  // namespace tickinfer::tfl::ops::lstm
