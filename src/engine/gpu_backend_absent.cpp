// Compiled instead of the engine's side of the CUDA backend (engine/cuda_*.cpp and
// program_plan_device.cpp) in a build without nvcc (TICKINFER_CUDA=OFF): `--device cuda` is
// checked as in every build (engine/device_options.hpp) and then refused by name here, so such a
// build links no GPU code at all: its binaries are the CPU product alone (docs/gpu.md).
#include "engine/cuda_plan.hpp"
#include "engine/program_plan.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::engine {
namespace {

[[noreturn]] void refuse() {
  throw Error("--device cuda: this build of tickinfer has no CUDA backend (configured without nvcc)");
}

}  // namespace

std::unique_ptr<PlanBackend> compile_cuda(const Graph&, const CompileOptions&, int) { refuse(); }

std::unique_ptr<PlanBackend> compile_cuda_integer(std::shared_ptr<const tfl::Program>, const CompileOptions&, int) {
  refuse();
}

// ProgramPlan's device half: reached only through compile_cuda_integer, which refuses first, so
// a plan here never has a device (run(), run_rows() and reserve_rows() take the host's path).
void ProgramPlan::start_device() { refuse(); }
bool ProgramPlan::run_on_device() noexcept { return false; }
bool ProgramPlan::run_rows_on_device(const float*, int, float*) noexcept { return false; }
std::string ProgramPlan::reserve_device_rows(int) { refuse(); }

}  // namespace tickinfer::engine
