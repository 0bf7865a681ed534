// A pruned float FULLY_CONNECTED filter run block-sparse in TFLite's reference order
// (tflite/kernels/gemv_sparse_sequential.hpp: bit for bit the dense sequential op, a row with a
// non-finite input value excepted, which goes through the reference loop). Chosen at prepare by
// the rule every sparse choice shares (kernels/sparse_timing.hpp): under SparseChoice::Auto a
// filter with at least a quarter of its 1x16 blocks zero runs both forms on this machine and
// keeps sparse when its median is at least 3 % below dense's. What a .tkq file's fp32 layers of a
// pruned model (tickinfer quantize --mode auto keeps some) and a dynamic-range file's float
// layers need to keep the pruning's speed on the interpreter.
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel_set.hpp"
#include "kernels/sparse_timing.hpp"
#include "tflite/kernels/gemv_sparse_sequential.hpp"
#include "tflite/ops/fully_connected.hpp"

namespace tickinfer::tfl::ops::fc {

namespace {

namespace ck = ::tickinfer::kernels;

class FloatFcSparseSequential final : public PreparedOp {
 public:
  FloatFcSparseSequential(const FcGeometry& g, const float* w, const float* bias, float lo, float hi,
                          ck::SparsePanels panels, kernels::GemvSparseSequentialFn kernel, std::string note)
      : g_(g), w_(w), bias_(bias), lo_(lo), hi_(hi), panels_(std::move(panels)), view_(panels_.view()),
        kernel_(kernel), note_(std::move(note)) {}
  void eval(const TensorMemory& mem) noexcept override {
    const float* x = mem.at<float>(g_.input);
    float* y = mem.at<float>(g_.output);
    for (int b = 0; b < g_.batch; ++b) {
      const float* xr = x + static_cast<size_t>(b) * g_.depth;
      float* yr = y + static_cast<size_t>(b) * g_.units;
      if (!kernel_(xr, view_, bias_, yr, lo_, hi_)) float_reference_row(xr, w_, bias_, g_.units, g_.depth, lo_, hi_, yr);
    }
  }
  std::string describe() const override { return "float fc block-sparse sequential (reference order); " + note_; }
  int64_t macs() const override { return int64_t{g_.batch} * g_.units * g_.depth; }

 private:
  FcGeometry g_;
  const float* w_;     // the constant filter [units, depth], for rows the kernel declines
  const float* bias_;  // constant, or nullptr
  float lo_, hi_;
  ck::SparsePanels panels_;
  ck::SparsePanelsView view_;
  kernels::GemvSparseSequentialFn kernel_;
  std::string note_;
};

}  // namespace

std::unique_ptr<PreparedOp> make_float_sparse(const PrepareContext& ctx, const FcGeometry& g, const float* w,
                                              const float* bias, float lo, float hi) {
  const SparseChoice mode = ctx.options.sparse;
  if (mode == SparseChoice::Dense || g.depth > 65536 || ck::is_dot_form(g.units)) return nullptr;
  std::vector<float> wt(static_cast<size_t>(g.depth) * g.units);  // W[k][n] = filter[n][k]
  for (int n = 0; n < g.units; ++n)
    for (int k = 0; k < g.depth; ++k) wt[static_cast<size_t>(k) * g.units + n] = w[static_cast<size_t>(n) * g.depth + k];
  const ck::SparsityStats st = ck::sparsity_stats(wt.data(), g.depth, g.units);
  if (st.zero_blocks == 0.0 || (mode == SparseChoice::Auto && st.zero_blocks < ck::kSparseMeasureFrom)) return nullptr;
  std::string note = "sparsity " + ck::percent_text(st.zero_weights) + " zero weights, " +
                     ck::percent_text(st.zero_blocks) + " zero 1x16 blocks";
  ck::SparsePanels panels = ck::pack_sparse_panels(wt.data(), g.depth, g.units);
  const kernels::GemvSparseSequentialFn kernel = kernels::gemv_sparse_sequential_for(ctx.isa);
  if (mode == SparseChoice::Auto) {
    // Against the dense form prepare would otherwise pick: the 4-row sequential kernel one row at
    // a time where the set has it, the reference loop where not.
    const ck::KernelSet& ks = ck::kernel_set(ctx.isa);
    std::vector<float> packed(ck::packed_floats(g.depth, g.units));
    ck::pack_weights(wt.data(), g.depth, g.units, packed.data());
    std::mt19937 rng(12345);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(g.depth)), y(static_cast<size_t>(g.units));
    for (float& v : x) v = u(rng);
    const ck::SparsePanelsView view = panels.view();
    const ck::SparseTiming t = ck::time_dense_and_sparse(
        [&] {
          if (ks.gemm4_sequential) {
            ks.gemm4_sequential(x.data(), 1, x.size(), g.depth, packed.data(), g.units, bias, y.data(), y.size(), lo, hi);
          } else {
            float_reference_row(x.data(), w, bias, g.units, g.depth, lo, hi, y.data());
          }
        },
        [&] { kernel(x.data(), view, bias, y.data(), lo, hi); });
    char b[96];
    std::snprintf(b, sizeof b, "; measured sparse %.0f ns vs dense %.0f ns", t.sparse_ns, t.dense_ns);
    note += b;
    if (!t.sparse_wins()) return nullptr;
  }
  note += " -> sparse 1x16";
  return std::make_unique<FloatFcSparseSequential>(g, w, bias, lo, hi, std::move(panels), kernel, std::move(note));
}

}  // namespace tickinfer::tfl::ops::fc
