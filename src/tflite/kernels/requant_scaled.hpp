#pragma once
// FULLY_CONNECTED's requantization as TFLite's reference kernel computes it since TFLite 2.20
// (the PyPI interpreters: ai-edge-litert 2.3, TensorFlow 2.21), in double precision instead of
// a fixed-point multiplier:
//   y[r] = clamp((int32) round((double) (acc[r] + bias[r]) * scale[r]) + zp, lo, hi),
//   scale[r] = (double) input_scale * (double) filter_scale[r] / (double) output_scale,
// round() rounding half away from zero. A single-rounding fixed-point multiplier agrees except
// where the product lies on (or within about 2^-31 of) a half: a negative tie, which round()
// takes away from zero and the fixed-point form up. The int32 conversion of a product outside
// int32 is x86's (cvttsd2si: INT32_MIN), and the zero point's addition wraps as TFLite's int32
// does, so even a hostile scale gives TFLite's bytes on x86.
#include <cstdint>

#include "kernels/isa_variants.hpp"

namespace tickinfer::tfl::kernels {

struct ScaledRequant {
  const int32_t* bias = nullptr;  // [rows] or nullptr; added to acc with int32 wrap-around
  const double* scale = nullptr;  // [rows]
  int32_t output_zero_point = 0, act_min = -128, act_max = 127;
};

// One output, the definition every variant equals.
inline int8_t requant_scaled_one(int32_t acc, double scale, int32_t zp, int32_t lo, int32_t hi) noexcept {
  const double r = __builtin_round(static_cast<double>(acc) * scale);
  int32_t v = (r >= -2147483648.0 && r < 2147483648.0) ? static_cast<int32_t>(r) : INT32_MIN;
  v = static_cast<int32_t>(static_cast<uint32_t>(v) + static_cast<uint32_t>(zp));
  return static_cast<int8_t>(v < lo ? lo : (v > hi ? hi : v));
}

using RequantScaledFn = void (*)(const int32_t* acc, int rows, const ScaledRequant& q, int8_t* y) noexcept;
void requantize_s32_to_s8_scaled_scalar(const int32_t* acc, int rows, const ScaledRequant& q, int8_t* y) noexcept;
#if defined(__x86_64__)
void requantize_s32_to_s8_scaled_avx2(const int32_t* acc, int rows, const ScaledRequant& q, int8_t* y) noexcept;
#endif
// isa_variants.hpp's rule: avx2 where the CPU has it (avx512 falls back to it), else scalar.
RequantScaledFn requant_scaled_for(::tickinfer::kernels::Isa isa);

}  // namespace tickinfer::tfl::kernels
