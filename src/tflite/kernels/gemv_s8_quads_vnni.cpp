// AVX-512 VNNI int8 gemv on quad blocks (gemv_s8.hpp), plain and with the single-rounding
// requantization fused (gemv_s8_quads_requant.hpp). Compiled with the AVX-512 flags plus VNNI;
// chosen only where the CPU reports it (s8_vnni_supported).
//
// vpdpbusd multiplies unsigned by signed bytes and adds each 4 products straight into an int32
// lane (no int16 stage, no saturation). x is made unsigned by x ^ 0x80 = x + 128, and each packed
// block carries 128 * (row sum of w) for its 8 rows after its quads, subtracted at the end:
//   sum (x + 128) w - 128 sum w = sum x w, exact (int32 wrap-around, like the reference) for
// every weight including -128, so this set needs no rows fallback.
//
// A 64-byte load takes one block's quads q and q+1 (the 8 rows' 4 weights of each, side by side),
// so x's quads q and q+1 go to the low and high halves of one register; the halves are added
// when the block is done. One such x register meets four blocks (32 rows).
#include <immintrin.h>

#include <cstring>

#include "tflite/kernels/gemv_s8_quads_requant.hpp"
#include "tflite/kernels/gemv_s8.hpp"

namespace tickinfer::tfl::kernels {

void pack_s8_quads_vnni(const int8_t* w, int rows, int cols, int8_t* packed) noexcept {
  const int stride = s8_quad_stride(cols);
  const int blocks = s8_padded_rows(rows) / kS8BlockRows;
  const size_t quad_bytes = static_cast<size_t>(stride) * kS8BlockRows;
  const size_t block_bytes = quad_bytes + kS8BlockRows * 4;
  for (int b = 0; b < blocks; ++b) {
    const int r0 = b * kS8BlockRows, n = rows - r0 < kS8BlockRows ? rows - r0 : kS8BlockRows;
    int8_t* block = packed + static_cast<size_t>(b) * block_bytes;
    pack_s8_quad_blocks(w + static_cast<size_t>(r0) * cols, n, cols, block);  // one block, zero padded
    for (int i = 0; i < kS8BlockRows; ++i) {
      uint32_t sum = 0;  // wraps like the int32 accumulator; padding rows keep 0
      if (i < n) {
        const int8_t* row = w + static_cast<size_t>(r0 + i) * cols;
        for (int c = 0; c < cols; ++c) sum += static_cast<uint32_t>(static_cast<int32_t>(row[c]));
      }
      const int32_t v = static_cast<int32_t>(sum * 128u);
      std::memcpy(block + quad_bytes + 4 * static_cast<size_t>(i), &v, sizeof v);
    }
  }
}

namespace {

// Masks, not 256 <-> 512-bit casts, where a half is unused: GCC 12 reports its own cast
// intrinsics as using an uninitialized value.
//
// x's quads q (low half) and q + 1 (high half), each in all 8 lanes of its half, offset to u8.
inline __m512i quad_pair(const int8_t* x, int q) {
  int32_t a, b;
  std::memcpy(&a, x + 4 * q, 4);
  std::memcpy(&b, x + 4 * q + 4, 4);
  const __m512i v = _mm512_mask_blend_epi32(0xFF00, _mm512_set1_epi32(a), _mm512_set1_epi32(b));
  return _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80)));
}

// An odd last quad q in the low half; the high half 0, so whatever weights meet it add nothing.
inline __m512i quad_last(const int8_t* x, int q) {
  int32_t a;
  std::memcpy(&a, x + 4 * q, 4);
  return _mm512_maskz_set1_epi32(0x00FF, a ^ static_cast<int32_t>(0x80808080u));
}

inline __m512i load_pair(const int8_t* p) { return _mm512_loadu_si512(p); }
inline __m512i load_last(const int8_t* p) { return _mm512_maskz_loadu_epi8(0xFFFFFFFFull, p); }  // 32 bytes

// The Dot of gemv_s8_quads_requant.hpp. Each block's 8 row-sum corrections follow its quads.
struct VnniDot {
  int stride;

  size_t block_bytes() const { return static_cast<size_t>(stride) * kS8BlockRows + kS8BlockRows * 4; }

  // A block's 8 sums into acc: the two halves added, the row-sum correction taken off. A plain
  // 256-bit store: the requantization loads these right back, and a masked 512-bit store would
  // not forward to that load (a stall of its own per block). (The zero-masked extracts are GCC
  // 12's warning-free spelling of the low and high halves; the low one compiles to nothing.)
  void finish(__m512i a, const int8_t* block, int32_t* acc) const {
    __m256i s = _mm256_add_epi32(_mm512_maskz_extracti32x8_epi32(0xFF, a, 0), _mm512_maskz_extracti32x8_epi32(0xFF, a, 1));
    s = _mm256_sub_epi32(s, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + static_cast<size_t>(stride) * kS8BlockRows)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc), s);
  }

  // Four blocks' accumulators += x times each block's bytes at offset pq: a quad pair (64 bytes)
  // or, kLast, one last quad (32 bytes).
  template <bool kLast>
  static void dot4(__m512i& a0, __m512i& a1, __m512i& a2, __m512i& a3, __m512i xv, const int8_t* pq, size_t bb) {
    const auto load = kLast ? load_last : load_pair;
    a0 = _mm512_dpbusd_epi32(a0, xv, load(pq));
    a1 = _mm512_dpbusd_epi32(a1, xv, load(pq + bb));
    a2 = _mm512_dpbusd_epi32(a2, xv, load(pq + 2 * bb));
    a3 = _mm512_dpbusd_epi32(a3, xv, load(pq + 3 * bb));
  }

  // Eight accumulators, two per block (quad pairs alternating), so eight vpdpbusd chains cover
  // the instruction's latency (four would leave it waiting one cycle in five).
  void four_blocks(const int8_t* p, size_t bb, int quads, const int8_t* x, int32_t* acc) const {
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    int q = 0;
    for (; q + 4 <= quads; q += 4) {
      const int8_t* pq = p + 32 * static_cast<size_t>(q);
      dot4<false>(a0, a1, a2, a3, quad_pair(x, q), pq, bb);
      dot4<false>(b0, b1, b2, b3, quad_pair(x, q + 2), pq + 64, bb);
    }
    if (q + 2 <= quads) {
      dot4<false>(a0, a1, a2, a3, quad_pair(x, q), p + 32 * static_cast<size_t>(q), bb);
      q += 2;
    }
    if (q < quads) dot4<true>(b0, b1, b2, b3, quad_last(x, q), p + 32 * static_cast<size_t>(q), bb);
    finish(_mm512_add_epi32(a0, b0), p, acc);
    finish(_mm512_add_epi32(a1, b1), p + bb, acc + 8);
    finish(_mm512_add_epi32(a2, b2), p + 2 * bb, acc + 16);
    finish(_mm512_add_epi32(a3, b3), p + 3 * bb, acc + 24);
  }

  // Four blocks times four vectors `xs` bytes apart: each 64-byte weight load feeds four
  // vpdpbusd, one per vector; 16 accumulator chains. acc: the vectors' arrays, `as` apart.
  template <bool kLast>
  static void dot4x4(__m512i (&a)[4][4], const int8_t* x, size_t xs, int q, const int8_t* pq, size_t bb) {
    const auto load = kLast ? load_last : load_pair;
    const __m512i w0 = load(pq), w1 = load(pq + bb), w2 = load(pq + 2 * bb), w3 = load(pq + 3 * bb);
    for (int j = 0; j < 4; ++j) {
      const __m512i xv = kLast ? quad_last(x + j * xs, q) : quad_pair(x + j * xs, q);
      a[j][0] = _mm512_dpbusd_epi32(a[j][0], xv, w0);
      a[j][1] = _mm512_dpbusd_epi32(a[j][1], xv, w1);
      a[j][2] = _mm512_dpbusd_epi32(a[j][2], xv, w2);
      a[j][3] = _mm512_dpbusd_epi32(a[j][3], xv, w3);
    }
  }

  void four_blocks_four(const int8_t* p, size_t bb, int quads, const int8_t* x, size_t xs, int32_t* acc,
                        size_t as) const {
    __m512i a[4][4];
    for (auto& row : a) {
      for (auto& v : row) v = _mm512_setzero_si512();
    }
    int q = 0;
    for (; q + 2 <= quads; q += 2) dot4x4<false>(a, x, xs, q, p + 32 * static_cast<size_t>(q), bb);
    if (q < quads) dot4x4<true>(a, x, xs, q, p + 32 * static_cast<size_t>(q), bb);
    for (int j = 0; j < 4; ++j) {
      for (int i = 0; i < 4; ++i) finish(a[j][i], p + i * bb, acc + j * as + 8 * i);
    }
  }

  void one_block(const int8_t* p, int quads, const int8_t* x, int32_t* acc) const {
    __m512i a0 = _mm512_setzero_si512(), a1 = a0;  // two chains: a lone block is latency-bound
    int q = 0;
    for (; q + 4 <= quads; q += 4) {
      a0 = _mm512_dpbusd_epi32(a0, quad_pair(x, q), load_pair(p + 32 * static_cast<size_t>(q)));
      a1 = _mm512_dpbusd_epi32(a1, quad_pair(x, q + 2), load_pair(p + 32 * static_cast<size_t>(q) + 64));
    }
    if (q + 2 <= quads) {
      a0 = _mm512_dpbusd_epi32(a0, quad_pair(x, q), load_pair(p + 32 * static_cast<size_t>(q)));
      q += 2;
    }
    if (q < quads) a1 = _mm512_dpbusd_epi32(a1, quad_last(x, q), load_last(p + 32 * static_cast<size_t>(q)));
    finish(_mm512_add_epi32(a0, a1), p, acc);
  }
};

}  // namespace

void gemv_s8s8_s32_quads_vnni(const int8_t* w, int rows, int stride, const int8_t* x, int32_t* acc) noexcept {
  const VnniDot d{stride};
  const int blocks = (rows + kS8BlockRows - 1) / kS8BlockRows;
  const int quads = stride / 4;
  const size_t block_bytes = d.block_bytes();
  int b = 0;
  for (; b + 4 <= blocks; b += 4) {
    d.four_blocks(w + static_cast<size_t>(b) * block_bytes, block_bytes, quads, x, acc + static_cast<size_t>(b) * kS8BlockRows);
  }
  for (; b < blocks; ++b) {
    d.one_block(w + static_cast<size_t>(b) * block_bytes, quads, x, acc + static_cast<size_t>(b) * kS8BlockRows);
  }
}

void gemm_s8s8_s32_quads_vnni(const int8_t* w, int rows, int stride, const int8_t* x, int n, int32_t* acc) noexcept {
  const VnniDot d{stride};
  const int blocks = (rows + kS8BlockRows - 1) / kS8BlockRows;
  const int quads = stride / 4;
  const size_t block_bytes = d.block_bytes();
  const size_t acc_step = static_cast<size_t>(blocks) * kS8BlockRows;
  int p = 0;
  for (; p + 4 <= n; p += 4) {
    const int8_t* xp = x + static_cast<size_t>(p) * stride;
    int32_t* ap = acc + static_cast<size_t>(p) * acc_step;
    int b = 0;
    for (; b + 4 <= blocks; b += 4) {
      d.four_blocks_four(w + static_cast<size_t>(b) * block_bytes, block_bytes, quads, xp, static_cast<size_t>(stride),
                         ap + static_cast<size_t>(b) * kS8BlockRows, acc_step);
    }
    for (; b < blocks; ++b) {
      for (int j = 0; j < 4; ++j) {
        d.one_block(w + static_cast<size_t>(b) * block_bytes, quads, xp + static_cast<size_t>(j) * stride,
                    ap + static_cast<size_t>(j) * acc_step + static_cast<size_t>(b) * kS8BlockRows);
      }
    }
  }
  for (; p < n; ++p) {
    gemv_s8s8_s32_quads_vnni(w, rows, stride, x + static_cast<size_t>(p) * stride, acc + static_cast<size_t>(p) * acc_step);
  }
}

void gemv_s8_quads_requant_single_vnni(const int8_t* w, int rows, int stride, const int8_t* x,
                                       const BlockRequantSingle& q, int8_t* y) noexcept {
  quads_requant_single_dispatch(VnniDot{stride}, w, rows, x, q, y);
}

}  // namespace tickinfer::tfl::kernels
