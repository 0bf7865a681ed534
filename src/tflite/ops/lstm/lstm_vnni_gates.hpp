#pragma once
// An integer LSTM's stacked gate matrix with the gate requantization fused into its dot products,
// for the AVX-512 VNNI kernel set (sequence_lstm_int8.cpp uses it where the int8 set is VNNI and
// the matrix dense). Same results as the generic path (S8Gates::gemv / gemm, then gate_input or
// gate_recurrent) bit for bit; what changes is where the sums live: 16 rows per vector lane by
// lane, so a row group's int32 sums go from vpdpbusd straight into the 16-lane double rounding
// and out as int16 gates, never stored as int32.
//
// Layout: groups of 16 rows, each group `quads` vectors of 64 bytes, lane l of vector q holding
// w[16 g + l][4q .. 4q + 3] (zero beyond the matrix). x is read as u8 x + 128 (the caller stores
// x ^ 0x80), and the 128 * rowsum(w) this adds is taken off the per-row bias at prepare:
// sum (x + 128) w + (bias - 128 sum w) = sum x w + bias, exact in wrapping int32 for every
// int8 weight, -128 included.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tflite/kernels/gemv_s8.hpp"

namespace tickinfer::tfl::ops::lstm {

// Bytes of one row group's requantization constants (kernels::avx512_lanes::DoubleRounding16).
inline constexpr size_t kVnniRoundingBytes = kernels::kDoubleRounding16Bytes;

class VnniGates {
 public:
  static constexpr int kGroupRows = 16;

  // A move keeps the storage's block, and so offset_ right; a copy's block aligns otherwise.
  VnniGates() = default;
  VnniGates(VnniGates&&) = default;
  VnniGates& operator=(VnniGates&&) = default;
  VnniGates(const VnniGates&) = delete;
  VnniGates& operator=(const VnniGates&) = delete;

  // w: row-major [rows x cols]; per row, bias (zero-point terms folded in), and the
  // requantization's multiplier and shift. Prepare time only.
  void init(const int8_t* w, int rows, int cols, const int32_t* bias, const int32_t* multiplier,
            const int32_t* shift);
  bool empty() const { return groups_ == 0; }
  // Bytes of each x vector the kernels read (cols rounded up to whole quads).
  int x_bytes() const { return 4 * quads_; }
  // Rows the kernels write for used_rows (whole groups): the size outputs must have.
  int padded_rows() const { return kGroupRows * groups_; }

  // For j in [0, len): gx[j * gx_stride + r] = sat16(MBQM(bias[r] + W x_j, m[r], s[r])) for the
  // groups covering [0, used_rows); x_j (offset to u8) at xu8 + j * x_stride.
  void input_terms(const uint8_t* xu8, size_t x_stride, int len, int used_rows, int16_t* gx,
                   size_t gx_stride) const noexcept;
  // gate[r] = sat16(MBQM(bias[r] + W h, m[r], s[r]) + gx[r]) for the groups covering
  // [0, used_rows); h offset to u8.
  void recurrent(const uint8_t* hu8, int used_rows, const int16_t* gx, int16_t* gate) const noexcept;

 private:
  // One allocation, 64-byte aligned inside (a 512-bit load that crosses a cache line costs about
  // half as much again: the recurrent kernel measured 133 against 87 ns for 256 vpdpbusd):
  // packed weights, then each group's requantization constants, then the biases.
  const int8_t* packed() const { return storage_.data() + offset_; }
  const int8_t* rounding() const { return packed() + packed_bytes_; }
  const int32_t* bias() const {
    return reinterpret_cast<const int32_t*>(rounding() + static_cast<size_t>(groups_) * kVnniRoundingBytes);
  }

  int groups_ = 0, quads_ = 0;
  size_t packed_bytes_ = 0, offset_ = 0;
  std::vector<int8_t> storage_;
};

#if defined(TICKINFER_HAVE_X86)
// The kernels (lstm_gate_kernels_vnni.cpp); only where kernels::s8_vnni_supported().
void lstm_input_terms_vnni(const int8_t* packed, int groups, int quads, const int32_t* bias, const int8_t* rounding,
                           const uint8_t* xu8, size_t x_stride, int len, int16_t* gx, size_t gx_stride) noexcept;
void lstm_recurrent_gates_vnni(const int8_t* packed, int groups, int quads, const int32_t* bias, const int8_t* rounding,
                               const uint8_t* hu8, const int16_t* gx, int16_t* gate) noexcept;
#endif

}  // namespace tickinfer::tfl::ops::lstm
