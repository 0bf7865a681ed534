#pragma once
// Shared int8 matrix-vector kernels for the quantized ops (FULLY_CONNECTED int8 and hybrid, the
// int8 and hybrid LSTM, conv patches).
//
// A weight matrix is packed once, at prepare, by the kernel set that will multiply it
// (S8Kernels::pack), into s8_packed_bytes(rows, cols) bytes. Two layouts:
//  - "s8 rows" (scalar reference, AVX2 for matrices holding -128): row-major, each row padded with zeros to
//    `stride` = s8_row_stride(cols) bytes (a multiple of 16).
//  - "s8 quad blocks" (AVX2): rows in blocks of 8 (the last block padded with zero rows); within
//    a block, for each quad of 4 columns, 32 bytes: the 8 rows' 4 weights side by side. One
//    broadcast of 4 inputs then meets 8 rows at once, with no horizontal sums (the layout VNNI's
//    vpdpbusd wants too). `stride` = s8_quad_stride(cols), a multiple of 4: a 10-input layer
//    multiplies 12 columns, not 16.
//  - "s8 quad blocks + row sums" (AVX-512 VNNI): each quad block followed by 128 * (row sum of
//    w) as int32 for its 8 rows (0 for padding rows), what the VNNI kernel subtracts after
//    multiplying x + 128 (gemv_s8_quads_vnni.cpp). Any prefix of whole blocks is again a packed
//    matrix, as in the other layouts (the LSTM multiplies leading gates alone).
// The set's stride(cols) says which. Zero padding lets every kernel consume whole SIMD blocks
// without a tail: the vector x must be READABLE for `stride` bytes, and whatever the padding
// bytes of x hold is multiplied by 0.
// Accumulator arrays hold s8_padded_rows(rows) int32 (a block kernel writes whole blocks).
//
// All kernels: no allocation, no locks, noexcept; pointers need no alignment; rows/cols >= 1.
// Integer results are exact (int32 with wrap-around, like TFLite's reference loops), so every
// ISA variant equals the scalar reference bit for bit.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/isa_variants.hpp"
#include "tflite/kernels/block_requant.hpp"
#include "tflite/prepared_op.hpp"

namespace tickinfer::tfl::kernels {

inline constexpr int kS8ColAlign = 16;  // bytes: one xmm of int8 = one ymm of int16 (small K wastes little)

inline constexpr int kS8BlockRows = 8;

inline int s8_row_stride(int cols) { return (cols + kS8ColAlign - 1) / kS8ColAlign * kS8ColAlign; }
inline int s8_quad_stride(int cols) { return (cols + 3) / 4 * 4; }
inline int s8_padded_rows(int rows) { return (rows + kS8BlockRows - 1) / kS8BlockRows * kS8BlockRows; }
// Bytes of a packed matrix in any layout (each uses a prefix): s8_padded_rows(rows) *
// s8_row_stride(cols), plus 4 bytes per padded row for the VNNI layout's row sums.
inline size_t s8_packed_bytes(int rows, int cols) {
  return static_cast<size_t>(s8_padded_rows(rows)) * (static_cast<size_t>(s8_row_stride(cols)) + 4);
}
// Row-major w [rows x cols] -> the rows layout (rows * s8_row_stride(cols) bytes), zero padded.
void pack_s8_rows(const int8_t* w, int rows, int cols, int8_t* packed) noexcept;
// Row-major w [rows x cols] -> the quad-block layout (s8_padded_rows(rows) * s8_quad_stride(cols)
// bytes), zero padded.
void pack_s8_quad_blocks(const int8_t* w, int rows, int cols, int8_t* packed) noexcept;
#if defined(__x86_64__)
// Row-major w -> the VNNI layout (quad blocks + row sums).
void pack_s8_quads_vnni(const int8_t* w, int rows, int cols, int8_t* packed) noexcept;
#endif
using PackS8Fn = void (*)(const int8_t* w, int rows, int cols, int8_t* packed) noexcept;
// Whether any of n weights is -128, which the AVX2 quad-block kernel cannot take (see
// s8_kernels).
bool s8_reaches_minus_128(const int8_t* w, size_t n) noexcept;
// sums[r] = sum_c w[r*cols + c] (unpadded row-major weights).
void row_sums_s8(const int8_t* w, int rows, int cols, int32_t* sums) noexcept;

// ---- int8 x int8 -> int32 dot products ----------------------------------------------------------
// acc[r] = sum_{c < stride} w[r][c] * x[c] for r in [0, rows). Overwrites acc (block kernels:
// up to s8_padded_rows(rows), padding rows 0). w is packed by the same kernel set's pack; x is
// readable for `stride` bytes.
using GemvS8S8S32Fn = void (*)(const int8_t* w, int rows, int stride, const int8_t* x,
                               int32_t* acc) noexcept;
void gemv_s8s8_s32_scalar(const int8_t* w, int rows, int stride, const int8_t* x, int32_t* acc) noexcept;
#if defined(__x86_64__)
// AVX2 on the rows layout: sign-extend to int16 and vpmaddwd (exact for every int8 value). The
// AVX2 set's kernel for matrices holding -128.
void gemv_s8s8_s32_avx2(const int8_t* w, int rows, int stride, const int8_t* x, int32_t* acc) noexcept;
// AVX2 on quad blocks: vpmaddubsw of |x| (as u8, <= 128) with w carrying x's sign (vpsignb;
// |w| <= 127 for TFLite's symmetric filters, and -128 is handled too: see the .cpp), then vpmaddwd
// by ones: every int16 pair sum stays within +-32768, so nothing saturates and the result is exact.
void gemv_s8s8_s32_quads_avx2(const int8_t* w, int rows, int stride, const int8_t* x, int32_t* acc) noexcept;
// The same on quad blocks with each block's 8 sums requantized in registers (single rounding):
// y[0, rows) = requantize_s32_to_s8_scalar<Single>(gemv, q's bias/multiplier/shift).
void gemv_s8_quads_requant_single_avx2(const int8_t* w, int rows, int stride, const int8_t* x,
                                       const BlockRequantSingle& q, int8_t* y) noexcept;
// AVX-512 VNNI on the quad blocks + row sums layout (pack_s8_quads_vnni): vpdpbusd on (x + 128)
// as u8 times w as s8, minus the packed 128 * rowsum(w); two quads per 512-bit instruction, no
// horizontal sums; exact for every int8 weight, -128 included. Only call when s8_vnni_supported().
void gemv_s8s8_s32_quads_vnni(const int8_t* w, int rows, int stride, const int8_t* x, int32_t* acc) noexcept;
void gemv_s8_quads_requant_single_vnni(const int8_t* w, int rows, int stride, const int8_t* x,
                                       const BlockRequantSingle& q, int8_t* y) noexcept;
#endif

// ---- int8 x int8 -> int32 for several vectors at once (convolution positions) ----------------
// For p in [0, n): acc[p * s8_padded_rows(rows) + r] = sum_{c < stride} w[r][c] * x[p * stride + c],
// the gemv of each of n vectors laid out `stride` bytes apart, into n accumulator arrays of
// s8_padded_rows(rows) int32 each. Equal to n gemv calls bit for bit; the block kernels load each
// weight once for up to four vectors (VNNI) or two (AVX2) instead of once per vector.
using GemmS8S8S32Fn = void (*)(const int8_t* w, int rows, int stride, const int8_t* x, int n,
                               int32_t* acc) noexcept;
void gemm_s8s8_s32_scalar(const int8_t* w, int rows, int stride, const int8_t* x, int n, int32_t* acc) noexcept;
#if defined(__x86_64__)
void gemm_s8s8_s32_avx2(const int8_t* w, int rows, int stride, const int8_t* x, int n, int32_t* acc) noexcept;
void gemm_s8s8_s32_quads_avx2(const int8_t* w, int rows, int stride, const int8_t* x, int n, int32_t* acc) noexcept;
void gemm_s8s8_s32_quads_vnni(const int8_t* w, int rows, int stride, const int8_t* x, int n, int32_t* acc) noexcept;
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
// One multiplier and shift in every lane of a RequantS8Fn call: a per-tensor scale (BATCH_MATMUL's
// and the int8 elementwise ops' output scale, SOFTMAX's per-row reciprocal) on kernels that read a
// scale per lane. Owns the lane arrays (a call may cover at most `lanes` values), refills them only
// when the scale changes (no allocation after construction), and hands out the parameters.
class UniformRequant {
 public:
  explicit UniformRequant(int lanes)
      : multiplier_(static_cast<size_t>(lanes), 0), shift_(static_cast<size_t>(lanes), 0) {
    params_.multiplier = multiplier_.data();
    params_.shift = shift_.data();
  }
  UniformRequant(const UniformRequant&) = delete;  // params_ points into the arrays
  UniformRequant& operator=(const UniformRequant&) = delete;
  void set_scale(int32_t multiplier, int32_t shift) noexcept {
    if (multiplier == multiplier_held_ && shift == shift_held_) return;
    multiplier_held_ = multiplier;
    shift_held_ = shift;
    for (int32_t& m : multiplier_) m = multiplier;
    for (int32_t& s : shift_) s = shift;
  }
  void set_output(int32_t zero_point, int32_t act_min, int32_t act_max) noexcept {
    params_.output_zero_point = zero_point;
    params_.act_min = act_min;
    params_.act_max = act_max;
  }
  const RequantParams& params() const noexcept { return params_; }

 private:
  std::vector<int32_t> multiplier_, shift_;
  int32_t multiplier_held_ = 0, shift_held_ = 0;  // what the arrays hold
  RequantParams params_;
};

// The parameters of rows [r, ...): what a vector kernel hands the narrower one for its tail.
inline RequantParams requant_rows_from(const RequantParams& p, int r) {
  RequantParams t = p;
  if (t.bias) t.bias += r;
  t.multiplier += r;
  t.shift += r;
  return t;
}
template <Rounding R>
void requantize_s32_to_s8_scalar(const int32_t* acc, int rows, const RequantParams& p, int8_t* y) noexcept;
// Bytes of one group of 16 rows' double-rounding constants (double_rounding_constants16).
inline constexpr size_t kDoubleRounding16Bytes = 9 * 64;
#if defined(__x86_64__)
template <Rounding R>
void requantize_s32_to_s8_avx2(const int32_t* acc, int rows, const RequantParams& p, int8_t* y) noexcept;
// 16 lanes (AVX-512F/BW): the VNNI set's. Only call where the CPU has AVX-512F and BW.
template <Rounding R>
void requantize_s32_to_s8_avx512(const int32_t* acc, int rows, const RequantParams& p, int8_t* y) noexcept;
// Double rounding's per-lane constants (avx512_lanes::DoubleRounding16, kDoubleRounding16Bytes per
// group of 16 rows) made once, for the kernels that apply them to many vectors (the VNNI conv
// tile, the VNNI LSTM gates). Rows past `rows` in the last group get multiplier 0. AVX-512F/BW.
void double_rounding_constants16(const int32_t* multiplier, const int32_t* shift, int rows, int8_t* out) noexcept;
#endif
using RequantS8Fn = void (*)(const int32_t* acc, int rows, const RequantParams& p, int8_t* y) noexcept;

// The requantization of n output positions at once (a conv call's): y[j * rows + r] from
// acc[j * acc_step + r], j < n, r < rows, each as RequantS8Fn computes it. A vector kernel makes
// each channel block's constants once for all n.
using RequantS8PixelsFn = void (*)(const int32_t* acc, int rows, int n, int acc_step, const RequantParams& p,
                                   int8_t* y) noexcept;
// Any RequantS8Fn, position by position (the sets without their own).
template <RequantS8Fn F>
void requantize_pixels_each(const int32_t* acc, int rows, int n, int acc_step, const RequantParams& p,
                            int8_t* y) noexcept {
  for (int j = 0; j < n; ++j) F(acc + static_cast<size_t>(j) * acc_step, rows, p, y + static_cast<size_t>(j) * rows);
}
#if defined(__x86_64__)
template <Rounding R>
void requantize_pixels_s32_to_s8_avx2(const int32_t* acc, int rows, int n, int acc_step, const RequantParams& p,
                                      int8_t* y) noexcept;
#endif

// ---- kernel choice (prepare time only) ----------------------------------------------------------
using GemvRequantSingleFn = void (*)(const int8_t* w, int rows, int stride, const int8_t* x,
                                     const BlockRequantSingle& q, int8_t* y) noexcept;

struct S8Kernels {
  ::tickinfer::kernels::Isa isa;  // the variant's ISA (Avx512: VNNI)
  const char* name;  // "scalar", "avx2 quad blocks", "avx2 rows", "avx512vnni quad blocks"
  PackS8Fn pack;     // the layout `gemv` reads
  int (*stride)(int cols);  // that layout's stride: what gemv takes and how much of x it reads
  GemvS8S8S32Fn gemv;
  RequantS8Fn requant_double;
  RequantS8Fn requant_single;
  GemvRequantSingleFn gemv_requant_single;  // fused gemv + single-rounding requant, or nullptr
  GemmS8S8S32Fn gemm;                       // the gemv of several vectors (conv positions)
  RequantS8PixelsFn requant_pixels_double, requant_pixels_single;  // requant of gemm's n positions
  RequantS8Fn requant(Rounding r) const { return r == Rounding::Double ? requant_double : requant_single; }
  RequantS8PixelsFn requant_pixels(Rounding r) const {
    return r == Rounding::Double ? requant_pixels_double : requant_pixels_single;
  }
};
bool s8_vnni_supported();  // compiled in and the CPU has AVX512F/BW/VL + VNNI
// The int8 family's table: scalar (the reference loops), avx2, avx512 (VNNI, only where the CPU
// has it); portable, and avx512 without VNNI, fall back by kernels/isa_variants.hpp's rule
// (to scalar and to avx2). isa: resolved by the caller (kernels::best_isa / parse_isa).
// weights_reach_minus_128: some weight the set will multiply is -128 (s8_reaches_minus_128); the
// AVX2 variant is then the sign-extending rows kernel ("avx2 rows"), exact for every value.
const S8Kernels& s8_kernels(::tickinfer::kernels::Isa isa, bool weights_reach_minus_128);

}  // namespace tickinfer::tfl::kernels
