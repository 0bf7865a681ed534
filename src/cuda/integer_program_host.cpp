// The integer program on the host: the very step bodies the GPU runs (integer_steps.cuh), items
// one at a time. Not a product path: how the integer program is held to TFLite's bits where no
// GPU is, and, walking the items backwards too, how a step whose items race is caught.
#include <cstring>
#include <memory>

#include "cuda/integer_fc_tiles.cuh"
#include "cuda/integer_runner.hpp"
#include "cuda/integer_steps.cuh"
#include "cuda/serial_executor.hpp"

namespace tickinfer::cuda {
namespace {

class HostIntegerRunner final : public IntegerRunner {
 public:
  HostIntegerRunner(std::shared_ptr<const IntegerProgram> p, bool backwards, bool tiled_fc)
      : p_(std::move(p)),
        x_{backwards},
        arena_(size_t(p_->arena_bytes), 0),
        tiled_fc_(tiled_fc),
        tile_(std::make_unique<intsteps::FcTileShared>()) {
    if (!p_->arena_image.empty()) std::memcpy(arena_.data(), p_->arena_image.data(), p_->arena_image.size());
  }

  bool run(const int8_t* const* inputs, int8_t* const* outputs) noexcept override {
    int8_t* A = arena_.data();
    for (size_t i = 0; i < p_->inputs.size(); ++i)
      std::memcpy(A + p_->inputs[i].offset, inputs[i], size_t(p_->inputs[i].bytes));
    for (const IntegerStep& s : p_->steps) intsteps::run_step(x_, s, A, p_->params.data());
    for (size_t o = 0; o < p_->outputs.size(); ++o)
      std::memcpy(outputs[o], A + p_->outputs[o].offset, size_t(p_->outputs[o].bytes));
    return true;
  }

  std::string reserve_rows(int max_rows) override {
    if (std::string why = integer_why_not_batched(*p_); !why.empty()) return why;
    stride_ = integer_row_stride(*p_);
    batch_.assign(size_t(stride_ * max_rows), 0);
    for (int b = 0; b < max_rows; ++b)
      if (!p_->arena_image.empty()) std::memcpy(batch_.data() + b * stride_, p_->arena_image.data(), p_->arena_image.size());
    max_rows_ = max_rows;
    return {};
  }

  // As the GPU runs a batch: each step over every row before the next step, each row in its own
  // stretch of the batch arena (rows forwards or backwards with the items).
  bool run_rows(const int8_t* x, int rows, int8_t* y) noexcept override {
    if (rows < 1 || rows > max_rows_) return false;
    const ByteRegion in = p_->inputs[0], out = p_->outputs[0];
    run_rows_serially(x_, batch_.data(), stride_, x, in.offset, in.bytes, y, out.offset, out.bytes, rows, p_->steps,
                      [&](const IntegerStep& s, int8_t* row) { intsteps::run_step(x_, s, row, p_->params.data()); },
                      [&](const IntegerStep& s) { return tiled_fc_ && run_fc_tiles(s, rows); });
    return true;
  }

  std::string describe() const override {
    return std::string("integer program on the host (the GPU's step bodies, items run one by one") +
           (x_.backwards ? ", backwards" : "") + (tiled_fc_ ? "; batched FULLY_CONNECTED as tiles)" : ")");
  }

 private:
  // A FULLY_CONNECTED step over every row of the batch as the GPU's tile kernel runs it: tile
  // after tile, forwards or backwards.
  bool run_fc_tiles(const IntegerStep& s, int rows) {
    if (s.kind != IntKind::FullyConnected) return false;
    x_.tiles(intsteps::fc_row_tiles(s, rows), intsteps::fc_unit_tiles(s), [&](int64_t row_tile, int unit_tile) {
      intsteps::fully_connected_tile(x_, s, batch_.data(), stride_, rows, p_->params.data(), row_tile, unit_tile, *tile_);
    });
    return true;
  }

  std::shared_ptr<const IntegerProgram> p_;
  SerialExecutor x_;
  std::vector<int8_t> arena_;
  std::vector<int8_t> batch_;  // max_rows_ row arenas, stride_ bytes apart
  int64_t stride_ = 0;
  bool tiled_fc_ = false;
  std::unique_ptr<intsteps::FcTileShared> tile_;  // the tile kernel's shared memory
  int max_rows_ = 0;
};

}  // namespace

std::unique_ptr<IntegerRunner> host_integer_runner(std::shared_ptr<const IntegerProgram> program, bool backwards,
                                                   bool tiled_fc) {
  return std::make_unique<HostIntegerRunner>(std::move(program), backwards, tiled_fc);
}

}  // namespace tickinfer::cuda
