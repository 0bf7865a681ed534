#pragma once
// The float end of a hybrid (dynamic-range) FULLY_CONNECTED row, in TFLite's operation order:
//   dot = acc[o]                                          (symmetric input quantization)
//   dot = (int32)((float)acc[o] - (float)row_sums[o] * zp)   (asymmetric: TFLite's float offset)
//   y[o] = clamp(y[o] + (float)dot * (row_scale * filter_scale[o]), lo, hi)
// with clamp(v) = std::min(std::max(v, lo), hi) (NaN stays NaN). y[o] holds the bias (or 0) on
// entry. The AVX2 variant does the same float operations lane by lane (no FMA), so it equals the
// portable one bit for bit. noexcept, no allocation, any units >= 0.
#include <cstdint>

#include "kernels/isa_variants.hpp"

namespace tickinfer::tfl::kernels {

struct HybridRow {
  const int32_t* acc;
  const int32_t* row_sums;  // nullptr: symmetric (no zero-point term)
  float zero_point;         // the row's input zero point, as a float
  float row_scale;
  const float* filter_scale;
  float lo, hi;
};

using HybridEpilogueFn = void (*)(const HybridRow& r, int units, float* y) noexcept;
void hybrid_epilogue_portable(const HybridRow& r, int units, float* y) noexcept;
#if defined(__x86_64__)
void hybrid_epilogue_avx2(const HybridRow& r, int units, float* y) noexcept;
#endif
// The family's table: scalar (the portable loop) and avx2; portable falls back to scalar and
// avx512 to avx2 (kernels/isa_variants.hpp). isa: resolved by the caller. Prepare time only.
HybridEpilogueFn hybrid_epilogue(::tickinfer::kernels::Isa isa) noexcept;

// The float end of a hybrid CONV_2D, for n output positions at once (the patch gemm's), in
// TFLite's order (HybridConvPerChannel / HybridConv):
//   v = (float)(acc - zp * row_sums[o]) * filter_scale[o] * input_scale   (per-channel, asymmetric)
//   v = (float)acc * input_scale                  (symmetric: the one filter scale folded in)
//   y = clamp(v + bias[o], lo, hi)                (no bias: clamp(v)); the int32 terms wrap
//   y = y > 0 ? y : y * alpha                     (leaky: a LEAKY_RELU fused after the op)
// for acc[j * acc_step + o] -> y[j * out_c + o], j < n, o < out_c; the same clamp as above.
struct HybridConvOut {
  const int32_t* row_sums = nullptr;     // per-channel only
  int32_t zero_point = 0;                // the input's, per-channel only
  const float* filter_scale = nullptr;   // [out_c], per-channel only
  float input_scale = 0.0f;
  const float* bias = nullptr;           // [out_c] or nullptr
  float lo = 0.0f, hi = 0.0f;
  bool leaky = false;
  float alpha = 0.0f;
};
using HybridConvEpilogueFn = void (*)(const int32_t* acc, int out_c, int n, int acc_step, const HybridConvOut& q,
                                      float* y) noexcept;
void hybrid_conv_epilogue_portable(const int32_t* acc, int out_c, int n, int acc_step, const HybridConvOut& q,
                                   float* y) noexcept;
#if defined(__x86_64__)
void hybrid_conv_epilogue_avx2(const int32_t* acc, int out_c, int n, int acc_step, const HybridConvOut& q,
                               float* y) noexcept;
void hybrid_conv_epilogue_avx512(const int32_t* acc, int out_c, int n, int acc_step, const HybridConvOut& q,
                                 float* y) noexcept;
#endif
HybridConvEpilogueFn hybrid_conv_epilogue(::tickinfer::kernels::Isa isa) noexcept;

// A hybrid LSTM gate's pre-activations from its two int8 matmuls, in TFLite's order (LstmStepHybrid):
//   z[r] = bias[r]; z[r] += (float)(x.acc[r] - x.zero_point * x.row_sums[r]) * x.scale;
//   z[r] += (float)(h.acc[r] - h.zero_point * h.row_sums[r]) * h.scale
// a side with acc == nullptr (its input row was all zero) adds nothing; the int32 terms wrap.
struct HybridGateSide {
  const int32_t* acc = nullptr;       // nullptr: skipped
  const int32_t* row_sums = nullptr;
  int32_t zero_point = 0;
  float scale = 0.0f;
};
using HybridGateFn = void (*)(const float* bias, const HybridGateSide& x, const HybridGateSide& h, int n,
                              float* z) noexcept;
void hybrid_gate_portable(const float* bias, const HybridGateSide& x, const HybridGateSide& h, int n, float* z) noexcept;
#if defined(__x86_64__)
void hybrid_gate_avx2(const float* bias, const HybridGateSide& x, const HybridGateSide& h, int n, float* z) noexcept;
#endif
HybridGateFn hybrid_gate(::tickinfer::kernels::Isa isa) noexcept;

}  // namespace tickinfer::tfl::kernels
