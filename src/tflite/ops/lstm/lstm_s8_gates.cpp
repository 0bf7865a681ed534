// Dense or block-sparse stacked int8 LSTM gates (lstm_s8_gates.hpp).
#include "tflite/ops/lstm/lstm_s8_gates.hpp"

#include <algorithm>
#include <cstring>

namespace tickinfer::tfl::ops::lstm {

void S8Gates::finish(const kernels::S8Kernels& k, SparseChoice mode, ::tickinfer::kernels::Isa isa,
                     bool reaches_minus_128, const char* what) {
  std::vector<int8_t> plain;
  if (mode != SparseChoice::Dense) plain = m_.plain;
  m_.pack(k);
  if (plain.empty()) return;
  // The dense kernel reads `stride` bytes of x; both timed forms copy the timing input into a
  // padded buffer first, so the copy costs them the same.
  std::vector<int8_t> xp(static_cast<size_t>(m_.stride), 0);
  std::vector<int32_t> acc(static_cast<size_t>(kernels::s8_padded_rows(m_.rows)) + kernels::kS8SparseRows);
  const size_t cols = static_cast<size_t>(m_.cols);
  sparse_ = fc::choose_sparse_fc(
      mode, isa, reaches_minus_128, plain.data(), m_.rows, m_.cols,
      [&](const int8_t* x) {
        std::memcpy(xp.data(), x, cols);
        m_.gemv(k, m_.rows, xp.data(), acc.data());
      },
      [&](const fc::SparseFc& s, const int8_t* x) {
        std::memcpy(xp.data(), x, cols);
        s.gemv(s.view, xp.data(), acc.data());
      },
      note_);
  if (!note_.empty()) note_ = std::string(what) + " " + note_;
}

void S8Gates::gemm(const kernels::S8Kernels& k, const int8_t* x, int n, int32_t* acc) const noexcept {
  if (!sparse_) {  // the dense kernels' step is s8_padded_rows(rows), which acc_rows() is then
    k.gemm(m_.packed.data(), m_.rows, m_.stride, x, n, acc);
    return;
  }
  const size_t step = acc_rows();
  for (int p = 0; p < n; ++p) {
    sparse_->gemv(sparse_->view, x + static_cast<size_t>(p) * static_cast<size_t>(m_.stride), acc + p * step);
  }
}

size_t S8Gates::acc_rows() const {
  const size_t dense = static_cast<size_t>(kernels::s8_padded_rows(m_.rows));
  return sparse_ ? std::max(dense, sparse_->acc_size()) : dense;
}

std::string gate_notes(const S8Gates& wx, const S8Gates& wh, const S8Gates* projection) {
  std::string s;
  for (const S8Gates* g : {&wx, &wh, projection}) {
    if (g && !g->note().empty()) s += "; " + g->note();
  }
  return s;
}

}  // namespace tickinfer::tfl::ops::lstm
