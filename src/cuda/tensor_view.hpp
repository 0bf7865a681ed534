// An arena tensor as a graph-form step body reads and writes it: fp32, or fp16/bf16 storage
// (`--cuda-precision W/A`: the activations half) whose elements are read as the exact fp32 value
// they stand for and written rounded to nearest even (cuda/half_bits.hpp, one definition for the
// host and the GPU). Arithmetic stays fp32 in every body; only the stored tensors shrink.
//
// Offsets: an fp32 tensor's count floats from the arena's start, a 16-bit tensor's count 16-bit
// units (twice its region's float offset), as the weight buffer's 16-bit matrices do.
//
// Mixed is a compile-time switch: a step none of whose tensors is 16-bit runs the Mixed = false
// instantiation, whose views are plain float pointers with no format test in any loop, so the
// all-fp32 program is the code it was before 16-bit tensors existed.
#pragma once

#include <stdint.h>

#include "cuda/half_bits.hpp"
#include "cuda/host_device.hpp"

namespace tickinfer::cuda {

TI_HD inline float decode_16(uint16_t h, int32_t format) {
  return format == kWeightsBf16 ? bf16_to_float(h) : fp16_to_float(h);
}

TI_HD inline uint16_t encode_16(float v, int32_t format) {
  return format == kWeightsBf16 ? float_to_bf16(v) : float_to_fp16(v);
}

template <bool Mixed>
struct TensorIn {
  const float* arena;
  int64_t at;
  int32_t format;
  TI_HD float operator[](int64_t i) const {
    if constexpr (Mixed) {
      if (format != kWeightsFp32) return decode_16(reinterpret_cast<const uint16_t*>(arena)[at + i], format);
    }
    return arena[at + i];
  }
  TI_HD TensorIn operator+(int64_t k) const { return {arena, at + k, format}; }
};

template <bool Mixed>
struct TensorOut {
  float* arena;
  int64_t at;
  int32_t format;
  TI_HD void set(int64_t i, float v) const {
    if constexpr (Mixed) {
      if (format != kWeightsFp32) {
        reinterpret_cast<uint16_t*>(arena)[at + i] = encode_16(v, format);
        return;
      }
    }
    arena[at + i] = v;
  }
  TI_HD TensorOut operator+(int64_t k) const { return {arena, at + k, format}; }
};

}  // namespace tickinfer::cuda
