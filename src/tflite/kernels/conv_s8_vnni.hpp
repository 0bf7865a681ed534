#pragma once
// The int8 convolution as an implicit GEMM on AVX-512 VNNI: each output position's patch is read
// in place from the (offset) input, tap by tap, instead of being gathered, and the filter is
// packed for 16 output channels per vector, so one vpdpbusd adds 4 patch bytes times 4 weights
// into each of 16 channels' int32 sums and a finished vector is 16 channels of one position:
// requantized in registers (int8 CONV_2D) or stored as int32 (hybrid CONV_2D).
//
// vpdpbusd multiplies unsigned by signed bytes, so the caller offsets the input to u8 (x ^ 0x80
// = x + 128) once per call and folds -128 * rowsum(w) into each channel's initial sum: exact
// for every int8 value (int32 wrap-around, as the reference's accumulator).
//
// Filter layout: channels in groups of 16 (the last zero padded); per group, for each quad of 4
// patch bytes, 64 bytes: the 16 channels' 4 weights side by side. The patch is cols bytes in the
// filter's (ky, kx, ic) order, padded to a whole quad with zero weights.
//
// No allocation, no locks, noexcept. Only call where s8_vnni_supported().
#include <cstddef>
#include <cstdint>

#include "tflite/kernels/conv_taps.hpp"
#include "tflite/kernels/gemv_s8.hpp"

namespace tickinfer::tfl::kernels {

inline constexpr int kConvVnniLanes = 16;      // output channels per vector
inline constexpr int kConvVnniPositions = 8;   // output positions per kernel call, at most

inline int conv_vnni_quads(int cols) { return (cols + 3) / 4; }
inline int conv_vnni_padded_rows(int rows) { return (rows + kConvVnniLanes - 1) / kConvVnniLanes * kConvVnniLanes; }
inline size_t conv_vnni_packed_bytes(int rows, int cols) {
  return static_cast<size_t>(conv_vnni_padded_rows(rows)) * 4 * static_cast<size_t>(conv_vnni_quads(cols));
}

// One call: n (1..kConvVnniPositions) positions' u8 patches (readable for every quad the taps
// name) times the packed filter, each channel's sum started at init[r] (conv_vnni_padded_rows
// entries).
struct ConvVnniCall {
  const int8_t* packed = nullptr;
  // Double rounding's per-channel constants made once (double_rounding_constants16), or nullptr:
  // each tile makes them from the RequantParams (single rounding always does).
  const int8_t* rounding = nullptr;
  bool shifts_left = true;  // some channel's shift is positive (false only with `rounding`)
  int rows = 0;   // output channels
  int quads = 0;  // conv_vnni_quads(cols) = taps * quads_per_tap
  ConvTaps taps;
  const uint8_t* const* xp = nullptr;  // [n] position origins
  int n = 0;
  const int32_t* init = nullptr;
};

// Bytes of ConvVnniCall::rounding for rows channels (one block per group of 16).
inline size_t conv_vnni_rounding_bytes(int rows) {
  return static_cast<size_t>(conv_vnni_padded_rows(rows)) / kConvVnniLanes * kDoubleRounding16Bytes;
}

// Row-major w [rows x cols] -> the layout above (conv_vnni_packed_bytes). Any ISA.
void pack_conv_s8_vnni(const int8_t* w, int rows, int cols, int8_t* packed) noexcept;
#if defined(__x86_64__)
// y[p * rows + r] = clamp(MultiplyByQuantizedMultiplier(sum, multiplier[r], shift[r]) + zp);
// p.bias is not read (fold it into init).
template <Rounding R>
void conv_u8s8_requant_vnni(const ConvVnniCall& c, const RequantParams& p, int8_t* y) noexcept;
// acc[p * acc_step + r] = sum, for every r < conv_vnni_padded_rows(rows); acc_step is a multiple
// of 16 at least that.
void conv_u8s8_s32_vnni(const ConvVnniCall& c, int32_t* acc, int acc_step) noexcept;
#endif
// x ^ 0x80 for n bytes: int8 to the u8 that vpdpbusd takes (x + 128). Any ISA.
void offset_s8_to_u8(const int8_t* x, size_t n, uint8_t* out) noexcept;

}  // namespace tickinfer::tfl::kernels
