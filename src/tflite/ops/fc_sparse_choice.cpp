// The measured dense/sparse choice of an int8 FULLY_CONNECTED filter (fc_sparse_choice.hpp).
#include "tflite/ops/fc_sparse_choice.hpp"

#include <cstdio>
#include <random>
#include <vector>

#include "kernels/sparse_timing.hpp"

namespace tickinfer::tfl::ops::fc {

namespace cpu_kernels = ::tickinfer::kernels;  // the timing rule shared with the fp32 plans

std::unique_ptr<SparseFc> choose_sparse_fc(SparseChoice mode, ::tickinfer::kernels::Isa isa, bool reaches_minus_128,
                                           const int8_t* w, int units, int depth,
                                           const std::function<void(const int8_t*)>& dense,
                                           const std::function<void(const SparseFc&, const int8_t*)>& sparse,
                                           std::string& note) {
  if (mode == SparseChoice::Dense || depth > 65536) return nullptr;
  const kernels::S8SparsityStats st = kernels::s8_sparsity_stats(w, units, depth);
  if (st.zero_weights == 0.0) return nullptr;  // an unpruned filter: nothing to say
  note = "sparsity " + cpu_kernels::percent_text(st.zero_weights) + " zero weights, " +
         cpu_kernels::percent_text(st.zero_blocks) + " zero 1x16 blocks";
  if (st.zero_blocks == 0.0 || (mode == SparseChoice::Auto && st.zero_blocks < cpu_kernels::kSparseMeasureFrom)) {
    note += " -> dense (too few zero blocks for the sparse kernel to pay)";
    return nullptr;
  }
  auto s = std::make_unique<SparseFc>();
  s->matrix = kernels::pack_s8_sparse(w, units, depth);
  s->view = s->matrix.view();
  s->gemv = kernels::gemv_s8_sparse_for(isa, reaches_minus_128);
  s->fused = kernels::gemv_s8_sparse_requant_single_for(isa, reaches_minus_128);
  char b[128];
  if (mode == SparseChoice::Auto) {
    std::mt19937 rng(12345);
    std::uniform_int_distribution<int> u(-127, 127);
    std::vector<int8_t> x(static_cast<size_t>(depth));
    for (int8_t& v : x) v = static_cast<int8_t>(u(rng));
    const cpu_kernels::SparseTiming t =
        cpu_kernels::time_dense_and_sparse([&] { dense(x.data()); }, [&] { sparse(*s, x.data()); });
    std::snprintf(b, sizeof b, "; measured sparse %.0f ns vs dense %.0f ns", t.sparse_ns, t.dense_ns);
    note += b;
    if (!t.sparse_wins()) {
      note += " -> dense";
      return nullptr;
    }
  }
  std::snprintf(b, sizeof b, " -> sparse 1x16 (%zu gathered quads, %zu B, %s)", s->matrix.quads(), s->matrix.bytes(),
                s->gemv == kernels::gemv_s8_sparse_scalar ? "scalar" : "avx2");
  note += b;
  return s;
}

}  // namespace tickinfer::tfl::ops::fc
