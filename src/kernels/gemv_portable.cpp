// Portable gemv over the packed layout (kernel_set.hpp), written with the 4-float vector type
// of simd_portable.hpp: SSE2 on baseline x86-64, NEON on AArch64, no ISA flags.
//
// Register budget: SSE2 has 16 xmm registers, NEON 32 q registers. A multiply-add is a separate
// multiply and add on SSE2 (3-4 cycles of add latency, two add pipes) and one fused instruction
// of ~4 cycles on NEON, so about 8 independent accumulator chains keep either busy while leaving
// registers for the x broadcast and the weight loads on SSE2.
//
//  * Panel form: blocks of 2 panels are 8 accumulators (4 vectors per 16-float panel) fed by one
//    x[k] broadcast per 32 weights. A last single panel (4 accumulators) splits K into 2
//    interleaved sets to keep 8 chains. A partial panel is stored element by element, so nothing
//    past y[N-1] is written and init is not read past init[N-1].
//  * Dot form (N <= kDotMaxN): shared with the other ISAs, gemv_dot_simd.hpp.
#include "kernels/gemv_dot_simd.hpp"
#include "kernels/kernels_by_isa.hpp"
#include "kernels/simd_portable.hpp"
#include "kernels/unroll.hpp"

namespace tickinfer::kernels::portable {

namespace {

using V = Simd::V;
constexpr int kW = Simd::kWidth;               // floats per vector
constexpr int kVecsPerPanel = kPanel / kW;     // 4
static_assert(kPanel % kW == 0 && kDotKAlign % kW == 0, "panels and dot rows are whole vectors");

// y = clamp(init + acc, lo, hi) for one value, exactly as the scalar reference rounds it.
inline V finish(V acc, const float* init, V lo, V hi) {
  if (init) acc = Simd::load(init) + acc;
  return Simd::min(hi, Simd::max(lo, acc));  // data second: NaN propagates
}

// Stores columns [n0, n0 + kW) of the result, clipped at N.
inline void store_columns(V acc, const float* init, float* y, int n0, int N, float lo, float hi) {
  if (N - n0 >= kW) {
    Simd::store(y + n0, finish(acc, init ? init + n0 : nullptr, Simd::set1(lo), Simd::set1(hi)));
    return;
  }
  for (int j = 0; j < N - n0; ++j) {
    y[n0 + j] = simd::clamp_one(acc[j], init ? init + n0 + j : nullptr, lo, hi);
  }
}

// P consecutive panels, the first at w: out[v] = columns [kW v, kW v + kW) of the block.
template <int P, int S>
inline void panel_block(const float* x, int K, const float* w, V (&out)[kVecsPerPanel * P]) {
  constexpr int NV = kVecsPerPanel * P;
  const size_t panel_stride = static_cast<size_t>(K) * kPanel;
  V acc[NV][S];  // acc[v][s]: columns kW v .. kW v + kW - 1, rows k = s mod S
  TICKINFER_UNROLL
  for (int v = 0; v < NV; ++v)
    TICKINFER_UNROLL
    for (int s = 0; s < S; ++s) acc[v][s] = Simd::zero();
  auto column_vector = [&](const float* row, int v) {
    return Simd::load(row + (v / kVecsPerPanel) * panel_stride + kW * (v % kVecsPerPanel));
  };
  int k = 0;
  for (; k + S <= K; k += S) {
    TICKINFER_UNROLL
    for (int s = 0; s < S; ++s) {
      const V xb = Simd::set1(x[k + s]);
      const float* row = w + static_cast<size_t>(k + s) * kPanel;
      TICKINFER_UNROLL
      for (int v = 0; v < NV; ++v) acc[v][s] = Simd::fmadd(xb, column_vector(row, v), acc[v][s]);
    }
  }
  for (; k < K; ++k) {
    const V xb = Simd::set1(x[k]);
    const float* row = w + static_cast<size_t>(k) * kPanel;
    TICKINFER_UNROLL
    for (int v = 0; v < NV; ++v) acc[v][0] = Simd::fmadd(xb, column_vector(row, v), acc[v][0]);
  }
  TICKINFER_UNROLL
  for (int v = 0; v < NV; ++v) out[v] = simd::sum_sets<Simd, 0, S>(acc[v]);
}

template <int P, int S>
inline void panel_block_store(const float* x, int K, const float* packed_w, int p0, int N,
                              const float* init, float* y, float lo, float hi) {
  constexpr int NV = kVecsPerPanel * P;
  V out[NV];
  panel_block<P, S>(x, K, packed_w + static_cast<size_t>(p0) * K * kPanel, out);
  const int n0 = p0 * kPanel;
  if (N - n0 >= NV * kW) {  // whole block: full-width stores only
    const V vlo = Simd::set1(lo), vhi = Simd::set1(hi);
    TICKINFER_UNROLL
    for (int v = 0; v < NV; ++v)
      Simd::store(y + n0 + kW * v, finish(out[v], init ? init + n0 + kW * v : nullptr, vlo, vhi));
    return;
  }
  TICKINFER_UNROLL
  for (int v = 0; v < NV; ++v) {
    if (n0 + kW * v < N) store_columns(out[v], init, y, n0 + kW * v, N, lo, hi);
  }
}

void gemv_panels(const float* x, int K, const float* packed_w, int N, const float* init,
                 float* y, float lo, float hi) {
  const int panels = (N + kPanel - 1) / kPanel;
  int p = 0;
  for (; p + 2 <= panels; p += 2) panel_block_store<2, 1>(x, K, packed_w, p, N, init, y, lo, hi);
  if (p < panels) panel_block_store<1, 2>(x, K, packed_w, p, N, init, y, lo, hi);
}

}  // namespace

void gemv(const float* x, int K, const float* packed_w, int N, const float* init, float* y,
          float lo, float hi) noexcept {
  simd::gemv<Simd>(x, K, packed_w, N, init, y, lo, hi, gemv_panels);
}

}  // namespace tickinfer::kernels::portable
