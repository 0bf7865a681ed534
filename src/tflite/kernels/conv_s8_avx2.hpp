#pragma once
// The int8 convolution as an implicit GEMM on AVX2: the VNNI kernel's form (conv_s8_vnni.hpp)
// with AVX2's 16-bit products. Each position's patch is read where it lies, tap by tap, instead
// of being gathered into a buffer, and the sums are requantized in registers instead of being
// stored as int32 and read back.
//
// Why 16-bit products and not the AVX2 gemv's sign trick (gemv_s8_quads_avx2.cpp: |x| times w
// with x's sign, vpsignb + vpmaddubsw + vpmaddwd + vpaddd per 32 multiply-adds): the sign trick
// spends three multiply-port instructions per 32 multiply-adds, vpmaddwd on int16 pairs two (and
// one more add, on any port). The input is widened to int16 once per call (a few KB) and the
// filter is stored as int16 pairs (twice the bytes: a tcn layer's 6 KB). Exact for every int8
// value, -128 included (int32 wrap-around, as the reference's accumulator). Measured on tcn's
// full-int8 convolutions (Zen 4, the AVX2 set): docs/performance.md.
//
// The caller folds bias - input_zero_point * rowsum(w) into each channel's starting sum.
//
// Filter layout: blocks of 8 channels; per block and quad of 4 patch elements, two vectors of 16
// int16: the 8 channels' elements (0, 1) side by side, then their (2, 3). The patch is cols
// elements in the filter's (ky, kx, ic) order, padded to a whole quad with zero weights.
//
// No allocation, no locks, noexcept. Only call where the CPU has AVX2.
#include <cstddef>
#include <cstdint>

#include "tflite/kernels/conv_taps.hpp"
#include "tflite/kernels/gemv_s8.hpp"

namespace tickinfer::tfl::kernels {

inline constexpr int kConvAvx2MaxPositions = 8;  // output positions per kernel call, at most
inline constexpr int kConvAvx2BlockRows = 8;     // output channels per vector

inline int conv_avx2_padded_rows(int rows) { return (rows + kConvAvx2BlockRows - 1) / kConvAvx2BlockRows * kConvAvx2BlockRows; }
// int16 elements of the packed filter.
inline size_t conv_avx2_packed_elements(int rows, int cols) {
  return static_cast<size_t>(conv_avx2_padded_rows(rows)) * 4 * static_cast<size_t>((cols + 3) / 4);
}

// One call: n (1..kConvAvx2MaxPositions) positions' int16 patches (readable for every quad the
// taps name; ConvTaps offsets in int16 elements) times the packed filter.
struct ConvAvx2Call {
  const int16_t* packed = nullptr;  // pack_conv_s16_avx2
  int rows = 0;                     // output channels
  int quads = 0;                    // (cols + 3) / 4 = taps * quads_per_tap
  ConvTaps taps;
  const int16_t* const* xp = nullptr;  // [n] position origins
  int n = 0;
  // Each channel's starting sum, conv_avx2_padded_rows(rows) entries (the padding's unused).
  const int32_t* init = nullptr;
  // The requantization constants of every block of 8 channels, made once
  // (conv_avx2_prepare_requant), and whether some channel's shift is positive (without one the
  // double rounding skips its left shift).
  const void* requant = nullptr;
  bool shifts_left = true;
};

// Bytes of the prepared requantization constants for rows channels (32-byte aligned storage).
inline size_t conv_avx2_requant_bytes(int rows) { return static_cast<size_t>(conv_avx2_padded_rows(rows)) / kConvAvx2BlockRows * 256; }

// Row-major int8 w [rows x cols] -> the layout above (conv_avx2_packed_elements). Any ISA.
void pack_conv_s16_avx2(const int8_t* w, int rows, int cols, int16_t* packed) noexcept;
// The int8 input widened to the int16 the kernel reads. Any ISA.
void widen_s8_to_s16(const int8_t* x, size_t n, int16_t* out) noexcept;

#if defined(__x86_64__)
// y[p * rows + r] = clamp(MultiplyByQuantizedMultiplier(sum, multiplier[r], shift[r]) + zp), the
// multipliers and shifts as c.requant holds them. Of p, only the zero point and the clamp are
// read (fold the bias into init).
template <Rounding R>
void conv_s16_requant_avx2(const ConvAvx2Call& c, const RequantParams& p, int8_t* y) noexcept;
// acc[p * acc_step + r] = sum, for every r < conv_avx2_padded_rows(rows); acc_step is a multiple
// of 8 at least that. (c.requant is not read.)
void conv_s16_s32_avx2(const ConvAvx2Call& c, int32_t* acc, int acc_step) noexcept;
// The constants ConvAvx2Call::requant points to, from conv_avx2_padded_rows(rows) multipliers
// and shifts (the padding's values are unused), into conv_avx2_requant_bytes(rows) bytes at out
// (32-byte aligned). Prepare time.
template <Rounding R>
void conv_avx2_prepare_requant(const int32_t* multiplier, const int32_t* shift, int rows, void* out) noexcept;
#endif

}  // namespace tickinfer::tfl::kernels
