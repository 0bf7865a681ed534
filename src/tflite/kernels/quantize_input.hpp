#pragma once
// float -> int8 quantization of a model input with its fixed scale and zero point, TFLite's
// reference Quantize: round half away from zero of x / scale (the division in float), plus the
// zero point, clamped to [-128, 127]; NaN maps to the zero point. The AVX2 variant equals the
// scalar one bit for bit, as does the AVX-512 one (every step is an exact IEEE operation or integer arithmetic).
// noexcept, no allocation, any n.
#include <cstddef>
#include <cstdint>

#include "kernels/isa_variants.hpp"

namespace tickinfer::tfl::kernels {

using QuantizeF32S8Fn = void (*)(const float* x, int8_t* q, size_t n, float scale, int32_t zp) noexcept;
void quantize_f32_to_s8_scalar(const float* x, int8_t* q, size_t n, float scale, int32_t zp) noexcept;
#if defined(__x86_64__)
void quantize_f32_to_s8_avx2(const float* x, int8_t* q, size_t n, float scale, int32_t zp) noexcept;
void quantize_f32_to_s8_avx512(const float* x, int8_t* q, size_t n, float scale, int32_t zp) noexcept;
#endif
// The family's table: scalar, avx2 and avx512; portable falls back to scalar
// (kernels/isa_variants.hpp). isa: resolved by the caller. Prepare time only.
QuantizeF32S8Fn quantize_f32_to_s8(::tickinfer::kernels::Isa isa) noexcept;

}  // namespace tickinfer::tfl::kernels
