#pragma once
// Shared int8 matrix-vector kernels for the quantized ops (FULLY_CONNECTED int8 and hybrid, the
// int8 and hybrid LSTM, im2col-free conv rows).
//
// Weight layout ("s8 rows"): a [rows x cols] int8 matrix, row-major, each row padded with zeros to
// `stride` = s8_row_stride(cols) bytes (a multiple of kS8ColAlign). pack_s8_rows() writes it.
// Zero padding lets every kernel consume whole SIMD blocks without a tail: the vector x must be
// READABLE for `stride` bytes, and whatever the padding bytes of x hold is multiplied by 0.
//
// All kernels: no allocation, no locks, noexcept; pointers need no alignment; rows/cols >= 1.
// Integer results are exact (int32 with wrap-around, like TFLite's reference loops), so every
// ISA variant equals the scalar reference bit for bit.
#include <cstddef>
#include <cstdint>

#include "quant/prepared_op.hpp"

namespace tickinfer::quant::kernels {

inline constexpr int kS8ColAlign = 16;  // bytes: one xmm of int8 = one ymm of int16 (small K wastes little)

inline int s8_row_stride(int cols) { return (cols + kS8ColAlign - 1) / kS8ColAlign * kS8ColAlign; }
// Copies row-major w [rows x cols] into `packed` (rows * s8_row_stride(cols) bytes), zero padded.
void pack_s8_rows(const int8_t* w, int rows, int cols, int8_t* packed) noexcept;
// sums[r] = sum_c w[r*cols + c] (unpadded row-major weights).
void row_sums_s8(const int8_t* w, int rows, int cols, int32_t* sums) noexcept;

// ---- int8 x int8 -> int32 dot products ----------------------------------------------------------
// acc[r] = sum_{c < stride} w[r*stride + c] * x[c] for r in [0, rows). Overwrites acc.
// w is in the padded layout above (or any row-major matrix whose stride is a multiple of
// kS8ColAlign); x is readable for `stride` bytes.
using GemvS8S8S32Fn = void (*)(const int8_t* w, int rows, int stride, const int8_t* x,
                               int32_t* acc) noexcept;
void gemv_s8s8_s32_scalar(const int8_t* w, int rows, int stride, const int8_t* x, int32_t* acc) noexcept;
#if defined(__x86_64__)
// AVX2: sign-extend to int16 and vpmaddwd (exact; no vpmaddubsw saturation).
void gemv_s8s8_s32_avx2(const int8_t* w, int rows, int stride, const int8_t* x, int32_t* acc) noexcept;
// AVX-512 VNNI: vpdpbusd on (x + 128) as u8 times w as s8, minus 128 * rowsum(w); exact.
// Only call when s8_vnni_supported().
void gemv_s8s8_s32_avx512vnni(const int8_t* w, int rows, int stride, const int8_t* x,
                              int32_t* acc) noexcept;
#endif

// ---- requantization ------------------------------------------------------------------------------
// Per output r: y[r] = clamp(MultiplyByQuantizedMultiplier(acc[r] + bias[r], mult[r], shift[r])
//                           + out_zp, act_min, act_max)
// bias may be nullptr. Addition wraps like TFLite's int32 accumulator. Per-tensor quantization
// passes arrays filled with the one multiplier/shift (so kernels have one shape).
struct RequantParams {
  const int32_t* bias = nullptr;        // [rows] or nullptr; usually bias + input_offset * rowsum
  const int32_t* multiplier = nullptr;  // [rows]
  const int32_t* shift = nullptr;       // [rows], positive = left
  int32_t output_zero_point = 0;
  int32_t act_min = -128, act_max = 127;
};
template <Rounding R>
void requantize_s32_to_s8_scalar(const int32_t* acc, int rows, const RequantParams& p, int8_t* y) noexcept;
#if defined(__x86_64__)
template <Rounding R>
void requantize_s32_to_s8_avx2(const int32_t* acc, int rows, const RequantParams& p, int8_t* y) noexcept;
#endif
using RequantS8Fn = void (*)(const int32_t* acc, int rows, const RequantParams& p, int8_t* y) noexcept;

// ---- kernel choice (prepare time only) ----------------------------------------------------------
struct S8Kernels {
  const char* name;  // "scalar", "avx2", "avx512vnni"
  GemvS8S8S32Fn gemv;
  RequantS8Fn requant_double;
  RequantS8Fn requant_single;
  RequantS8Fn requant(Rounding r) const { return r == Rounding::Double ? requant_double : requant_single; }
};
bool s8_vnni_supported();  // compiled in and the CPU has AVX512F/BW/VL + VNNI
// isa: "scalar" = the reference loops; "portable" = scalar too (plain C++ the compiler
// vectorizes); "avx2" = AVX2; "avx512" = VNNI when the CPU has it, else AVX2; "" = the best
// available. An ISA the CPU lacks falls back to the best available below it.
const S8Kernels& s8_kernels(const char* isa);

}  // namespace tickinfer::quant::kernels
