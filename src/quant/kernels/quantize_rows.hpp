#pragma once
// Per-row float -> int8 quantization of hybrid (dynamic-range) op inputs, exactly as TFLite's
// PortableSymmetricQuantizeFloats / PortableAsymmetricQuantizeFloats (interop facts, section 6).
// Used by hybrid FULLY_CONNECTED, CONV_2D and the hybrid LSTM. noexcept, no allocation.
#include <cstdint>

namespace tickinfer::quant::kernels {

// s = max|x| / 127 (1 for an all-zero row); q = clamp(round(x * (127 / max|x|)), -127, 127).
// Returns s.
float quantize_row_symmetric(const float* x, int n, int8_t* q) noexcept;

// rmin = min(0, min x), rmax = max(0, max x); s = (rmax - rmin) / 255 (in double, stored as float);
// zero point chosen from the min or max side (smaller error), nudged into [-128, 127];
// q = clamp(round(zp + x * (1 / s)), -128, 127). An all-zero range gives s = 1, zp = 0, q = 0.
void quantize_row_asymmetric(const float* x, int n, int8_t* q, float* scale, int32_t* zero_point) noexcept;

}  // namespace tickinfer::quant::kernels
