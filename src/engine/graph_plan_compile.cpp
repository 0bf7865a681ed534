// compile_graph(): Graph -> LoweredGraph (engine/lowering/, device-neutral) -> the CPU plan: each
// lowered op becomes one Step with its weights packed for the ISA's kernels (and a block-sparse
// form where a measurement says it pays), its scratch and recurrent state sized, and every
// tensor an arena offset planned by lifetimes, so dead tensors' memory is reused.
#include <algorithm>
#include <utility>

#include "engine/graph_plan.hpp"
#include "engine/incremental_steps.hpp"
#include "engine/lowering/lowered_graph.hpp"
#include "engine/sparse_choice.hpp"
#include "engine/steps/step_ops.hpp"
#include "model/arena_plan.hpp"

namespace tickinfer::engine {
namespace {

// W (K x N) row-major -> the shared packed gemv layout.
const float* pack(PackedWeights& pw, const Matrix& w) {
  AlignedBuffer b(kernels::packed_floats(w.rows, w.cols));
  kernels::pack_weights(w.data.data(), w.rows, w.cols, b.data());
  return pw.add(std::move(b));
}

const float* copy_vec(PackedWeights& pw, const std::vector<float>& v) {
  if (v.empty()) return nullptr;
  AlignedBuffer b(v.size());
  std::copy(v.begin(), v.end(), b.data());
  return pw.add(std::move(b));
}

// FLOPs (2 per multiply-accumulate) and weight bytes of one run of the emitted steps, each
// step's by its family (engine/steps/): weights a layer reuses across rows (Dense over a
// sequence, Conv1D positions) count once; recurrent weights once per time step, since each step
// depends on the last.
void count_cost(PlanLayout& layout) {
  for (const Step& s : layout.steps) {
    const StepCost c = s.ops->cost(s);
    layout.flops += 2 * c.macs;
    layout.weight_bytes += c.weights * static_cast<int64_t>(sizeof(float));
  }
}

class CpuPass {
 public:
  CpuPass(const LoweredGraph& g, const CompileOptions& opt, const kernels::KernelSet& ks, PackedWeights& pw)
      : g_(g), opt_(opt), pw_(pw) {
    L_.mode = g.mode;
    L_.kernels = &ks;
    L_.input_shapes = g.input_shapes;
    L_.output_shapes = g.output_shapes;
    if (opt.incremental) {
      ups_ = plan_row_updates(g);
      time_rows_ = tensor_time_rows(g, ups_);
      L_.incremental = true;
    }
  }

  PlanLayout run() {
    place_tensors();
    for (size_t i = 0; i < g_.ops.size(); ++i) L_.steps.push_back(emit(g_.ops[i], i));
    for (int t : g_.outputs) L_.outputs.push_back(ref(t));
    if (L_.incremental) {
      for (size_t i = 0; i < g_.ops.size(); ++i) {
        L_.increments.push_back(make_increment(L_.steps[i], g_.ops[i], ups_[i], g_, time_rows_));
      }
    }
    count_cost(L_);
    return std::move(L_);
  }

 private:
  // The arena: recurrent state first, each op's its own (stream mode keeps it between runs);
  // then the tensors and every step's scratch, sharing bytes where their lifetimes do not meet.
  void place_tensors() {
    state_.assign(g_.ops.size(), 0);
    scratch_.assign(g_.ops.size(), 0);
    size_t states = 0;
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      const int64_t floats = step_ops(g_.ops[i].kind).state_floats(g_.ops[i]);
      if (floats == 0) continue;
      state_[i] = static_cast<uint32_t>(states);
      L_.state_ranges.emplace_back(state_[i], static_cast<uint32_t>(floats));
      states += arena_align_up(static_cast<size_t>(floats) * sizeof(float)) / sizeof(float);
    }
    std::vector<ArenaLifetime> lives;
    const int end = static_cast<int>(g_.ops.size());
    std::vector<bool> kept(g_.tensors.size(), false);  // incremental: rows reused by the next run
    for (size_t i = 0; i < ups_.size(); ++i) {
      if (ups_[i].on) kept[static_cast<size_t>(g_.ops[i].out)] = true;
    }
    kept_slot_.assign(g_.tensors.size(), -1);
    for (size_t t = 0; t < g_.tensors.size(); ++t) {
      const LoweredTensor& tensor = g_.tensors[t];
      if (tensor.input >= 0) continue;  // the caller's buffer
      size_t bytes = static_cast<size_t>(tensor.floats) * sizeof(float);
      if (kept[t]) {
        kept_slot_[t] = static_cast<int>(L_.kept.size());
        const uint32_t rows = static_cast<uint32_t>(time_rows_[t]);
        L_.kept.push_back({0, static_cast<uint32_t>(tensor.floats / rows), rows, 2 * rows});
        bytes *= 2;
      }
      lives.push_back({static_cast<int>(t), kept[t] ? 0 : tensor.first, kept[t] ? end : tensor.last, bytes, 0});
    }
    const int scratch_ids = static_cast<int>(g_.tensors.size());
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      const int64_t floats = step_ops(g_.ops[i].kind).scratch_floats(g_.ops[i]);
      const int at = static_cast<int>(i);
      if (floats > 0) lives.push_back({scratch_ids + at, at, at, static_cast<size_t>(floats) * sizeof(float), 0});
    }
    // Incremental: each sequence input's previous window, to recognise a slide.
    const int history_ids = scratch_ids + end;
    if (L_.incremental) {
      for (size_t t = 0; t < g_.tensors.size(); ++t) {
        const LoweredTensor& x = g_.tensors[t];
        if (x.input < 0) continue;
        if (time_rows_[t] == 0) continue;  // not a sequence: what reads it runs whole
        L_.histories.push_back({static_cast<uint32_t>(x.input), 0, static_cast<uint32_t>(x.floats / time_rows_[t]),
                                static_cast<uint32_t>(time_rows_[t])});
        lives.push_back({history_ids + static_cast<int>(L_.histories.size()) - 1, 0, end,
                         static_cast<size_t>(x.floats) * sizeof(float), 0});
      }
    }
    const size_t bytes = plan_arena(lives, /*reuse=*/true);
    offset_.assign(g_.tensors.size(), 0);
    for (const ArenaLifetime& l : lives) {
      const uint32_t at = static_cast<uint32_t>(states + l.offset / sizeof(float));
      if (l.id >= history_ids) {
        L_.histories[static_cast<size_t>(l.id - history_ids)].prev = at;
      } else if (l.id >= scratch_ids) {
        scratch_[static_cast<size_t>(l.id - scratch_ids)] = at;
      } else {
        offset_[static_cast<size_t>(l.id)] = at;
        if (kept_slot_[static_cast<size_t>(l.id)] >= 0) L_.kept[static_cast<size_t>(kept_slot_[static_cast<size_t>(l.id)])].offset = at;
      }
    }
    L_.arena_floats = states + bytes / sizeof(float);
  }

  TensorRef ref(int t) const {
    const LoweredTensor& tensor = g_.tensors[t];
    if (tensor.input >= 0) return TensorRef{static_cast<uint32_t>(1 + tensor.input), 0};
    if (!kept_slot_.empty() && kept_slot_[t] >= 0) {
      return TensorRef{static_cast<uint32_t>(1 + g_.input_shapes.size() + kept_slot_[t]), 0};
    }
    return TensorRef{0, offset_[t]};
  }

  // The block-sparse form of a matrix when the options and a measurement say it pays (sparse_choice.hpp).
  const SparseWeights* sparse_form(const Matrix& w, const float* packed, const std::string& what, std::string& note) {
    return choose_sparse_form(pw_, *L_.kernels, opt_.sparse, w.data.data(), packed, w.rows, w.cols, what.c_str(), note);
  }

  Step emit(const LoweredOp& op, size_t i) {
    Step s;
    static_cast<OpParams&>(s) = op;
    if (op.in >= 0) s.in = ref(op.in);
    s.out = ref(op.out);
    if (op.rhs >= 0) s.rhs = ref(op.rhs);
    for (int t : op.extra_inputs) s.extra_inputs.push_back(ref(t));
    s.state = state_[i];
    s.scratch = scratch_[i];
    s.bias = copy_vec(pw_, op.bias);
    s.recurrent_bias = copy_vec(pw_, op.recurrent_bias);
    s.scale = copy_vec(pw_, op.scale);
    s.shift = copy_vec(pw_, op.shift);
    s.depthwise = copy_vec(pw_, op.depthwise);
    if (!op.kernel.empty()) s.kernel = pack(pw_, op.kernel);
    if (!op.recurrent_kernel.empty()) s.recurrent_kernel = pack(pw_, op.recurrent_kernel);
    if (!op.recurrent_kernel_h.empty()) s.recurrent_kernel_h = pack(pw_, op.recurrent_kernel_h);
    s.ops = &step_ops(op.kind);
    if (s.ops->sparse_kernel && !op.kernel.empty()) s.sparse_kernel = sparse_form(op.kernel, s.kernel, op.kernel_name, s.sparse_note);
    if (s.ops->sparse_recurrent) {
      s.sparse_recurrent = sparse_form(op.recurrent_kernel, s.recurrent_kernel, "recurrent_kernel", s.sparse_note);
    }
    return s;
  }

  const LoweredGraph& g_;
  const CompileOptions& opt_;
  PackedWeights& pw_;
  PlanLayout L_;
  std::vector<uint32_t> offset_;   // tensor -> arena offset (floats)
  std::vector<uint32_t> state_, scratch_;  // op -> arena offsets
  std::vector<RowUpdate> ups_;   // incremental: per op
  std::vector<int> time_rows_;   // incremental: per tensor
  std::vector<int> kept_slot_;   // incremental: tensor -> KeptTensor index, or -1
};

}  // namespace

std::unique_ptr<GraphPlan> compile_graph(const Graph& graph, const CompileOptions& options) {
  const LoweredGraph lowered = lower_for_plan(graph, options);
  const kernels::KernelSet& ks = kernels::kernel_set(kernels::resolve_isa(options.isa));
  auto weights = std::make_shared<PackedWeights>();
  PlanLayout layout = CpuPass(lowered, options, ks, *weights).run();
  return std::make_unique<GraphPlan>(std::make_shared<const PlanLayout>(std::move(layout)), std::move(weights));
}

}  // namespace tickinfer::engine
