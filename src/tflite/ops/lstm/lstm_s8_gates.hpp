#pragma once
// The stacked int8 gate matrix of an integer or hybrid LSTM (all gates' rows, one input side):
// packed dense for the int8 gemv kernels, and, for a pruned one, the block-sparse form
// (tflite/kernels/s8_sparse.hpp) where fc_sparse_choice.hpp's measured rule keeps it. Both give
// the same int32 sums bit for bit, so the step code after the gemv is the same either way.
//
// Gates are stacked in blocks of n_cell rows and the step may use only a prefix of them (the
// forget gate last, skipped from a zero cell state); the sparse form then runs the 16-row groups
// that cover the prefix. A group straddling the prefix's end computes a few rows nobody reads.
#include <memory>
#include <string>
#include <vector>

#include "tflite/kernels/gemv_s8.hpp"
#include "tflite/kernels/s8_matrix.hpp"
#include "tflite/ops/fc_sparse_choice.hpp"
#include "tflite/prepared_op.hpp"

namespace tickinfer::tfl::ops::lstm {

class S8Gates {
 public:
  void init(int rows, int cols) { m_.init(rows, cols); }
  void set_rows(int row0, const int8_t* w, int n) { m_.set_rows(row0, w, n); }
  bool reaches_minus_128() const { return m_.reaches_minus_128(); }

  // Packs for k, then, unless mode is Dense, decides dense or sparse for this machine
  // (`what` names the matrix in the note). Prepare time only.
  void finish(const kernels::S8Kernels& k, SparseChoice mode, ::tickinfer::kernels::Isa isa, bool reaches_minus_128,
              const char* what);

  // acc[0, used_rows) = the first used_rows rows times x (readable for stride() bytes); acc holds
  // acc_rows() int32.
  void gemv(const kernels::S8Kernels& k, int used_rows, const int8_t* x, int32_t* acc) const noexcept {
    if (sparse_) {
      kernels::S8SparseView v = sparse_->view;
      v.groups = (used_rows + kernels::kS8SparseRows - 1) / kernels::kS8SparseRows;
      sparse_->gemv(v, x, acc);
    } else {
      m_.gemv(k, used_rows, x, acc);
    }
  }
  // The gemv of n vectors laid out stride() bytes apart, all rows: acc[p * acc_rows() + r] for p in
  // [0, n). The dense form loads each weight once for several vectors (S8Kernels::gemm); the
  // sparse one runs its gemv per vector.
  void gemm(const kernels::S8Kernels& k, const int8_t* x, int n, int32_t* acc) const noexcept;
  int stride() const { return m_.stride; }
  bool sparse() const { return sparse_ != nullptr; }
  int cols() const { return m_.cols; }
  size_t acc_rows() const;
  // The decision with its measurements ("" for an unpruned matrix), for describe().
  const std::string& note() const { return note_; }

 private:
  kernels::S8Matrix m_;
  std::unique_ptr<fc::SparseFc> sparse_;
  std::string note_;
};

// "; <W_x note>; <W_h note>[; <projection note>]" for the matrices that have one, for describe().
std::string gate_notes(const S8Gates& wx, const S8Gates& wh, const S8Gates* projection = nullptr);

}  // namespace tickinfer::tfl::ops::lstm
