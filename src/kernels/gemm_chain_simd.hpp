#pragma once
// Internal: KernelSet::gemm_chain written once over a `Simd` struct (simd_<isa>.hpp) for the
// ISAs with a fused multiply-add (avx2, avx512; included by their simd_kernels_<isa>.cpp).
//
// A register block of R rows x P panels: per k, P * 16 / kWidth weight vectors are loaded once
// and each feeds R FMAs, against one broadcast per row. gemv feeds each weight load to one FMA,
// so a block needs about half the loads per FMA (R P 16/kWidth accumulators stay in registers:
// RxP is picked per ISA so they fit with the broadcasts). Each accumulator is one chain over k
// ascending, so every output is fma(x[K-1], w, ... fma(x[0], w, 0)) + init, clamped: the
// contract of KernelSet::gemm_chain, bit for bit the scalar reference (std::fma) on every ISA.
// A row's K inputs are `taps` runs of `ch` floats, run j at j * tap_stride from the row start
// (a dilated Conv1D's taps read in place).
#include <cstddef>

#include "kernels/kernel_set.hpp"
#include "kernels/unroll.hpp"

namespace tickinfer::kernels::simd {

// Rows [0, R) x panels [0, P) starting at panel p0; stores columns [16 p0, min(16 (p0 + P), N)).
struct ChainRows {
  size_t ldx;         // floats between rows
  int taps, ch;       // K = taps * ch
  size_t tap_stride;  // floats between a row's runs
};

template <class Simd, int R, int P>
inline void chain_block(const float* x, const ChainRows& xs, int K, const float* packed_w, int p0, int N,
                        const float* init, float* y, size_t ldy, typename Simd::V lo, typename Simd::V hi) {
  using V = typename Simd::V;
  constexpr int kVecs = kPanel / Simd::kWidth;  // vectors per panel
  constexpr int C = P * kVecs;                  // vectors per row of the block
  const size_t panel_stride = static_cast<size_t>(K) * kPanel;
  const float* w = packed_w + static_cast<size_t>(p0) * panel_stride;
  V acc[R][C];
  TICKINFER_UNROLL
  for (int r = 0; r < R; ++r)
    TICKINFER_UNROLL
    for (int c = 0; c < C; ++c) acc[r][c] = Simd::zero();
  const size_t ldx = xs.ldx;
  for (int j = 0; j < xs.taps; ++j) {
    const float* xj = x + static_cast<size_t>(j) * xs.tap_stride;
    const float* wj = w + static_cast<size_t>(j) * xs.ch * kPanel;
    for (int i = 0; i < xs.ch; ++i) {
      V b[R];
      TICKINFER_UNROLL
      for (int r = 0; r < R; ++r) b[r] = Simd::set1(xj[static_cast<size_t>(r) * ldx + i]);
      const float* row = wj + static_cast<size_t>(i) * kPanel;
      TICKINFER_UNROLL
      for (int c = 0; c < C; ++c) {
        const V wv = Simd::load(row + (c / kVecs) * panel_stride + (c % kVecs) * Simd::kWidth);
        TICKINFER_UNROLL
        for (int r = 0; r < R; ++r) acc[r][c] = Simd::fmadd(b[r], wv, acc[r][c]);
      }
    }
  }
  const int n0 = p0 * kPanel;
  TICKINFER_UNROLL
  for (int r = 0; r < R; ++r) {
    float* yr = y + static_cast<size_t>(r) * ldy;
    TICKINFER_UNROLL
    for (int c = 0; c < C; ++c) {
      const int col = n0 + c * Simd::kWidth;
      const int lanes = N - col < Simd::kWidth ? N - col : Simd::kWidth;
      if (lanes <= 0) break;
      V v = acc[r][c];
      if (init) v = Simd::add(lanes == Simd::kWidth ? Simd::load(init + col) : Simd::load_partial(init + col, lanes), v);
      v = Simd::min(hi, Simd::max(lo, v));  // data second: NaN propagates
      if (lanes == Simd::kWidth) {
        Simd::store(yr + col, v);
      } else {
        Simd::store_partial(yr + col, v, lanes);
      }
    }
  }
}

// `rows` rows (any count, in blocks of R and a remainder) over panels [p0, p0 + P).
template <class Simd, int R, int P>
inline void chain_rows(const float* x, int rows, const ChainRows& xs, int K, const float* packed_w, int p0, int N,
                       const float* init, float* y, size_t ldy, typename Simd::V lo, typename Simd::V hi) {
  int r = 0;
  for (; r + R <= rows; r += R)
    chain_block<Simd, R, P>(x + r * xs.ldx, xs, K, packed_w, p0, N, init, y + r * ldy, ldy, lo, hi);
  const float* xr = x + r * xs.ldx;
  float* yr = y + r * ldy;
  switch (rows - r) {  // R <= 8
    case 7: return chain_block<Simd, (R > 7 ? 7 : 1), P>(xr, xs, K, packed_w, p0, N, init, yr, ldy, lo, hi);
    case 6: return chain_block<Simd, (R > 6 ? 6 : 1), P>(xr, xs, K, packed_w, p0, N, init, yr, ldy, lo, hi);
    case 5: return chain_block<Simd, (R > 5 ? 5 : 1), P>(xr, xs, K, packed_w, p0, N, init, yr, ldy, lo, hi);
    case 4: return chain_block<Simd, (R > 4 ? 4 : 1), P>(xr, xs, K, packed_w, p0, N, init, yr, ldy, lo, hi);
    case 3: return chain_block<Simd, (R > 3 ? 3 : 1), P>(xr, xs, K, packed_w, p0, N, init, yr, ldy, lo, hi);
    case 2: return chain_block<Simd, (R > 2 ? 2 : 1), P>(xr, xs, K, packed_w, p0, N, init, yr, ldy, lo, hi);
    case 1: return chain_block<Simd, 1, P>(xr, xs, K, packed_w, p0, N, init, yr, ldy, lo, hi);
    default: return;
  }
}

// KernelSet::gemm_chain with register blocks of R rows x P panels (remainder panels one at a
// time, with up to twice the rows). Panel form only (the caller checks !is_dot_form(N)).
template <class Simd, int R, int P>
inline void gemm_chain(const float* x, int rows, size_t ldx, int taps, size_t tap_stride, int ch, const float* packed_w,
                       int N, const float* init, float* y, size_t ldy, float lo, float hi) noexcept {
  static_assert(R >= 1 && R <= 8 && P >= 1, "chain_rows handles remainders of up to 7 rows");
  const typename Simd::V vlo = Simd::set1(lo), vhi = Simd::set1(hi);
  const ChainRows xs{ldx, taps, ch, tap_stride};
  const int K = taps * ch;
  const int panels = (N + kPanel - 1) / kPanel;
  int p = 0;
  for (; p + P <= panels; p += P) chain_rows<Simd, R, P>(x, rows, xs, K, packed_w, p, N, init, y, ldy, vlo, vhi);
  // A single panel holds half the accumulators of a P = 2 block: twice the rows (up to 8) fill
  // the registers again, each weight load feeding twice the FMAs.
  constexpr int kSingleRows = 2 * R < 8 ? 2 * R : 8;
  for (; p < panels; ++p) chain_rows<Simd, kSingleRows, 1>(x, rows, xs, K, packed_w, p, N, init, y, ldy, vlo, vhi);
}

}  // namespace tickinfer::kernels::simd
