#pragma once
// An int8 weight matrix assembled row-major at prepare (possibly from several tensors stacked, as
// the LSTM stacks its gates), then packed once for the kernel set that multiplies it
// (gemv_s8.hpp). Prepare-time only, except gemv().
#include <cstdint>
#include <vector>

#include "kernels/aligned_allocator.hpp"
#include "tflite/kernels/gemv_s8.hpp"

namespace tickinfer::tfl::kernels {

struct S8Matrix {
  int rows = 0, cols = 0, stride = 0;  // stride: the kernel set's, known after pack()
  std::vector<int8_t> plain;   // row-major [rows x cols] until pack()
  tickinfer::kernels::AlignedVector<int8_t> packed;  // s8_packed_bytes(rows, cols), in the kernel set's layout

  void init(int n_rows, int n_cols);
  // Rows [row0, row0 + n) from row-major w [n x cols].
  void set_rows(int row0, const int8_t* w, int n);
  bool reaches_minus_128() const { return s8_reaches_minus_128(plain.data(), plain.size()); }
  // Packs for k and drops the row-major copy.
  void pack(const S8Kernels& k);

  // acc[0, used_rows) (block kernels: up to s8_padded_rows(used_rows)) = the first used_rows rows
  // times x, which is readable for `stride` bytes.
  void gemv(const S8Kernels& k, int used_rows, const int8_t* x, int32_t* acc) const noexcept {
    k.gemv(packed.data(), used_rows, stride, x, acc);
  }
};

}  // namespace tickinfer::tfl::kernels
