#pragma once
// The backend of a Keras model: the compiled PlanLayout and PackedWeights (immutable, shared by
// clones) and the per-plan mutable part, one arena (activations, scratch, recurrent state) plus
// run_rows' buffers. Compiled by engine/graph_plan_compile.cpp; run by graph_plan_run.cpp and
// graph_plan_rows.cpp.
#include <memory>
#include <string>
#include <vector>

#include "engine/aligned_buffer.hpp"
#include "engine/plan_backend.hpp"
#include "engine/plan_layout.hpp"
#include "model/graph.hpp"

namespace tickinfer::engine {

class GraphPlan final : public PlanBackend {
 public:
  GraphPlan(std::shared_ptr<const PlanLayout> layout, std::shared_ptr<const PackedWeights> weights);

  void run(const float* const* inputs, float* const* outputs) noexcept override;
  void run_rows(const float* x, int rows, float* y) noexcept override;
  void reset_state() noexcept override;

  std::string reserve_rows(int max_rows) override;
  int reserved_rows() const noexcept override { return max_rows_; }
  std::unique_ptr<PlanBackend> clone() const override;

  const std::vector<Shape>& input_shapes() const override { return layout_->input_shapes; }
  const std::vector<Shape>& output_shapes() const override { return layout_->output_shapes; }
  RecurrentMode mode() const override { return layout_->mode; }
  const char* isa() const override { return layout_->kernels->name; }
  size_t arena_bytes() const override { return layout_->arena_floats * sizeof(float); }
  int64_t flops() const override { return layout_->flops; }
  int64_t weight_bytes() const override { return layout_->weight_bytes; }
  int64_t weight_footprint_bytes() const override;
  std::string describe() const override;
  std::vector<Plan::StepProfile> profile_steps() const override;
  void run_profiled(const float* const* inputs, float* const* outputs, uint64_t* ticks) noexcept override;

  // Incremental plans: runs that found the window slid by one row and updated incrementally.
  uint64_t slides() const noexcept { return slides_; }

 private:
  // Whether every sequence input is the previous run's moved by one row; records this run's.
  bool slid(const float* const* inputs) noexcept;
  // Moves every kept tensor's slot down one row (copying back to the top when its room runs out).
  void slide_kept() noexcept;
  // Why the plan cannot run rows ("" when it can), and the widest step output it needs room for.
  std::string why_not_row_wise(size_t& width) const;
  // run_rows for rows <= max_rows_ (> 0): the step chain through the two ping-pong buffers.
  // Widths: floats per input and per output row.
  void run_reserved_rows(const float* x, int rows, float* y, size_t in_width, size_t out_width) noexcept;

  std::shared_ptr<const PlanLayout> layout_;
  std::shared_ptr<const PackedWeights> weights_;
  AlignedBuffer arena_;
  std::vector<float*> bufs_;  // [arena, input 0, input 1, ..., kept tensors]; sized at construction
  std::vector<uint32_t> kept_start_;  // incremental: the row each kept tensor's slot starts at
  // run_rows: two ping-pong buffers of max_rows_ x the widest step output (reserve_rows).
  AlignedBuffer rows_buf_[2];
  int max_rows_ = 0;
  bool primed_ = false;  // incremental: the arena holds the previous window's rows
  uint64_t slides_ = 0;
};

// Compiles a validated Keras graph for `options` (engine/graph_plan_compile.cpp). Throws
// tickinfer::Error (an unknown sequence length without a window length, stream mode on a model
// that is not streamable, an ISA the CPU lacks).
std::unique_ptr<GraphPlan> compile_graph(const Graph& graph, const CompileOptions& options);

}  // namespace tickinfer::engine
