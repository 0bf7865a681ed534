// 16-bit storage for the graph form's weights and activations (fp16 and bf16, arithmetic stays
// fp32): the encoders (round to nearest even, as CUDA's __float2half_rn / __float2bfloat16_rn) and
// the exact decoders, one integer definition each that the step bodies call on the host and on
// the GPU alike, so both store and read the same bits.
#pragma once

#include <stdint.h>
#include <string.h>

#include "cuda/host_device.hpp"

namespace tickinfer::cuda {

// How a step's matrices (kernel, recurrent, recurrent_h, depthwise taps) are stored (biases,
// scales and shifts stay fp32), and how an arena tensor is (cuda/tensor_view.hpp).
enum WeightFormat : int32_t { kWeightsFp32 = 0, kWeightsBf16 = 1, kWeightsFp16 = 2 };

TI_HD inline float float_from_bits(uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(b);
#else
  float f;
  memcpy(&f, &b, 4);
  return f;
#endif
}

TI_HD inline float bf16_to_float(uint16_t h) { return float_from_bits(uint32_t(h) << 16); }

// IEEE binary16 to binary32, exactly (subnormals, infinities and NaN included).
TI_HD inline float fp16_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1f) return float_from_bits(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    if (man == 0) return float_from_bits(sign);
    int e = -1;  // normalise the subnormal
    do {
      man <<= 1;
      ++e;
    } while (!(man & 0x400u));
    return float_from_bits(sign | uint32_t(127 - 15 - e) << 23 | (man & 0x3ffu) << 13);
  }
  return float_from_bits(sign | (exp + 127 - 15) << 23 | man << 13);
}

TI_HD inline uint32_t bits_of(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
#endif
}

TI_HD inline uint16_t float_to_bf16(float f) {
  const uint32_t b = bits_of(f);
  if ((b & 0x7fffffffu) > 0x7f800000u) return uint16_t((b >> 16) | 0x40u);  // NaN stays NaN
  return uint16_t((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

TI_HD inline uint16_t float_to_fp16(float f) {
  const uint32_t b = bits_of(f);
  const uint16_t sign = uint16_t((b >> 16) & 0x8000u);
  const uint32_t abs = b & 0x7fffffffu;
  if (abs > 0x7f800000u) return uint16_t(sign | 0x7e00u);  // NaN
  if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds past 65504: infinity
  if (abs < 0x38800000u) {  // below fp16's smallest normal: a subnormal (or zero), rounded
    if (abs < 0x33000000u) return sign;  // below half the smallest subnormal
    const uint32_t exp = abs >> 23, man = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exp;  // 14 + (113 - exp): where the 10 kept bits end
    const uint32_t kept = man >> shift, rest = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    return uint16_t(sign | (kept + (rest > half || (rest == half && (kept & 1u)))));
  }
  const uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  return uint16_t(sign | ((rounded - (112u << 23)) >> 13));
}

// Element i of a matrix stored in `format` at `at` (floats for fp32, 16-bit units for the others)
// of the weight buffer.
struct MatrixView {
  const float* weights;
  int64_t at;
  int32_t format;
  TI_HD float operator[](int64_t i) const {
    if (format == kWeightsFp32) return weights[at + i];
    const uint16_t h = reinterpret_cast<const uint16_t*>(weights)[at + i];
    return format == kWeightsBf16 ? bf16_to_float(h) : fp16_to_float(h);
  }
};

}  // namespace tickinfer::cuda
