#pragma once
// Dense or block-sparse, per weight matrix, decided when a plan is compiled (docs/pruning.md).
//
// A matrix whose 1 x 16 blocks (kernels/sparse_panels.hpp) are less than a quarter zero stays
// dense without being timed: on the machines measured, the sparse kernel needs about 40% zero
// blocks to break even, so below a quarter it cannot win. Otherwise, under SparseMode::Auto, both
// kernels are timed on this machine with these weights (interleaved rounds, medians), and the
// sparse form is kept only when it is at least 3% faster: where sparse loses, the plan is as fast
// as a dense one. SparseMode::Sparse keeps it whenever a block is zero (tests, studies);
// SparseMode::Dense never. The note says which was chosen and why, for `tickinfer inspect --plan`.
#include <string>

#include "engine/plan_layout.hpp"

namespace tickinfer::engine {

// w: the row-major (K x N) matrix; packed: its dense packed form (the one timed against).
// Returns the sparse form to run, owned by pw, or nullptr to run dense; appends to `note`.
const SparseWeights* choose_sparse_form(PackedWeights& pw, const kernels::KernelSet& ks, SparseMode mode,
                                        const float* w, const float* packed, int K, int N, const std::string& what,
                                        std::string& note);

}  // namespace tickinfer::engine
