// The integer program on the host: the very step bodies the GPU runs (integer_steps.cuh), items
// one at a time. Not a product path: how the integer program is held to TFLite's bits where no
// GPU is, and, walking the items backwards too, how a step whose items race is caught.
#include <cstring>

#include "cuda/integer_runner.hpp"
#include "cuda/integer_steps.cuh"
#include "cuda/serial_executor.hpp"

namespace tickinfer::cuda {
namespace {

class HostIntegerRunner final : public IntegerRunner {
 public:
  HostIntegerRunner(std::shared_ptr<const IntegerProgram> p, bool backwards)
      : p_(std::move(p)), x_{backwards}, arena_(size_t(p_->arena_bytes), 0) {
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

  std::string describe() const override {
    return std::string("integer program on the host (the GPU's step bodies, items run one by one") +
           (x_.backwards ? ", backwards)" : ")");
  }

 private:
  std::shared_ptr<const IntegerProgram> p_;
  SerialExecutor x_;
  std::vector<int8_t> arena_;
};

}  // namespace

std::unique_ptr<IntegerRunner> host_integer_runner(std::shared_ptr<const IntegerProgram> program, bool backwards) {
  return std::make_unique<HostIntegerRunner>(std::move(program), backwards);
}

}  // namespace tickinfer::cuda
