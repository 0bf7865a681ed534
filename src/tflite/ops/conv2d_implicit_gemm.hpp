#pragma once
// int8 and hybrid CONV_2D on the AVX-512 VNNI implicit GEMM (tflite/kernels/conv_s8_vnni.hpp):
// the patches read in place from the input, 8 positions and 32 channels per tile, the int8
// requantization in registers; and on the AVX2 one (tflite/kernels/conv_s8_avx2.hpp: 2 positions
// and 32 channels per tile). Same arithmetic as the patch-gemm kernels of conv2d.cpp (integer sums
// are exact; the requantization and the hybrid float epilogue are theirs), so bit for bit.
#include <memory>
#include <vector>

#include "tflite/kernels/hybrid_epilogue.hpp"
#include "tflite/kernels/quantize_rows.hpp"
#include "tflite/ops/conv_patch.hpp"
#include "tflite/prepared_op.hpp"

namespace tickinfer::tfl::ops {

// Which implicit GEMM runs for a kernel set: VNNI where the avx512 set is asked for and the CPU
// has VNNI; AVX2 for the avx2 set and for avx512 without VNNI (the int8 family's rule,
// s8_kernels); none for the portable and scalar sets and off x86.
enum class ImplicitGemmKind { None, Vnni, Avx2 };
ImplicitGemmKind implicit_gemm_kind(::tickinfer::kernels::Isa isa);

struct Int8ConvQuant {
  const int32_t* bias = nullptr;  // [out_c] or nullptr
  std::vector<int32_t> multiplier, shift;
  int32_t input_zero_point = 0, output_zero_point = 0, act_min = -128, act_max = 127;
  Rounding rounding = Rounding::Double;
};
// kind: not None.
std::unique_ptr<PreparedOp> make_int8_conv_implicit_gemm(ImplicitGemmKind kind, const ConvShape& s, const int8_t* filter,
                                                         Int8ConvQuant q);

struct HybridConvQuant {
  const float* bias = nullptr;  // [out_c] or nullptr
  std::vector<float> filter_scale;
  bool per_channel = false;  // asymmetric input quantization (the scales differ)
  float lo = 0.0f, hi = 0.0f;
  const kernels::QuantizeRowKernels* row_quant = nullptr;
  kernels::HybridConvEpilogueFn epilogue = nullptr;
};
std::unique_ptr<PreparedOp> make_hybrid_conv_implicit_gemm(ImplicitGemmKind kind, const ConvShape& s, const int8_t* filter,
                                                           HybridConvQuant q);

}  // namespace tickinfer::tfl::ops
