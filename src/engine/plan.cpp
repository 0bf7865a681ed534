// Plan: a handle on its PlanBackend (engine/plan_backend.hpp); every member forwards to it.
#include "engine/cuda_plan.hpp"
#include "engine/model_source.hpp"
#include "engine/plan_backend.hpp"
#include "model/graph.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer {

Plan::Plan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Plan::Plan(Plan&&) noexcept = default;
Plan& Plan::operator=(Plan&&) noexcept = default;
Plan::~Plan() = default;

void Plan::run(const float* const* inputs, float* const* outputs) noexcept { impl_->run(inputs, outputs); }
void Plan::run(const float* input, float* output) noexcept {
  const float* const ins[1] = {input};
  float* const outs[1] = {output};
  impl_->run(ins, outs);
}
void Plan::reset_state() noexcept { impl_->reset_state(); }

void Plan::reserve_rows(int max_rows) {
  if (max_rows < 1) throw Error("reserve_rows: max_rows must be at least 1");
  const std::string why = impl_->reserve_rows(max_rows);
  if (!why.empty()) throw Error("reserve_rows: " + why);
}
bool Plan::try_reserve_rows(int max_rows) { return max_rows >= 1 && impl_->reserve_rows(max_rows).empty(); }
int Plan::reserved_rows() const noexcept { return impl_->reserved_rows(); }
void Plan::run_rows(const float* x, int rows, float* y) noexcept { impl_->run_rows(x, rows, y); }

size_t Plan::num_inputs() const { return impl_->input_shapes().size(); }
size_t Plan::num_outputs() const { return impl_->output_shapes().size(); }
const Shape& Plan::input_shape(size_t i) const { return impl_->input_shapes().at(i); }
const Shape& Plan::output_shape(size_t i) const { return impl_->output_shapes().at(i); }
size_t Plan::input_size(size_t i) const { return static_cast<size_t>(shape_size(input_shape(i))); }
size_t Plan::output_size(size_t i) const { return static_cast<size_t>(shape_size(output_shape(i))); }
RecurrentMode Plan::mode() const { return impl_->mode(); }
const char* Plan::isa() const { return impl_->isa(); }
size_t Plan::arena_bytes() const { return impl_->arena_bytes(); }
int64_t Plan::flops() const { return impl_->flops(); }
int64_t Plan::weight_bytes() const { return impl_->weight_bytes(); }
int64_t Plan::weight_footprint_bytes() const { return impl_->weight_footprint_bytes(); }
std::string Plan::describe() const { return impl_->describe(); }
Plan Plan::clone() const { return Plan(impl_->clone()); }

Plan compile(const Model& model, const CompileOptions& options) {
  const int device = engine::cuda_device_index(options.device);
  if (options.incremental && options.mode != RecurrentMode::Window) {
    throw Error("incremental window updates are a window-mode option (stream mode updates per step already)");
  }
  if (options.incremental && device >= 0) throw Error("--device cuda: incremental window updates run on the CPU plans");
  // The CPU plans' options: on a GPU they would mean nothing, and an option is never ignored.
  if (!options.isa.empty() && device >= 0)
    throw Error("--device cuda: isa '" + options.isa + "' picks a CPU kernel set; a GPU plan has none");
  if (options.sparse == SparseMode::Sparse && device >= 0)
    throw Error("--device cuda: the block-sparse kernels are the CPU plans' (sparse = Sparse)");
  if (std::string e = engine::cuda_options_error(options); !e.empty()) throw Error(e);
  if (device < 0) return Plan(model.source_->compile(options));
  if (model.program()) return Plan(engine::compile_cuda_integer(model.shared_program(), options, device));
  return Plan(engine::compile_cuda(model.graph(), options, device));
}

}  // namespace tickinfer
