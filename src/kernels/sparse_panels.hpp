#pragma once
// Block-sparse fp32 gemv: the weights of a pruned Dense layer (or an LSTM's stacked gate matrix)
// with the zeros really skipped.
//
// Format ("panel rows", 1 input x 16 outputs): W (K x N) is cut into the same 16-wide column
// panels as the dense panel form (kernel_set.hpp), and within each panel only the rows k whose 16
// weights hold a nonzero are kept: a list of (k, 16 floats) per panel, in ascending k. A panel row
// is what one broadcast of x[k] multiplies in the dense kernel, so each kept block costs what a
// dense row costs (one broadcast, one 16-float load, 16 multiply-adds) and each dropped one costs
// nothing. Pruning in this pattern (tickinfer.pruning block=(1, 16)) makes the blocks vanish;
// unstructured pruning at 80% leaves almost every 16-wide row with a nonzero (0.8^16 = 2.8% of
// them empty), which is why that pattern does not pay here and the compiler keeps dense for it.
//
// Why this block and not others (measured against CSR and 2:4 kernels by bench/sparse_formats,
// table in docs/pruning.md "Formats, measured"): 1 x 16 keeps the dense
// kernel's register blocking and needs one 2-byte index per 16 multiply-adds; 1 x 8 doubles the
// index and broadcast work per weight; K x 1 blocks (along the inputs) need a horizontal sum per
// output; CSR (one index per weight) turns every multiply-add into a gather.
//
// Contracts as KernelSet::gemv's: y[n] = clamp(init[n] + sum_k x[k] W[k][n], lo, hi) for n in
// [0, N); init may be nullptr or alias y; nothing past y[N-1] is written; no allocation, lock or
// syscall. The SIMD variants split each panel's blocks over interleaved accumulators (for the
// FMA pipes), so their sums are ordered differently from the scalar reference's single chain:
// equal within float rounding (tests: relative 1e-5), not bit for bit.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/aligned_allocator.hpp"
#include "kernels/kernel_set.hpp"

namespace tickinfer::kernels {

inline constexpr int kSparseBlock = kPanel;  // outputs per block: one dense panel row

// Non-owning view the kernels read (the plan keeps the owner alive).
struct SparsePanelsView {
  int K = 0, N = 0, panels = 0;
  const uint32_t* start = nullptr;  // panels + 1 entries: panel p's blocks are [start[p], start[p + 1])
  const uint16_t* rows = nullptr;   // input index k of each block
  const float* values = nullptr;    // kSparseBlock floats per block, zero past N
};

struct SparsePanels {
  int K = 0, N = 0, panels = 0;
  std::vector<uint32_t> start;
  std::vector<uint16_t> rows;
  AlignedVector<float> values;  // each block one cache line
  size_t blocks() const { return rows.size(); }
  size_t bytes() const { return start.size() * 4 + rows.size() * 2 + values.size() * 4; }
  SparsePanelsView view() const { return {K, N, panels, start.data(), rows.data(), values.data()}; }
};

// How sparse a row-major (K x N) matrix is, in the ways the formats care about.
struct SparsityStats {
  double zero_weights = 0;  // exact zeros / K N
  double zero_blocks = 0;   // 1 x 16 panel rows that are all zero / (K panels)
};
SparsityStats sparsity_stats(const float* w, int K, int N) noexcept;

// Packs a row-major (K x N) matrix (K <= 65536). Throws tickinfer::Error for K beyond that.
SparsePanels pack_sparse_panels(const float* w, int K, int N);

using SparseGemvFn = void (*)(const float* x, const SparsePanelsView& w, const float* init, float* y, float lo,
                              float hi) noexcept;

// The variant for `isa` (isa_variants.hpp's fallback rule: avx512, avx2, then the scalar reference).
SparseGemvFn sparse_gemv_for(Isa isa);

namespace scalar {
void sparse_gemv(const float* x, const SparsePanelsView& w, const float* init, float* y, float lo, float hi) noexcept;
}
#if defined(TICKINFER_HAVE_X86)
namespace avx2 {
void sparse_gemv(const float* x, const SparsePanelsView& w, const float* init, float* y, float lo, float hi) noexcept;
}
namespace avx512 {
void sparse_gemv(const float* x, const SparsePanelsView& w, const float* init, float* y, float lo, float hi) noexcept;
}
#endif

}  // namespace tickinfer::kernels
