// The graph form on the host: the very step bodies the GPU runs (device_step_dispatch.cuh),
// with an executor that walks the items one at a time. It is slow and not a product path; it
// is how the graph form is held to the frameworks' outputs on machines without a GPU, and,
// walking the items backwards too, how a step whose items race on the GPU is caught.
#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>

#include "cuda/device_runner.hpp"
#include "cuda/device_dense_tiles.cuh"
#include "cuda/device_step_dispatch.cuh"
#include "cuda/serial_executor.hpp"

namespace tickinfer::cuda {
namespace {

class HostProgramRunner final : public ProgramRunner {
 public:
  HostProgramRunner(std::shared_ptr<const DeviceProgram> p, bool backwards, bool tiled_dense = false)
      : p_(std::move(p)),
        x_{backwards},
        arena_(static_cast<size_t>(p_->arena_floats), 0.0f),
        tiled_dense_(tiled_dense),
        tile_(std::make_unique<steps::DenseTileShared>()) {}

  bool run(const float* const* inputs, float* const* outputs, bool reset) noexcept override {
    float* A = arena_.data();
    if (reset)
      for (const DeviceRegion& r : p_->state) std::fill(A + r.offset, A + r.offset + r.floats, 0.0f);
    for (size_t i = 0; i < p_->inputs.size(); ++i)
      std::memcpy(A + p_->inputs[i].offset, inputs[i], sizeof(float) * static_cast<size_t>(p_->inputs[i].floats));
    for (size_t k = 0; k < p_->steps.size(); ++k) {
      if (!(tiled_dense_ && run_dense_tiles(p_->steps[k], A, 0, 1))) run_one(p_->steps[k], A);
      if (after_step_) after_step_(k, A);
    }
    for (size_t o = 0; o < p_->outputs.size(); ++o)
      std::memcpy(outputs[o], A + p_->outputs[o].offset, sizeof(float) * static_cast<size_t>(p_->outputs[o].floats));
    return true;
  }

  std::string reserve_rows(int max_rows) override {
    if (std::string why = why_not_batched(*p_); !why.empty()) return why;
    stride_ = row_stride_floats(*p_);
    batch_.assign(static_cast<size_t>(stride_ * max_rows), 0.0f);
    max_rows_ = max_rows;
    return {};
  }

  // As the GPU runs a batch: each step over every row (the grid's second dimension) before the
  // next step, each row in its own stretch of the batch arena.
  bool run_rows(const float* x, int rows, float* y) noexcept override {
    if (rows < 1 || rows > max_rows_) return false;
    const DeviceRegion in = p_->inputs[0], out = p_->outputs[0];
    run_rows_serially(x_, batch_.data(), stride_, x, in.offset, in.floats, y, out.offset, out.floats, rows, p_->steps,
                      [&](const DeviceStep& s, float* row) { run_one(s, row); },
                      [&](const DeviceStep& s) { return tiled_dense_ && run_dense_tiles(s, batch_.data(), stride_, rows); });
    return true;
  }

  std::string describe() const override {
    return std::string("graph form on the host (the GPU's step bodies, items run one by one") +
           (x_.backwards ? ", backwards" : "") + (tiled_dense_ ? "; batched Dense as tiles)" : ")");
  }

 private:
  // A Dense step over `rows` row arenas (`stride` floats apart from `base`; one for run()) as the
  // GPU's tile kernel runs it (device_dense_tiles.cuh): tile after tile, forwards or backwards.
  bool run_dense_tiles(const DeviceStep& s, float* base, int64_t stride, int rows) {
    if (s.kind != DevKind::Dense) return false;
    const bool mixed = step_has_16bit_tensors(s);
    x_.tiles(steps::dense_row_tiles(s, rows), steps::dense_column_tiles(s), [&](int64_t row_tile, int column_tile) {
      if (mixed) steps::dense_tile<true>(x_, s, base, stride, rows, p_->weights.data(), row_tile, column_tile, *tile_);
      else steps::dense_tile<false>(x_, s, base, stride, rows, p_->weights.data(), row_tile, column_tile, *tile_);
    });
    return true;
  }

  // As the graph form picks its kernel: the Mixed body only for a step with a 16-bit tensor.
  void run_one(const DeviceStep& s, float* A) const {
    if (step_has_16bit_tensors(s)) steps::run_step<true>(x_, s, A, p_->weights.data());
    else steps::run_step<false>(x_, s, A, p_->weights.data());
  }

  std::shared_ptr<const DeviceProgram> p_;
  SerialExecutor x_;

 public:
  std::function<void(size_t, float*)> after_step_;  // run_rows_on_host's hook

 private:
  std::vector<float> arena_;
  std::vector<float> batch_;  // max_rows_ row arenas, stride_ floats apart
  int64_t stride_ = 0;
  int max_rows_ = 0;
  bool tiled_dense_ = false;
  std::unique_ptr<steps::DenseTileShared> tile_;  // the tile kernel's shared memory
};

}  // namespace

std::unique_ptr<ProgramRunner> host_program_runner(std::shared_ptr<const DeviceProgram> program, bool backwards,
                                                   bool tiled_dense) {
  return std::make_unique<HostProgramRunner>(std::move(program), backwards, tiled_dense);
}

std::vector<float> run_rows_on_host(const DeviceProgram& program, const std::vector<const float*>& inputs, int rows,
                                    std::function<void(size_t, float*)> after_step, bool one_sequence) {
  HostProgramRunner runner(std::make_shared<const DeviceProgram>(program), false);
  runner.after_step_ = std::move(after_step);
  size_t per_row = 0;
  for (const DeviceRegion& r : program.outputs) per_row += size_t(r.floats);
  std::vector<float> all(per_row * size_t(std::max(rows, 0)));
  std::vector<const float*> in(inputs.size());
  std::vector<float*> out(program.outputs.size());
  for (int r = 0; r < rows; ++r) {
    for (size_t i = 0; i < in.size(); ++i) in[i] = inputs[i] + size_t(r) * size_t(program.inputs[i].floats);
    float* at = all.data() + size_t(r) * per_row;
    for (size_t o = 0; o < out.size(); ++o) out[o] = at, at += program.outputs[o].floats;
    runner.run(in.data(), out.data(), !one_sequence || r == 0);
  }
  return all;
}

}  // namespace tickinfer::cuda
