// Integer UNIDIRECTIONAL_SEQUENCE_LSTM, TFLite's "8x8_16" kernel bit for bit: int8 input and
// output_state, int16 cell_state (scale 2^cell_scale), int8 weights, int32 biases, int16 gates.
//
// Prepare follows TFLite's PopulateQuantizedLstmParams8x8_16 and
// PopulatePrecomputedZPTimesWeightsWithBias: gate pre-activations are Q3.12 (scale 2^-12), the
// effective scales weight_scale * input_scale / 2^-12 are formed in float and split into
// multiplier and shift; the zero-point terms are folded into per-row biases
//   bias_x = gate_bias - input_zp * rowsum(W_x),  bias_h = -output_state_zp * rowsum(W_h),
//   bias_p = projection_bias + hidden_zp * rowsum(P).
// The hidden zero point's sign differs by path, as in the PyPI interpreters: without a
// projection the hidden state is the output (MBQM + hidden_zp); with one, TFLite subtracts it in
// the hidden requantization and adds it back through bias_p. The two agree until the int8 clamp
// of the hidden state bites, which calibrated converter files rarely reach and the random models
// of tests/quant_fidelity_test did (11 of 12 projection LSTMs off, up to 125 steps, before).
// Per step (LstmStepInteger8x8_16):
//   gate = sat16(MBQM(bias_x + W_x x, m_x)); gate = sat16(MBQM(bias_h + W_h h, m_h) + gate)
//   (peephole: gate = sat16(gate + MBQM(p .* c, m_p)))
//   i, f, o = logistic(Q3 -> Q0); g = tanh(Q3 -> Q0)
//   c = sat16(rdivpot(f c, 15) + rdivpot(i g, 30 + cell_scale)) (CIFG: i = 32767 - f), clipped
//   h = int8(clamp(MBQM(o tanh(c), m_hidden) +- hidden_zp))  (tanh on Q(15 + cell_scale); - with a projection)
//   (projection: h = clamp(MBQM(bias_p + P h, m_proj) + output_state_zp), then clipped to
//    [-clip, clip] in raw int8 units, around 0 and not the zero point, as TFLite does)
// MBQM is MultiplyByQuantizedMultiplier. The gate (and projection) matmuls always round twice:
// TFLite's int8 LSTM matmul path does so even in the PyPI builds whose other kernels round once
// (measured: single rounding there leaves 169 of 8192 big_seq_int8 outputs one step off, double
// none). The elementwise requantizations (peephole, hidden state) follow the interpreter's
// rounding mode, as TFLite's portable tensor utils do. All gates' rows are stacked so each step
// is one int8 gemv over h; the input terms sat16(MBQM(bias_x + W_x x, m_x)), which do not depend
// on the state, are made for a chunk of steps at once (one gemm over the chunk's inputs).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "tflite/fixed_point.hpp"
#include "tflite/kernels/gemv_s8.hpp"
#include "tflite/ops/lstm/lstm_s8_gates.hpp"
#include "tflite/ops/lstm/lstm_vnni_gates.hpp"
#include "tflite/ops/op_support.hpp"
#include "tflite/ops/lstm/sequence_lstm_int16_math.hpp"
#include "tflite/ops/lstm/sequence_lstm_int8_kernels.hpp"
#include "tflite/ops/lstm/sequence_lstm_int8_operands.hpp"
#include "tflite/ops/lstm/sequence_lstm_variants.hpp"

namespace tickinfer::tfl::ops::lstm {

namespace {

inline int32_t wrapping_add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
inline int32_t clamp16(int32_t v) { return std::min(32767, std::max(-32768, v)); }
// x + 128 as u8 (x ^ 0x80), what the VNNI form reads.
inline void offset_to_u8(const int8_t* x, int n, int8_t* out) {
  for (int i = 0; i < n; ++i) out[i] = static_cast<int8_t>(static_cast<uint8_t>(x[i]) ^ 0x80u);
}
// Both tests run every step: eight bytes per turn, the rest one at a time.
inline bool all_zero16(const int16_t* x, int n) {
  const auto* b = reinterpret_cast<const unsigned char*>(x);
  const size_t bytes = 2 * static_cast<size_t>(n);
  uint64_t bits = 0;
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w;
    std::memcpy(&w, b + i, 8);
    bits |= w;
  }
  for (; i < bytes; ++i) bits |= b[i];
  return bits == 0;
}
inline bool all_equal(const int8_t* x, int n, int8_t v) {
  const uint64_t pattern = static_cast<uint8_t>(v) * 0x0101010101010101ull;
  uint64_t diff = 0;
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, x + i, 8);
    diff |= w ^ pattern;
  }
  for (; i < n; ++i) diff |= static_cast<uint8_t>(x[i] ^ v);
  return diff == 0;
}

struct Scale {
  int32_t multiplier = 0;
  int shift = 0;
};

class Int8Lstm final : public PreparedOp {
 public:
  Int8Lstm(const PrepareContext& ctx, const LstmOperands& o) : o_(o), ctx_(&ctx) {
    const OpOptions& opt = ctx.op.options;
    rounding_ = ctx.options.rounding;
    step_kernels_ = &int8_lstm_kernels(ctx.isa);

    // Scales of the activations and states.
    const float input_scale = scale_of(ctx, o.input, "input", &input_zp_);
    const float output_state_scale = scale_of(ctx, o.output_state, "output_state", &output_state_zp_);
    const float cell_scale_f = scale_of(ctx, o.cell_state, "cell_state");
    if (!checked_log2(cell_scale_f, &cell_scale_)) {
      ctx.fail("cell_state scale " + std::to_string(cell_scale_f) + " is not a power of two");
    }
    // tanh of the cell state runs on Q(15 + cell_scale), which TFLite supports for 0..6 integer bits.
    if (cell_scale_ < -15 || cell_scale_ > -9) {
      ctx.fail("cell_state scale 2^" + std::to_string(cell_scale_) + " is outside 2^-15 .. 2^-9");
    }
    if (ctx.op.intermediates.size() != 5) {
      ctx.fail("expects the 5 intermediates of the 8x8_16 integer LSTM, got " +
               std::to_string(ctx.op.intermediates.size()) +
               (ctx.op.intermediates.size() == 12 ? " (the 8x8_8 variant is not supported)" : ""));
    }
    const int hidden = ctx.op.intermediates[4];
    if (hidden < 0 || static_cast<size_t>(hidden) >= ctx.program.tensors.size()) ctx.fail("intermediate 4 is missing");
    const float hidden_scale = scale_of(ctx, hidden, "intermediate 4 (effective hidden scale)", &hidden_zp_);
    const float output_scale = scale_of(ctx, o.output, "output");

    // Quantized clips.
    quantized_cell_clip_ = opt.cell_clip > 0.0f
                               ? static_cast<int16_t>(std::min(std::max(opt.cell_clip / cell_scale_f, -32768.0f), 32767.0f))
                               : 0;
    quantized_proj_clip_ = opt.proj_clip > 0.0f
                               ? static_cast<int8_t>(std::min(std::max(opt.proj_clip / output_scale, -128.0f), 127.0f))
                               : 0;

    // Gate rows, stacked: the present gates' n_cell rows each.
    int gates = 0;
    // Stacked in the order c, i, o, f: the forget gate last, so a step from a zero cell state
    // (f .* c = 0 whatever f is) can leave its rows out of the gemvs; the logistic gates together,
    // so one call applies it to all of them.
    for (int g : {kCellGate, kInputGate, kOutputGate, kForgetGate}) gate_row_[g] = o.has_gate(g) ? o.n_cell * gates++ : -1;
    rows_ = gates * o.n_cell;
    wx_.init(rows_, o.n_input);
    wh_.init(rows_, o.n_output);
    bias_x_.assign(static_cast<size_t>(rows_), 0);
    // Row-major copies for the VNNI form (lstm_vnni_gates.hpp).
    std::vector<int8_t> wx_plain(static_cast<size_t>(rows_) * static_cast<size_t>(o.n_input));
    std::vector<int8_t> wh_plain(static_cast<size_t>(rows_) * static_cast<size_t>(o.n_output));
    bias_h_.assign(static_cast<size_t>(rows_), 0);
    acc_h_zero_state_.assign(static_cast<size_t>(rows_), 0);

    const float intermediate_scale = std::pow(2.0f, -12.0f);  // Q3.12 gates (no layer norm)
    for (int g = 0; g < kGates; ++g) {
      if (gate_row_[g] < 0) continue;
      const Tensor& wx = tensor_of(ctx, o.input_weights[g]);
      const Tensor& wh = tensor_of(ctx, o.recurrent_weights[g]);
      const float wx_scale = scale_of(ctx, o.input_weights[g], operand_name(kInputToGate + g));
      const float wh_scale = scale_of(ctx, o.recurrent_weights[g], operand_name(kRecurrentToGate + g));
      // Formed in float, as TFLite does, then split.
      const float eff_x = wx_scale * input_scale / intermediate_scale;
      const float eff_h = wh_scale * output_state_scale / intermediate_scale;
      gate_x_[g] = split(eff_x, Rounding::Double);
      gate_h_[g] = split(eff_h, Rounding::Double);

      const auto* wxd = reinterpret_cast<const int8_t*>(wx.data.data());
      const auto* whd = reinterpret_cast<const int8_t*>(wh.data.data());
      const size_t row0 = static_cast<size_t>(gate_row_[g]);
      wx_.set_rows(gate_row_[g], wxd, o.n_cell);
      wh_.set_rows(gate_row_[g], whd, o.n_cell);
      std::memcpy(wx_plain.data() + row0 * static_cast<size_t>(o.n_input), wxd,
                  static_cast<size_t>(o.n_cell) * static_cast<size_t>(o.n_input));
      std::memcpy(wh_plain.data() + row0 * static_cast<size_t>(o.n_output), whd,
                  static_cast<size_t>(o.n_cell) * static_cast<size_t>(o.n_output));
      std::vector<int32_t> sums_x(static_cast<size_t>(o.n_cell)), sums_h(static_cast<size_t>(o.n_cell));
      kernels::row_sums_s8(wxd, o.n_cell, o.n_input, sums_x.data());
      kernels::row_sums_s8(whd, o.n_cell, o.n_output, sums_h.data());
      const std::vector<int32_t> bias = constant_values<int32_t>(tensor_of(ctx, o.bias[g]));
      for (int r = 0; r < o.n_cell; ++r) {
        const size_t k = static_cast<size_t>(r);
        // TFLite's MatrixScalarMultiplyAccumulate: bias += rowsum * (-zero_point), in int32.
        bias_x_[row0 + k] = wrapping_add(bias[k], static_cast<int32_t>(static_cast<uint32_t>(sums_x[k]) *
                                                                       static_cast<uint32_t>(-input_zp_)));
        bias_h_[row0 + k] = static_cast<int32_t>(static_cast<uint32_t>(sums_h[k]) *
                                                 static_cast<uint32_t>(-output_state_zp_));
        acc_h_zero_state_[row0 + k] = static_cast<int32_t>(static_cast<uint32_t>(sums_h[k]) *
                                                           static_cast<uint32_t>(output_state_zp_));
      }
      if (o.peephole_weights[g] >= 0) {
        const int operand = g == kInputGate ? kCellToInput : g == kForgetGate ? kCellToForget : kCellToOutput;
        const float p_scale = scale_of(ctx, o.peephole_weights[g], operand_name(operand));
        peephole_[g] = constant_values<int16_t>(tensor_of(ctx, o.peephole_weights[g]));
        // std::pow on ints is double in TFLite's expression; the result is stored as float.
        peephole_scale_[g] = split(static_cast<float>(std::pow(2.0, cell_scale_) * p_scale / intermediate_scale));
      }
    }
    // TFLite applies the peephole over n_output elements (equal to n_cell without projection).
    if (o.peephole && o.n_output > o.n_cell) ctx.fail("peephole with projection to n_output > n_cell is not supported");
    peephole_count_ = std::min(o.n_output, o.n_cell);

    // The recurrent term of a state at its zero point, requantized once (see step()).
    h_term_zero_state_.assign(static_cast<size_t>(rows_), 0);
    for (int g = 0; g < kGates; ++g) {
      if (gate_row_[g] < 0) continue;
      for (int r = gate_row_[g]; r < gate_row_[g] + o.n_cell; ++r) {
        const size_t k = static_cast<size_t>(r);
        h_term_zero_state_[k] = mbqm<Rounding::Double>(wrapping_add(bias_h_[k], acc_h_zero_state_[k]), gate_h_[g]);
      }
    }

    hidden_scale_ = split(static_cast<float>(std::pow(2.0, -15) / hidden_scale * std::pow(2.0, -15)));
    if (o.projection) {
      const Tensor& p = tensor_of(ctx, o.projection_weights);
      const float p_scale = scale_of(ctx, o.projection_weights, operand_name(kProjectionWeights));
      proj_scale_ = split(p_scale * hidden_scale / output_state_scale, Rounding::Double);
      wp_.init(o.n_output, o.n_cell);
      const auto* pd = reinterpret_cast<const int8_t*>(p.data.data());
      wp_.set_rows(0, pd, o.n_output);
      std::vector<int32_t> sums(static_cast<size_t>(o.n_output));
      kernels::row_sums_s8(pd, o.n_output, o.n_cell, sums.data());
      bias_p_.assign(static_cast<size_t>(o.n_output), 0);
      if (o.projection_bias >= 0) bias_p_ = constant_values<int32_t>(tensor_of(ctx, o.projection_bias));
      for (int r = 0; r < o.n_output; ++r) {
        const size_t k = static_cast<size_t>(r);
        bias_p_[k] = wrapping_add(bias_p_[k], static_cast<int32_t>(static_cast<uint32_t>(sums[k]) *
                                                                 static_cast<uint32_t>(hidden_zp_)));
      }
    }

    sigmoid_ = fx16::logistic_q3_activation();
    tanh_gate_ = fx16::tanh_activation(3);
    tanh_cell_ = fx16::tanh_activation(15 + cell_scale_);

    // One kernel set for all the matrices, packed for it.
    const bool minus_128 = wx_.reaches_minus_128() || wh_.reaches_minus_128() || (o.projection && wp_.reaches_minus_128());
    s8_ = &kernels::s8_kernels(ctx.isa, minus_128);
    // Each matrix dense or block-sparse, as measured here (lstm_s8_gates.hpp).
    wx_.finish(*s8_, ctx.options.sparse, ctx.isa, minus_128, "W_x");
    wh_.finish(*s8_, ctx.options.sparse, ctx.isa, minus_128, "W_h");
    if (o.projection) wp_.finish(*s8_, ctx.options.sparse, ctx.isa, minus_128, "W_proj");

    pack_vnni(wx_plain, wh_plain);
    wx_plain_ = std::move(wx_plain);
    wh_plain_ = std::move(wh_plain);
    allocate_scratch();
    run_ = rounding_ == Rounding::Double ? &Int8Lstm::run<Rounding::Double> : &Int8Lstm::run<Rounding::Single>;
    choose_activations(ctx.options.lstm_activations);
    ctx_ = nullptr;  // prepare-time only
  }

  void eval(const TensorMemory& mem) noexcept override { (this->*run_)(mem); }

  // Where the form was left to timing and the kernel set has both, the Interpreter times them
  // over whole invokes too (PreparedOp::has_timed_forms): 0 tables, 1 computed.
  bool has_timed_forms() const override { return forms_timed_; }
  const char* timed_form_name(int form) const override { return form_at(form).name; }
  int initial_form() const override { return initial_form_; }
  void use_form(int form) noexcept override { activations_ = &form_at(form); }
  void note_timed_forms(const std::string& note) override { activations_note_ += "; " + note; }

  std::string describe() const override {
    return std::string("UNIDIRECTIONAL_SEQUENCE_LSTM int8 8x8_16 time=") + std::to_string(o_.n_time) +
           " input=" + std::to_string(o_.n_input) + " cell=" + std::to_string(o_.n_cell) +
           " output=" + std::to_string(o_.n_output) + " cell_scale=2^" + std::to_string(cell_scale_) +
           (o_.cifg ? " cifg" : "") + (o_.peephole ? " peephole" : "") + (o_.projection ? " projection" : "") +
           " rounding=matmul double, elementwise " + (rounding_ == Rounding::Double ? "double" : "single") +
           " gemv=" + s8_->name + " step=" + step_kernels_->name + " activations=" + activations_->name +
           gate_notes(wx_, wh_, &wp_) + (activations_note_.empty() ? "" : "; " + activations_note_);
  }

  // The plain form only (no peephole, projection, CIFG): the stacked matrices, the folded biases,
  // each row's gate scales, the clip and hidden scale, and the CPU's own activation tables.
  bool integer_form(std::vector<IntegerForm>* forms) const override {
    if (o_.peephole || o_.projection || o_.cifg || o_.n_output != o_.n_cell) return false;
    IntegerForm& f = forms->emplace_back();
    f.kind = IntegerKind::Lstm;
    f.inputs = {o_.input};
    f.output = o_.output;
    f.count = int64_t{o_.n_batch} * o_.n_time * o_.n_output;
    IntegerLstmForm& l = f.lstm;
    l.batch = o_.n_batch, l.time = o_.n_time, l.input = o_.n_input, l.cell = o_.n_cell;
    l.time_major = o_.time_major;
    l.rows = rows_;
    for (int g = 0; g < kGates; ++g) l.gate_row[g] = gate_row_[g];
    l.wx = wx_plain_;
    l.wh = wh_plain_;
    l.bias_x = bias_x_;
    l.bias_h = bias_h_;
    for (std::vector<int32_t>* v : {&l.mult_x, &l.shift_x, &l.mult_h, &l.shift_h}) v->assign(size_t(rows_), 0);
    for (int g = 0; g < kGates; ++g)
      for (int r = gate_row_[g]; r < gate_row_[g] + o_.n_cell; ++r) {
        const size_t k = size_t(r);
        l.mult_x[k] = gate_x_[g].multiplier, l.shift_x[k] = gate_x_[g].shift;
        l.mult_h[k] = gate_h_[g].multiplier, l.shift_h[k] = gate_h_[g].shift;
      }
    l.cell_shift = 30 + cell_scale_;
    l.cell_clip = quantized_cell_clip_;
    l.hidden_multiplier = hidden_scale_.multiplier, l.hidden_shift = hidden_scale_.shift, l.hidden_zp = hidden_zp_;
    l.state_zp = output_state_zp_;
    l.elementwise = rounding_ == Rounding::Double ? RequantForm::Double : RequantForm::Single;
    l.sigmoid = sigmoid_.table->data();
    l.tanh_gate = tanh_gate_.table->data();
    l.tanh_cell = tanh_cell_.table->data();
    l.state_h = o_.output_state;
    l.state_c = o_.cell_state;
    return true;
  }

  int64_t macs() const override {
    const int64_t per_step = int64_t{rows_} * (o_.n_input + o_.n_output) +
                             (o_.projection ? int64_t{o_.n_cell} * o_.n_output : 0);
    return per_step * o_.n_time * o_.n_batch;
  }

 private:
  // Effective scales beyond 2^30 (left shifts past 30) would overflow every int32 product: such
  // parameters come only from a broken file.
  Scale split(float m, Rounding r) const {
    const QuantizedMultiplier q = quantize_multiplier(static_cast<double>(m), r);
    if (!std::isfinite(m) || m < 0.0f || q.shift > 30) {
      ctx_->fail("an effective scale of the integer LSTM (" + std::to_string(m) + ") is not a usable multiplier");
    }
    return {q.multiplier, q.shift};
  }
  Scale split(float m) const { return split(m, rounding_); }

  template <Rounding R>
  static int32_t mbqm(int32_t x, Scale s) noexcept {
    return multiply_by_quantized_multiplier<R>(x, s.multiplier, s.shift);
  }

  // Each batch entry's steps in chunks of up to kChunk: the chunk's input terms first, then its
  // steps in order. A chunk's gemm loads each weight of W_x once for several steps, and its
  // requantizations run in long loops off the steps' dependency chain.
  static constexpr int kChunk = 16;

  template <Rounding R>
  void run(const TensorMemory& mem) noexcept {
    const int8_t* in = mem.at<int8_t>(o_.input);
    int8_t* out = mem.at<int8_t>(o_.output);
    for (int b = 0; b < o_.n_batch; ++b) {
      int8_t* h = mem.at<int8_t>(o_.output_state) + static_cast<size_t>(b) * static_cast<size_t>(o_.n_output);
      int16_t* c = mem.at<int16_t>(o_.cell_state) + static_cast<size_t>(b) * static_cast<size_t>(o_.n_cell);
      for (int t0 = 0; t0 < o_.n_time; t0 += kChunk) {
        const int len = std::min(kChunk, o_.n_time - t0);
        // A lone step from a zero cell state (a one-step window) needs no forget gate (step()).
        const bool forget_unused = len == 1 && !o_.cifg && all_zero16(c, o_.n_cell);
        input_terms(in, b, t0, len, forget_unused ? rows_ - o_.n_cell : rows_);
        for (int j = 0; j < len; ++j) {
          step<R>(gx_.data() + static_cast<size_t>(j) * static_cast<size_t>(gate_stride_), h, c,
                  out + o_.output_row(b, t0 + j));
        }
      }
    }
  }

  // gx_[j] = the sat16(MBQM(bias_x + W_x x, m_x)) of the gates in rows [0, used_rows) (every
  // gate, or all but the forget gate stacked last) for the inputs of steps t0 + j.
  void input_terms(const int8_t* in, int b, int t0, int len, int used_rows) noexcept {
    const size_t stride = static_cast<size_t>(x_stride_);
    const size_t gx_stride = static_cast<size_t>(gate_stride_);
    if (!vnni_x_.empty()) {  // x offset to u8 as it is copied
      for (int j = 0; j < len; ++j) offset_to_u8(in + o_.input_row(b, t0 + j), o_.n_input, xs_.data() + j * stride);
      vnni_x_.input_terms(reinterpret_cast<const uint8_t*>(xs_.data()), stride, len, used_rows, gx_.data(), gx_stride);
      return;
    }
    for (int j = 0; j < len; ++j) {
      std::memcpy(xs_.data() + static_cast<size_t>(j) * stride, in + o_.input_row(b, t0 + j),
                  static_cast<size_t>(o_.n_input));
    }
    if (len == 1) {
      wx_.gemv(*s8_, used_rows, xs_.data(), acc_xs_.data());
    } else {
      wx_.gemm(*s8_, xs_.data(), len, acc_xs_.data());
    }
    for (int j = 0; j < len; ++j) {
      const int32_t* acc = acc_xs_.data() + static_cast<size_t>(j) * wx_.acc_rows();
      int16_t* gx = gx_.data() + static_cast<size_t>(j) * gx_stride;
      for (int g = 0; g < kGates; ++g) {
        if (gate_row_[g] < 0 || gate_row_[g] >= used_rows) continue;
        const size_t r0 = static_cast<size_t>(gate_row_[g]);
        step_kernels_->gate_input(acc + r0, bias_x_.data() + r0, o_.n_cell, gate_x_[g].multiplier, gate_x_[g].shift,
                                  gx + r0);
      }
    }
  }

  // Dense matrices on the VNNI set take the fused form: sums requantized in registers, each row
  // with its gate's scale.
  void pack_vnni(const std::vector<int8_t>& wx_plain, const std::vector<int8_t>& wh_plain) {
    if (s8_->isa != ::tickinfer::kernels::Isa::Avx512) return;
    std::vector<int32_t> m(static_cast<size_t>(rows_)), s(m.size());
    const auto per_row = [&](const Scale* scales) {
      for (int g = 0; g < kGates; ++g) {
        if (gate_row_[g] < 0) continue;
        std::fill_n(m.begin() + gate_row_[g], o_.n_cell, scales[g].multiplier);
        std::fill_n(s.begin() + gate_row_[g], o_.n_cell, scales[g].shift);
      }
    };
    if (!wx_.sparse()) {
      per_row(gate_x_);
      vnni_x_.init(wx_plain.data(), rows_, o_.n_input, bias_x_.data(), m.data(), s.data());
    }
    if (!wh_.sparse()) {
      per_row(gate_h_);
      vnni_h_.init(wh_plain.data(), rows_, o_.n_output, bias_h_.data(), m.data(), s.data());
    }
  }

  // The run's scratch, sized once for the matrices' forms.
  void allocate_scratch() {
    gate_stride_ = (rows_ + VnniGates::kGroupRows - 1) / VnniGates::kGroupRows * VnniGates::kGroupRows;
    x_stride_ = std::max(wx_.stride(), vnni_x_.empty() ? 0 : vnni_x_.x_bytes());
    xs_.assign(static_cast<size_t>(kChunk) * static_cast<size_t>(x_stride_), 0);
    acc_xs_.assign(vnni_x_.empty() ? static_cast<size_t>(kChunk) * wx_.acc_rows() : 0, 0);
    gx_.assign(static_cast<size_t>(kChunk) * static_cast<size_t>(gate_stride_), 0);
    h_.assign(static_cast<size_t>(std::max(wh_.stride(), vnni_h_.empty() ? 0 : vnni_h_.x_bytes())), 0);
    acc_h_.assign(wh_.acc_rows(), 0);
    gate_.assign(static_cast<size_t>(gate_stride_), 0);
    hidden_.assign(static_cast<size_t>(o_.projection ? wp_.stride() : o_.n_cell), 0);
    acc_p_.assign(o_.projection ? wp_.acc_rows() : 0, 0);
  }

  // The activation form, by timing this LSTM's own step with each (choose_int8_activations), from
  // a state off its zero point (so every gemv runs) with varied input terms.
  void choose_activations(ActivationForm wanted) {
    std::vector<int8_t> h(static_cast<size_t>(o_.n_output)), y(h.size());
    std::vector<int16_t> c(static_cast<size_t>(o_.n_cell));
    for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<int8_t>(static_cast<int>((i * 37u) % 200u) - 100);
    for (size_t i = 0; i < c.size(); ++i) c[i] = static_cast<int16_t>(static_cast<int>((i * 7919u) % 16384u) - 8192);
    for (size_t i = 0; i < gx_.size(); ++i) gx_[i] = static_cast<int16_t>(static_cast<int>((i * 104729u) % 16384u) - 8192);
    const auto step_with = [&](const Int8Activations& form) {
      activations_ = &form;
      if (rounding_ == Rounding::Double) {
        step<Rounding::Double>(gx_.data(), h.data(), c.data(), y.data());
      } else {
        step<Rounding::Single>(gx_.data(), h.data(), c.data(), y.data());
      }
    };
    Int8ActivationChoice choice = choose_int8_activations(*step_kernels_, wanted, step_with);
    activations_ = choice.form;
    activations_note_ = std::move(choice.note);
    forms_timed_ = !activations_note_.empty();  // Auto, and both forms there
    initial_form_ = activations_ == &step_kernels_->table ? 0 : 1;
  }

  const Int8Activations& form_at(int form) const noexcept {
    return form == 0 ? step_kernels_->table : step_kernels_->computed;
  }

  // gate += MBQM(p .* c) saturated, over TFLite's peephole length.
  template <Rounding R>
  void peephole(int g, const int16_t* c, int16_t* gate) const noexcept {
    const int16_t* p = peephole_[g].data();
    for (int k = 0; k < peephole_count_; ++k) {
      gate[k] = static_cast<int16_t>(clamp16(mbqm<R>(int32_t{p[k]} * c[k], peephole_scale_[g]) + gate[k]));
    }
  }

  // gate_ = the pre-activations of the gates in rows [0, rows): the input terms gx plus the
  // recurrent term. A state at its zero point (real 0: just reset, as in window mode) makes W_h h
  // the precomputed zp * rowsum(W_h), so the recurrent gemv is skipped with the same result, and
  // so is its requantization (h_term_zero_state_). Without the forget gate (need_forget false) its
  // requantization is skipped too: f only scales the old cell state (rdivpot(f c, 15) is 0 for
  // c = 0 whatever f is), so the stale values left in its rows of gate_ multiply c = 0.
  void make_gates(const int16_t* gx, const int8_t* h, int rows, bool need_forget) noexcept {
    const int n = o_.n_cell;
    const bool zero_state = all_equal(h, o_.n_output, static_cast<int8_t>(output_state_zp_));
    if (!zero_state && !vnni_h_.empty()) {  // every gate at once, requantized in registers
      offset_to_u8(h, o_.n_output, h_.data());
      vnni_h_.recurrent(reinterpret_cast<const uint8_t*>(h_.data()), rows, gx, gate_.data());
      return;
    }
    if (!zero_state) {
      std::memcpy(h_.data(), h, static_cast<size_t>(o_.n_output));
      wh_.gemv(*s8_, rows, h_.data(), acc_h_.data());
    }
    for (int g = 0; g < kGates; ++g) {
      if (gate_row_[g] < 0 || (g == kForgetGate && !need_forget)) continue;
      const size_t r0 = static_cast<size_t>(gate_row_[g]);
      if (zero_state) {
        step_kernels_->gate_const_h(h_term_zero_state_.data() + r0, gx + r0, n, gate_.data() + r0);
      } else {
        step_kernels_->gate_recurrent(acc_h_.data() + r0, bias_h_.data() + r0, gx + r0, n, gate_h_[g].multiplier,
                                      gate_h_[g].shift, gate_.data() + r0);
      }
    }
  }

  template <Rounding R>
  void step(const int16_t* gx, int8_t* h, int16_t* c, int8_t* y) noexcept {
    const int n = o_.n_cell;
    // A zero cell state (window mode's first step) makes f .* c zero for any f: the forget gate
    // (the last n rows) is then not computed, unless CIFG derives the input gate from it.
    const bool need_forget = o_.cifg || !all_zero16(c, n);
    const int rows = need_forget ? rows_ : rows_ - n;
    make_gates(gx, h, rows, need_forget);
    int16_t* ig = o_.cifg ? nullptr : gate_.data() + gate_row_[kInputGate];
    int16_t* fg = gate_.data() + gate_row_[kForgetGate];
    int16_t* cg = gate_.data() + gate_row_[kCellGate];
    int16_t* og = gate_.data() + gate_row_[kOutputGate];
    if (!o_.peephole) {
      // The logistic gates are the rows after the cell gate's: one call, the vectors side by side.
      const int first = gate_row_[kCellGate] + n;
      activations_->activate(sigmoid_, gate_.data() + first, rows - first);
      activations_->activate(tanh_gate_, cg, n);
      step_kernels_->cell(ig, fg, cg, n, 30 + cell_scale_, quantized_cell_clip_, c);
    } else {
      // The output gate's peephole reads the updated cell state, so o waits for the cell update.
      if (ig) {
        if (!peephole_[kInputGate].empty()) peephole<R>(kInputGate, c, ig);
        activations_->activate(sigmoid_, ig, n);
      }
      if (need_forget) {
        if (!peephole_[kForgetGate].empty()) peephole<R>(kForgetGate, c, fg);
        activations_->activate(sigmoid_, fg, n);
      }
      activations_->activate(tanh_gate_, cg, n);
      step_kernels_->cell(ig, fg, cg, n, 30 + cell_scale_, quantized_cell_clip_, c);
      if (!peephole_[kOutputGate].empty()) peephole<R>(kOutputGate, c, og);
      activations_->activate(sigmoid_, og, n);
    }

    // Hidden state: o .* tanh(c), requantized to int8 (CwiseMul with a quantized multiplier).
    (R == Rounding::Double ? activations_->hidden_double : activations_->hidden_single)(
        og, c, tanh_cell_, n, hidden_scale_.multiplier, hidden_scale_.shift,
        o_.projection ? -hidden_zp_ : hidden_zp_, hidden_.data());
    if (o_.projection) {
      wp_.gemv(*s8_, o_.n_output, hidden_.data(), acc_p_.data());
      for (int r = 0; r < o_.n_output; ++r) {
        const size_t k = static_cast<size_t>(r);
        int32_t v = mbqm<Rounding::Double>(wrapping_add(bias_p_[k], acc_p_[k]), proj_scale_) + output_state_zp_;
        v = std::min(127, std::max(-128, v));
        if (quantized_proj_clip_ > 0) v = std::min<int32_t>(quantized_proj_clip_, std::max<int32_t>(-quantized_proj_clip_, v));
        h[r] = static_cast<int8_t>(v);
      }
    } else {
      std::memcpy(h, hidden_.data(), static_cast<size_t>(n));
    }
    std::memcpy(y, h, static_cast<size_t>(o_.n_output));
  }

  LstmOperands o_;
  const PrepareContext* ctx_ = nullptr;  // set during construction only, for errors
  Rounding rounding_ = Rounding::Double;
  const kernels::S8Kernels* s8_ = nullptr;
  const Int8LstmKernels* step_kernels_ = nullptr;
  const Int8Activations* activations_ = nullptr;  // step_kernels_'s table or computed form, measured
  std::string activations_note_;
  bool forms_timed_ = false;
  int initial_form_ = 0;
  void (Int8Lstm::*run_)(const TensorMemory&) noexcept = nullptr;

  int32_t input_zp_ = 0, output_state_zp_ = 0, hidden_zp_ = 0;
  int cell_scale_ = 0;  // the cell state's scale is 2^cell_scale_
  int16_t quantized_cell_clip_ = 0;
  int8_t quantized_proj_clip_ = 0;

  int gate_row_[kGates] = {-1, -1, -1, -1};  // first row of each present gate in the stacks
  int rows_ = 0;
  Scale gate_x_[kGates], gate_h_[kGates], peephole_scale_[kGates], hidden_scale_, proj_scale_;
  S8Gates wx_, wh_, wp_;                          // gates stacked, projection; dense for s8_ or sparse
  std::vector<int32_t> bias_x_, bias_h_, bias_p_;  // gate bias and zero-point row sums folded
  std::vector<int8_t> wx_plain_, wh_plain_;        // the stacked matrices row-major, for integer_form
  std::vector<int32_t> acc_h_zero_state_;         // W_h h for h = zero point everywhere
  std::vector<int32_t> h_term_zero_state_;        // MBQM(bias_h + acc_h_zero_state_, gate_h_)
  std::vector<int16_t> peephole_[kGates];
  int peephole_count_ = 0;
  fx16::Activation sigmoid_, tanh_gate_, tanh_cell_;

  // Scratch, sized at prepare: a chunk's padded inputs, W_x sums and input terms; padded h,
  // int32 accumulators, int16 gates, int8 hidden.
  std::vector<int8_t> xs_, h_, hidden_;
  std::vector<int32_t> acc_xs_, acc_h_, acc_p_;
  std::vector<int16_t> gx_, gate_;
  VnniGates vnni_x_, vnni_h_;  // the fused forms, where the set is VNNI and the matrix dense
  int x_stride_ = 0;           // bytes per input vector in xs_
  int gate_stride_ = 0;        // int16 per step in gx_ and gate_: rows_ rounded up to whole groups
};

}  // namespace

std::unique_ptr<PreparedOp> prepare_int8(const PrepareContext& ctx, const LstmOperands& o) {
  if (o.layer_norm) ctx.fail("integer LSTM with layer normalization is not supported");
  require(ctx, o.input, DType::I8, "input");
  require(ctx, o.output, DType::I8, "output");
  require(ctx, o.output_state, DType::I8, "output_state");
  require(ctx, o.cell_state, DType::I16, "cell_state");
  for (int g = 0; g < kGates; ++g) {
    if (!o.has_gate(g)) continue;
    require(ctx, o.input_weights[g], DType::I8, operand_name(kInputToGate + g));
    require(ctx, o.recurrent_weights[g], DType::I8, operand_name(kRecurrentToGate + g));
    require(ctx, o.bias[g], DType::I32, operand_name(kGateBias + g));
    if (o.peephole_weights[g] >= 0) require(ctx, o.peephole_weights[g], DType::I16, "cell_to_*_weights");
  }
  if (o.projection) {
    require(ctx, o.projection_weights, DType::I8, operand_name(kProjectionWeights));
    if (o.projection_bias >= 0) require(ctx, o.projection_bias, DType::I32, operand_name(kProjectionBias));
  }
  return std::make_unique<Int8Lstm>(ctx, o);
}

}  // namespace tickinfer::tfl::ops::lstm
