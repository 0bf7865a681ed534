// The graph form on the host: the very step bodies the GPU runs (device_step_dispatch.cuh),
// with an executor that walks the items one at a time. It is slow and not a product path; it
// is how the graph form is held to the frameworks' outputs on machines without a GPU, and,
// walking the items backwards too, how a step whose items race on the GPU is caught.
#include <algorithm>
#include <cstring>

#include "cuda/device_runner.hpp"
#include "cuda/device_step_dispatch.cuh"

namespace tickinfer::cuda {
namespace {

struct SerialExecutor {
  bool backwards = false;
  template <class F>
  void items(int64_t n, F&& f) const {
    if (backwards) {
      for (int64_t i = n - 1; i >= 0; --i) f(i);
    } else {
      for (int64_t i = 0; i < n; ++i) f(i);
    }
  }
  void sync() const {}
};

class HostProgramRunner final : public ProgramRunner {
 public:
  HostProgramRunner(std::shared_ptr<const DeviceProgram> p, bool backwards)
      : p_(std::move(p)), x_{backwards}, arena_(static_cast<size_t>(p_->arena_floats), 0.0f) {}

  bool run(const float* const* inputs, float* const* outputs, bool reset) noexcept override {
    float* A = arena_.data();
    if (reset)
      for (const DeviceRegion& r : p_->state) std::fill(A + r.offset, A + r.offset + r.floats, 0.0f);
    for (size_t i = 0; i < p_->inputs.size(); ++i)
      std::memcpy(A + p_->inputs[i].offset, inputs[i], sizeof(float) * static_cast<size_t>(p_->inputs[i].floats));
    for (const DeviceStep& s : p_->steps) steps::run_step(x_, s, A, p_->weights.data());
    for (size_t o = 0; o < p_->outputs.size(); ++o)
      std::memcpy(outputs[o], A + p_->outputs[o].offset, sizeof(float) * static_cast<size_t>(p_->outputs[o].floats));
    return true;
  }

  std::string describe() const override {
    return std::string("graph form on the host (the GPU's step bodies, items run one by one") +
           (x_.backwards ? ", backwards)" : ")");
  }

 private:
  std::shared_ptr<const DeviceProgram> p_;
  SerialExecutor x_;
  std::vector<float> arena_;
};

}  // namespace

std::unique_ptr<ProgramRunner> host_program_runner(std::shared_ptr<const DeviceProgram> program, bool backwards) {
  return std::make_unique<HostProgramRunner>(std::move(program), backwards);
}

}  // namespace tickinfer::cuda
