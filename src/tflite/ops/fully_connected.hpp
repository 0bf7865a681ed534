#pragma once
// FULLY_CONNECTED internals shared by its float/bf16 (fully_connected.cpp, pruned float:
// fully_connected_float_sparse.cpp) and int8/hybrid (fully_connected_int8.cpp) implementations.
#include <memory>
#include <string>
#include <vector>

#include "kernels/aligned_allocator.hpp"
#include "tflite/kernels/gemv_s8.hpp"
#include "tflite/kernels/hybrid_epilogue.hpp"
#include "tflite/kernels/quantize_rows.hpp"
#include "tflite/ops/fc_sparse_choice.hpp"
#include "tflite/ops/op_support.hpp"

namespace tickinfer::tfl::ops::fc {

// Geometry: the input is `batch` rows of `depth` values (any rank, flattened); the filter is
// [units, depth]; the output holds batch * units values.
struct FcGeometry {
  int batch = 0, depth = 0, units = 0;
  int input = -1, filter = -1, bias = -1, output = -1;  // tensor indices (bias -1: none)
};
FcGeometry check_geometry(const PrepareContext& ctx);

// TFLite's reference float loop for one row: total += x[d] * w[o][d], d ascending, + bias,
// clamped. The float op for the "scalar" kernel set, and the sparse op's row with Inf or NaN.
inline void float_reference_row(const float* x, const float* w, const float* bias, int units, int depth, float lo,
                                float hi, float* y) noexcept {
  for (int o = 0; o < units; ++o) {
    float total = 0.0f;
    for (int d = 0; d < depth; ++d) total += x[d] * w[static_cast<size_t>(o) * depth + d];
    const float v = total + (bias ? bias[o] : 0.0f);
    y[o] = v < lo ? lo : (v > hi ? hi : v);
  }
}

// Whether n floats are all zero: TFLite's hybrid FULLY_CONNECTED skips the product of such an
// input (output = bias), and the recurrent ops built on its rows skip it as it does.
inline bool all_zero(const float* x, int n) noexcept {
  for (int i = 0; i < n; ++i)
    if (x[i] != 0.0f) return false;
  return true;
}

// Filter checks shared by the int8 and hybrid forms: symmetric int8, per tensor or one scale per
// unit on axis 0 (ctx.fail otherwise).
void check_filter_quant(const PrepareContext& ctx, const Tensor& w, int units);
bool reaches_minus_128(const Tensor& w);

// One input row of a hybrid (dynamic-range) FULLY_CONNECTED, as TFLite computes it: the row
// quantized to int8 (symmetric, or asymmetric with a zero point), its s8 dot products with the
// filter (packed for the kernel set, or block-sparse where measured faster: the same int32 sums),
// then the float end, y[o] = clamp(y[o] + dot * (row_scale * filter_scale[o])) (kernels/
// hybrid_epilogue.hpp), or TFLite's sparse-kernel epilogue for a filter the file stores sparse.
// The FULLY_CONNECTED op and the lowered Keras LSTM loop (lstm/keras_cell_hybrid.cpp) both run
// their rows through it, so the loop equals its body's ops bit for bit.
class HybridFcRows {
 public:
  // w: the checked int8 filter [units, depth] (check_filter_quant); the block-sparse form is
  // timed here under ctx.options.sparse.
  HybridFcRows(const PrepareContext& ctx, const Tensor& w, int units, int depth, bool asymmetric, float lo, float hi);
  // y[0, units) holds the bias (or 0) on entry. x: depth floats, not all zero (TFLite skips the
  // product for an all-zero input; the caller does). noexcept, no allocation.
  void row(const float* x, float* y) noexcept;
  // n rows of x (depth apart) into n rows of y (units apart), each exactly as row() makes it; the
  // filter is read once per few rows (the kernel set's gemm) instead of once per row. An all-zero
  // row is the caller's to overwrite. noexcept, no allocation.
  void rows(const float* x, int n, float* y) noexcept;
  std::string describe() const;
  int units() const { return units_; }
  int depth() const { return depth_; }

 private:
  int units_, depth_;
  bool asymmetric_;
  float lo_, hi_;
  const kernels::S8Kernels& k_;
  kernels::HybridEpilogueFn epilogue_;
  const kernels::QuantizeRowKernels* row_quant_;
  int stride_ = 0;
  tickinfer::kernels::AlignedVector<int8_t> packed_;  // in k_'s layout
  std::vector<int32_t> row_sums_;
  std::vector<float> wscale_;
  tickinfer::kernels::AlignedVector<int8_t> xq_;    // one row, or kChunk rows (`stride_` apart) for rows()
  std::vector<int32_t> acc_;  // one row's sums, or kChunk rows' (s8_padded_rows(units) apart)
  static constexpr int kChunk = 8;
  std::unique_ptr<SparseFc> sparse_;
  std::string note_;
  bool sparse_in_file_ = false, per_channel_ = false;

  void sparse_file_epilogue(int32_t zp, float row_scale, float* y) const noexcept;
};

std::unique_ptr<PreparedOp> make_int8(const PrepareContext& ctx, const FcGeometry& g);
std::unique_ptr<PreparedOp> make_hybrid(const PrepareContext& ctx, const FcGeometry& g);

// A pruned float filter's block-sparse form in the reference order (fully_connected_float_sparse.cpp),
// or nullptr where the dense form stays (SparseChoice, and the measured rule under Auto).
std::unique_ptr<PreparedOp> make_float_sparse(const PrepareContext& ctx, const FcGeometry& g, const float* w,
                                              const float* bias, float lo, float hi);

}  // namespace tickinfer::tfl::ops::fc
