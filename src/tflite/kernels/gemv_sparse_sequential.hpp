#pragma once
// Block-sparse fp32 FULLY_CONNECTED in TFLite's reference order: the interpreter's float FC
// (ops/fully_connected.cpp) sums total = 0; total += x[k] * w[k][n], k ascending, every product
// and sum rounded (no FMA), because a dynamic-range program's next layer quantizes its input per
// row and turns a one-ulp difference into a whole step. These kernels keep that order over the
// engine's block-sparse format (kernels/sparse_panels.hpp: per 16-output panel, the rows k whose
// 16 weights hold a nonzero, ascending) and skip the all-zero blocks.
//
// Why skipping is exact: a dropped term is x[k] * 0 = +-0 for finite x[k]; total starts at +0
// and a round-to-nearest sum is -0 only when both operands are -0, so total is never -0, and
// total + (+-0) == total bit for bit. A non-finite x[k] makes x[k] * 0 NaN in the reference,
// which skipping would lose: the kernels check the row first and return false for such a row
// without writing it (the caller runs the dense form for it).
//
// Contract: y[n] = clamp(init[n] + total_n, lo, hi) for n in [0, w.N); init may be nullptr;
// nothing past y[N - 1] written; no allocation, lock or syscall.
#include "kernels/isa_variants.hpp"
#include "kernels/sparse_panels.hpp"

namespace tickinfer::tfl::kernels {

using GemvSparseSequentialFn = bool (*)(const float* x, const ::tickinfer::kernels::SparsePanelsView& w,
                                       const float* init, float* y, float lo, float hi) noexcept;

namespace scalar {
bool gemv_sparse_sequential(const float* x, const ::tickinfer::kernels::SparsePanelsView& w, const float* init,
                           float* y, float lo, float hi) noexcept;
}
#if defined(__x86_64__)
namespace avx2 {
bool gemv_sparse_sequential(const float* x, const ::tickinfer::kernels::SparsePanelsView& w, const float* init,
                           float* y, float lo, float hi) noexcept;
}
#endif

// The variant for `isa` (avx512 runs the AVX2 one; scalar and portable the scalar loop).
GemvSparseSequentialFn gemv_sparse_sequential_for(::tickinfer::kernels::Isa isa);

}  // namespace tickinfer::tfl::kernels
