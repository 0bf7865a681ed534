#pragma once
// What SEQUENCE_GRU's two forms share (ops/sequence_gru.cpp, the converter's arithmetic;
// ops/sequence_gru_own.cpp, its own): GRU gate rows multiplied as the converter's FULLY_CONNECTED
// multiplies them (GateMatrix), the bias operands, and the factory of the own form.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/aligned_allocator.hpp"
#include "kernels/kernel_set.hpp"
#include "tflite/kernels/gemv_bf16.hpp"
#include "tflite/ops/fully_connected.hpp"

namespace tickinfer::tfl::ops::gru {

// Rows [row0, row0 + rows) of a FULLY_CONNECTED filter [*, cols], multiplied as that
// FULLY_CONNECTED would multiply them: int8 as the hybrid op (fc::HybridFcRows), float in the
// reference loop's order (KernelSet::gemm4_sequential, or fc::float_reference_row where a set
// has none or the rows are the packed layout's dot form), bf16 through the bf16 gemv (TFLite
// has no bf16: any order is its own).
class GateMatrix {
 public:
  GateMatrix(const PrepareContext& ctx, const Tensor& w, int row0, int rows, int cols);
  // n rows of x (cols apart) into n rows of y (rows apart): y = bias + W x, or the bias alone for
  // an all-zero row of x (TFLite's hybrid FULLY_CONNECTED skips its product; a float one adds
  // zeros). bias: rows floats. noexcept, no allocation.
  void product(const float* x, int n, const float* bias, float* y) noexcept;
  std::string describe() const;

 private:
  static constexpr int kGroup = ::tickinfer::kernels::kGemm4Rows;
  int rows_, cols_;
  std::optional<fc::HybridFcRows> hybrid_;
  const kernels::Bf16Gemv* bf16_ = nullptr;
  ::tickinfer::kernels::Gemm4SequentialFn sequential_ = nullptr;
  const char* kernel_name_ = "";
  std::vector<float> rowwise_;  // float on the reference loop: the filter rows (else empty)
  std::vector<uint16_t> packed_bf16_;
  ::tickinfer::kernels::AlignedVector<float> packed_;
};

// Bias operand k (3 b_in, 4 b_rec) as 3H floats: zeros where it is left out; ctx.fail unless a
// constant float32 [3H].
std::vector<float> gate_bias(const PrepareContext& ctx, size_t k, int H);

// The op in its own arithmetic (OpOptions::own_arithmetic), after prepare_sequence_gru's checks.
std::unique_ptr<PreparedOp> make_own_arithmetic_gru(const PrepareContext& ctx, int T, int F, int H);

}  // namespace tickinfer::tfl::ops::gru
