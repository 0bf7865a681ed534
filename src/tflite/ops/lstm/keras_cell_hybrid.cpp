// A dynamic-range Keras 3 LSTM loop, lowered (tflite/rewrite/lstm_loop.cpp) to one
// UNIDIRECTIONAL_SEQUENCE_LSTM flagged keras_cell: all T steps computed as the loop body's ops
// compute them, with those ops' own kernels, so the result equals running the loop op by op bit
// for bit (what TFLite's interpreter does with the file). Per step t:
//   zx = FULLY_CONNECTED(x_t, W)   hybrid: x_t quantized to int8 on its own (ops/fully_connected.hpp,
//                                  HybridFcRows); an all-zero row gives 0 (TFLite skips it)
//   zh = FULLY_CONNECTED(h, U)     the same for h
//   z = (zx + zh) + b              two float ADDs
//   i, f, o = LOGISTIC(z_i, z_f, z_o); g = TANH(z_g)   (kernels/logistic_f32.hpp, platform_tanhf.hpp)
//   c = f * c + i * g;  h = o * TANH(c)
// Every row of z is its own FULLY_CONNECTED output, so the gates are stacked i, f, o, g here (the
// three logistic gates in one call) whatever order the file's SPLIT had; x_t does not depend on
// the state, so every step's zx is made before the first step.
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tflite/kernels/logistic_f32.hpp"
#include "tflite/kernels/platform_tanhf.hpp"
#include "tflite/ops/fully_connected.hpp"
#include "tflite/ops/lstm/sequence_lstm_variants.hpp"

namespace tickinfer::tfl::ops::lstm {

namespace {

// Stacking order of the gates' rows: the logistic ones first.
constexpr int kStack[kGates] = {kInputGate, kForgetGate, kOutputGate, kCellGate};

// The four gate blocks of one side (input or recurrent), stacked as one int8 filter whose rows
// keep their scales.
Tensor stack_filter(const PrepareContext& ctx, const int (&gate_weights)[kGates], int n_cell, int cols) {
  Tensor w;
  w.name = "stacked gate weights";
  w.type = DType::I8;
  w.shape = {kGates * n_cell, cols};
  for (int g : kStack) {
    const Tensor& b = ctx.program.tensors[static_cast<size_t>(gate_weights[g])];
    if (b.type != DType::I8 || b.quant.empty() || b.shape != Shape{n_cell, cols}) {
      ctx.fail("the lowered LSTM loop's gate weights '" + b.name + "' are not an int8 [" + std::to_string(n_cell) +
               ", " + std::to_string(cols) + "] matrix with scales");
    }
    fc::check_filter_quant(ctx, b, n_cell);
    w.data.insert(w.data.end(), b.data.begin(), b.data.end());
    for (int r = 0; r < n_cell; ++r) w.quant.scale.push_back(b.quant.per_axis() ? b.quant.scale[static_cast<size_t>(r)] : b.quant.scale[0]);
  }
  w.quant.zero_point.assign(w.quant.scale.size(), 0);
  return w;
}

using fc::all_zero;

class KerasCellHybrid final : public PreparedOp {
 public:
  KerasCellHybrid(const PrepareContext& ctx, const LstmOperands& o)
      : o_(o),
        n_(o.n_cell),
        logistic_(kernels::logistic_array(ctx.isa)),
        tanhf_(kernels::tanhf_array(ctx.isa)) {
    const float inf = std::numeric_limits<float>::infinity();
    const bool asymmetric = ctx.op.options.asymmetric_quantize_inputs;
    wx_.emplace(ctx, stack_filter(ctx, o.input_weights, n_, o.n_input), kGates * n_, o.n_input, asymmetric, -inf, inf);
    wh_.emplace(ctx, stack_filter(ctx, o.recurrent_weights, n_, o.n_output), kGates * n_, o.n_output, asymmetric, -inf,
                inf);
    for (int s = 0; s < kGates; ++s) {
      const std::vector<float> b = constant_as_f32(ctx, o.bias[kStack[s]], operand_name(kGateBias + kStack[s]));
      bias_.insert(bias_.end(), b.begin(), b.end());
    }
    zx_.assign(static_cast<size_t>(o.n_time) * kGates * n_, 0.0f);
    zh_.assign(static_cast<size_t>(kGates) * n_, 0.0f);
    tanh_c_.assign(static_cast<size_t>(n_), 0.0f);
  }

  void eval(const TensorMemory& mem) noexcept override {
    const float* in = mem.at<float>(o_.input);
    const size_t rows = static_cast<size_t>(kGates) * n_;
    // Time major, batch 1: the T input rows are contiguous.
    std::fill(zx_.begin(), zx_.end(), 0.0f);
    wx_->rows(in, o_.n_time, zx_.data());
    for (int t = 0; t < o_.n_time; ++t) {  // an all-zero row's product is skipped: 0
      if (all_zero(in + o_.input_row(0, t), o_.n_input)) std::fill_n(zx_.data() + static_cast<size_t>(t) * rows, rows, 0.0f);
    }
    float* h = mem.at<float>(o_.output_state);
    float* c = mem.at<float>(o_.cell_state);
    float* out = mem.at<float>(o_.output);
    for (int t = 0; t < o_.n_time; ++t) {
      step(zx_.data() + static_cast<size_t>(t) * rows, h, c);
      std::memcpy(out + o_.output_row(0, t), h, static_cast<size_t>(n_) * sizeof(float));
    }
  }

  std::string describe() const override {
    return "Keras LSTM cell as its loop body's ops (hybrid fc W_x " + wx_->describe() + ", hybrid fc W_h " +
           wh_->describe() + ", float logistic and tanh) time=" + std::to_string(o_.n_time) +
           " input=" + std::to_string(o_.n_input) + " cell=" + std::to_string(n_);
  }

  int64_t macs() const override { return int64_t{o_.n_time} * kGates * n_ * (o_.n_input + o_.n_output); }

 private:
  LstmOperands o_;
  int n_;
  kernels::LogisticArrayFn logistic_;
  kernels::TanhfArrayFn tanhf_;
  std::optional<fc::HybridFcRows> wx_, wh_;
  std::vector<float> bias_;    // [4n], stacked
  std::vector<float> zx_;      // [T, 4n]: every step's FULLY_CONNECTED(x_t, W)
  std::vector<float> zh_;      // [4n]
  std::vector<float> tanh_c_;  // [n]

  // One step from zx (this step's input term; it becomes the gates) and the state h, c.
  void step(float* z, float* h, float* c) noexcept {
    const int rows = kGates * n_;
    std::fill(zh_.begin(), zh_.end(), 0.0f);
    if (!all_zero(h, n_)) wh_->row(h, zh_.data());
    for (int r = 0; r < rows; ++r) z[r] = (z[r] + zh_[static_cast<size_t>(r)]) + bias_[static_cast<size_t>(r)];
    logistic_(z, z, 3 * n_);
    tanhf_(z + 3 * n_, z + 3 * n_, n_);
    const float* i = z;
    const float* f = z + n_;
    const float* og = z + 2 * n_;
    const float* g = z + 3 * n_;
    for (int k = 0; k < n_; ++k) c[k] = f[k] * c[k] + i[k] * g[k];
    tanhf_(c, tanh_c_.data(), n_);
    for (int k = 0; k < n_; ++k) h[k] = og[k] * tanh_c_[static_cast<size_t>(k)];
  }
};

}  // namespace

std::unique_ptr<PreparedOp> prepare_keras_cell_hybrid(const PrepareContext& ctx, const LstmOperands& o) {
  if (o.cifg || o.peephole || o.projection || o.layer_norm || o.n_batch != 1 || !o.time_major ||
      o.n_output != o.n_cell) {
    ctx.fail("a lowered Keras LSTM loop has four gates, no peephole, projection or layer norm, batch 1, time major");
  }
  return std::make_unique<KerasCellHybrid>(ctx, o);
}

}  // namespace tickinfer::tfl::ops::lstm
