#pragma once
// Dense or block-sparse for one int8 FULLY_CONNECTED filter (int8 and hybrid), decided at
// prepare, by engine/sparse_choice.cpp's rule for the fp32 kernels: a filter whose 1x16 blocks
// (16 output rows at one input column, tflite/kernels/s8_sparse.hpp) are less than a quarter
// zero stays dense untimed; otherwise, under SparseChoice::Auto, both forms run one batch row in
// interleaved rounds on this machine and the sparse one is kept only when its median is at least
// 3% below dense's. Sparse keeps it whenever a block is zero; Dense never. The decision and the
// times go into `note`, which the op's describe() shows (`tickinfer inspect`).
#include <functional>
#include <memory>
#include <string>

#include "tflite/kernels/s8_sparse.hpp"
#include "tflite/prepared_op.hpp"

namespace tickinfer::tfl::ops::fc {

struct SparseFc {
  kernels::S8Sparse matrix;
  kernels::S8SparseView view;
  kernels::GemvS8SparseFn gemv = nullptr;
  kernels::GemvS8SparseRequantFn fused = nullptr;  // with single-rounding requantization, or nullptr
  size_t acc_size() const { return static_cast<size_t>(matrix.groups) * kernels::kS8SparseRows; }
};

// w: row-major [units x depth]. dense / sparse: one batch row of the op each way on the given
// int8 input (depth values), for the timing. Returns the sparse form to run, or nullptr.
std::unique_ptr<SparseFc> choose_sparse_fc(SparseChoice mode, ::tickinfer::kernels::Isa isa, bool reaches_minus_128,
                                           const int8_t* w, int units, int depth,
                                           const std::function<void(const int8_t*)>& dense,
                                           const std::function<void(const SparseFc&, const int8_t*)>& sparse,
                                           std::string& note);

}  // namespace tickinfer::tfl::ops::fc
