#pragma once
// Block-sparse int8 gemv for a pruned FULLY_CONNECTED filter (int8 and hybrid), the int8 twin of
// kernels/sparse_panels.hpp.
//
// Blocks: in TFLite's filter layout [units, depth], tickinfer.pruning block=(1, 16) zeroes 16
// consecutive output rows at one input column (the Keras kernel is [in, out]). The filter is cut
// into groups of 16 output rows; within a group only the columns whose 16 weights hold a nonzero
// are kept, in ascending order, and packed four at a time into "gathered quads": 4 input indices
// and 64 weight bytes laid out like two blocks of the dense quad layout (gemv_s8.hpp), rows 0-7
// then rows 8-15, each row's 4 weights side by side. The kernel builds the 4 inputs' bytes from
// their indices and meets all 16 rows with them in two vpmaddubsw, exactly as the dense quad
// kernel meets 8 rows with 4 consecutive inputs. A group's last quad is padded with weight-0
// slots (index 0), which add 0. Groups of 4 consecutive inputs (the dense quads) would keep a
// quad whenever any of its 4 columns survives: at 80% block pruning 59% of them, against 20% of
// the columns here.
//
// Integer sums do not depend on order, so acc equals the dense gemv's bit for bit (the filter's
// full row sums, zeros included, stay folded into the bias by the caller as for the dense
// kernel). No allocation, lock or syscall; x is read only at the kept indices (no padding).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/isa_variants.hpp"
#include "tflite/kernels/block_requant.hpp"

namespace tickinfer::tfl::kernels {

inline constexpr int kS8SparseRows = 16;   // output rows per group: one 1x16 block each column
inline constexpr int kS8SparseQuadBytes = 4 * kS8SparseRows;

struct S8SparseView {
  int rows = 0, cols = 0, groups = 0;
  const uint32_t* start = nullptr;  // groups + 1: group g's quads are [start[g], start[g + 1])
  const uint16_t* index = nullptr;  // 4 input indices per quad
  const int8_t* weights = nullptr;  // kS8SparseQuadBytes per quad
};

struct S8Sparse {
  int rows = 0, cols = 0, groups = 0;
  std::vector<uint32_t> start;
  std::vector<uint16_t> index;
  std::vector<int8_t> weights;
  size_t quads() const { return start.empty() ? 0 : start.back(); }
  size_t bytes() const { return start.size() * 4 + index.size() * 2 + weights.size(); }
  S8SparseView view() const { return {rows, cols, groups, start.data(), index.data(), weights.data()}; }
};

struct S8SparsityStats {
  double zero_weights = 0;  // exact zeros / (rows cols)
  double zero_blocks = 0;   // all-zero (16 rows x 1 column) blocks / (groups cols)
};
S8SparsityStats s8_sparsity_stats(const int8_t* w, int rows, int cols) noexcept;

// Packs row-major w [rows x cols] (cols <= 65536; the caller checks).
S8Sparse pack_s8_sparse(const int8_t* w, int rows, int cols);

// acc[r] = sum_c w[r][c] * x[c] for r in [0, groups * 16) (rows past `rows` get 0), int32 with
// wrap-around. acc holds groups * 16 int32.
using GemvS8SparseFn = void (*)(const S8SparseView& w, const int8_t* x, int32_t* acc) noexcept;
void gemv_s8_sparse_scalar(const S8SparseView& w, const int8_t* x, int32_t* acc) noexcept;
#if defined(__x86_64__)
// The sign trick of gemv_s8s8_s32_quads_avx2: exact while no weight is -128.
void gemv_s8_sparse_avx2(const S8SparseView& w, const int8_t* x, int32_t* acc) noexcept;
// The same with each 8 rows' sums requantized in registers (single rounding, block_requant.hpp,
// packed for w.rows rows): y[0, rows) = requantize_s32_to_s8_scalar<Single> of the sums.
void gemv_s8_sparse_requant_single_avx2(const S8SparseView& w, const int8_t* x, const BlockRequantSingle& q,
                                        int8_t* y) noexcept;
#endif
using GemvS8SparseRequantFn = void (*)(const S8SparseView& w, const int8_t* x, const BlockRequantSingle& q,
                                       int8_t* y) noexcept;
// The fused variant for isa, or nullptr where there is none (then gemv + the requant kernel).
GemvS8SparseRequantFn gemv_s8_sparse_requant_single_for(::tickinfer::kernels::Isa isa, bool weights_reach_minus_128);
// isa_variants.hpp's rule (avx512 falls back to avx2); a filter holding -128 gets the scalar
// reference, which the measured choice then normally turns down.
GemvS8SparseFn gemv_s8_sparse_for(::tickinfer::kernels::Isa isa, bool weights_reach_minus_128);

}  // namespace tickinfer::tfl::kernels
