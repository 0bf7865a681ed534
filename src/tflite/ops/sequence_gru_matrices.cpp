// GateMatrix (ops/sequence_gru_matrices.hpp): a GRU's gate rows multiplied as the converter's
// FULLY_CONNECTED multiplies them.
#include <algorithm>
#include <cstring>
#include <limits>

#include "tflite/ops/sequence_gru_matrices.hpp"

namespace tickinfer::tfl::ops::gru {

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
using fc::all_zero;
}  // namespace

std::vector<float> gate_bias(const PrepareContext& ctx, size_t k, int H) {
  std::vector<float> b(static_cast<size_t>(3) * H, 0.0f);
  if (!ctx.has_input(k)) return b;
  const Tensor& t = ctx.input(k);
  if (t.type != DType::F32 || !t.is_constant() || element_count(t.shape) != 3 * H) {
    ctx.fail("bias operand " + std::to_string(k) + " '" + t.name + "' is not a constant float32 [" +
             std::to_string(3 * H) + "]");
  }
  std::memcpy(b.data(), t.data.data(), b.size() * sizeof(float));
  return b;
}

GateMatrix::GateMatrix(const PrepareContext& ctx, const Tensor& w, int row0, int rows, int cols) : rows_(rows), cols_(cols) {
  const size_t first = static_cast<size_t>(row0) * static_cast<size_t>(cols);
  const size_t n = static_cast<size_t>(rows) * static_cast<size_t>(cols);
  if (w.type == DType::I8) {
    Tensor part;
    part.name = w.name;
    part.type = DType::I8;
    part.shape = {rows, cols};
    part.data.assign(w.data.begin() + static_cast<std::ptrdiff_t>(first),
                     w.data.begin() + static_cast<std::ptrdiff_t>(first + n));
    for (int r = 0; r < rows; ++r) {
      part.quant.scale.push_back(w.quant.per_axis() ? w.quant.scale[static_cast<size_t>(row0 + r)] : w.quant.scale[0]);
    }
    part.quant.zero_point.assign(part.quant.scale.size(), 0);
    hybrid_.emplace(ctx, part, rows, cols, ctx.op.options.asymmetric_quantize_inputs, -kInf, kInf);
    return;
  }
  if (w.type == DType::F32) {
    const auto& ks = ::tickinfer::kernels::kernel_set(ctx.isa);
    if (ctx.isa == ::tickinfer::kernels::Isa::Scalar || !ks.gemm4_sequential ||
        ::tickinfer::kernels::is_dot_form(rows)) {
      const float* f = reinterpret_cast<const float*>(w.data.data());
      rowwise_.assign(f + first, f + first + n);
      return;  // the reference loop
    }
    sequential_ = ks.gemm4_sequential;
    kernel_name_ = ks.name;
  }
  // [cols x rows] for the packed kernels (K = cols inputs, N = rows outputs).
  std::vector<float> dense(w.type == DType::F32 ? n : 0);
  std::vector<uint16_t> bits(w.type == DType::BF16 ? n : 0);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const size_t from = first + static_cast<size_t>(r) * cols + c, to = static_cast<size_t>(c) * rows + r;
      if (w.type == DType::BF16) {
        bits[to] = reinterpret_cast<const uint16_t*>(w.data.data())[from];
      } else {
        dense[to] = reinterpret_cast<const float*>(w.data.data())[from];
      }
    }
  }
  if (w.type == DType::BF16) {
    bf16_ = &kernels::bf16_gemv(ctx.isa);
    packed_bf16_.resize(kernels::bf16_packed_elems(cols, rows));
    kernels::pack_bf16_weights(bits.data(), cols, rows, packed_bf16_.data());
  } else {
    packed_.resize(::tickinfer::kernels::packed_floats(cols, rows));
    ::tickinfer::kernels::pack_weights(dense.data(), cols, rows, packed_.data());
  }
}

void GateMatrix::product(const float* x, int n, const float* bias, float* y) noexcept {
  if (hybrid_) {  // its rows add to the bias already in y
    for (int i = 0; i < n; ++i) std::copy(bias, bias + rows_, y + static_cast<size_t>(i) * rows_);
    if (n == 1) {
      if (!all_zero(x, cols_)) hybrid_->row(x, y);
      return;
    }
    hybrid_->rows(x, n, y);
    for (int i = 0; i < n; ++i) {  // rows() multiplied them all: an all-zero one is the bias
      if (all_zero(x + static_cast<size_t>(i) * cols_, cols_)) std::copy(bias, bias + rows_, y + static_cast<size_t>(i) * rows_);
    }
    return;
  }
  for (int i = 0; i < n; i += kGroup) {
    const int m = std::min(kGroup, n - i);
    const float* xi = x + static_cast<size_t>(i) * cols_;
    float* yi = y + static_cast<size_t>(i) * rows_;
    if (sequential_) {
      sequential_(xi, m, static_cast<size_t>(cols_), cols_, packed_.data(), rows_, bias, yi, static_cast<size_t>(rows_), -kInf, kInf);
    } else if (bf16_) {
      for (int j = 0; j < m; ++j) {
        bf16_->gemv(xi + static_cast<size_t>(j) * cols_, cols_, packed_bf16_.data(), rows_, bias,
                    yi + static_cast<size_t>(j) * rows_, -kInf, kInf);
      }
    } else {
      for (int j = 0; j < m; ++j) {
        fc::float_reference_row(xi + static_cast<size_t>(j) * cols_, rowwise_.data(), bias, rows_, cols_, -kInf, kInf,
                                yi + static_cast<size_t>(j) * rows_);
      }
    }
  }
}

std::string GateMatrix::describe() const {
  if (hybrid_) return "hybrid fc " + hybrid_->describe();
  if (bf16_) return std::string("bf16 gemv ") + bf16_->name;
  return sequential_ ? std::string("float fc sequential (reference order) ") + kernel_name_ : "float fc reference";
}

}  // namespace tickinfer::tfl::ops::gru
