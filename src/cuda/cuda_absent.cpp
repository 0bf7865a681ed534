// The whole CUDA module when the build has no nvcc (TICKINFER_CUDA=OFF): none of the backend, host
// code included, is compiled, and its entry points exist and refuse by name (the engine's side
// refuses first: engine/gpu_backend_absent.cpp).
#include <stdexcept>

#include "cuda/device_runner.hpp"
#include "cuda/devices.hpp"
#include "cuda/integer_runner.hpp"
#include "cuda/kernel_loading.hpp"
#include "cuda/resident_lstm.hpp"

namespace tickinfer::cuda {

bool built_with_cuda() { return false; }
int device_count() { return 0; }
void load_every_kernel() {}
KernelLoading kernel_loading_on_this_device() { return {}; }

struct ResidentLstm::Device {};

std::unique_ptr<ResidentLstm> ResidentLstm::start(const LstmStack&, const ResidentOptions&) {
  throw std::runtime_error(
      "this build of tickinfer has no CUDA backend (configured without nvcc, TICKINFER_CUDA=OFF)");
}
ResidentLstm::~ResidentLstm() = default;
bool ResidentLstm::run(const float*, bool, float*, int64_t) noexcept { return false; }
void ResidentLstm::stop() noexcept {}
std::vector<ResidentTrace> ResidentLstm::stop_and_read_trace() { return {}; }

std::unique_ptr<ProgramRunner> start_graph_runner(std::shared_ptr<const DeviceProgram>, int,
                                                  std::shared_ptr<GraphChoices>) {
  throw std::runtime_error(
      "this build of tickinfer has no CUDA backend (configured without nvcc, TICKINFER_CUDA=OFF)");
}

std::unique_ptr<ProgramRunner> start_resident_program(std::shared_ptr<const DeviceProgram>, int, int) {
  throw std::runtime_error(
      "this build of tickinfer has no CUDA backend (configured without nvcc, TICKINFER_CUDA=OFF)");
}

std::unique_ptr<IntegerRunner> start_integer_graph(std::shared_ptr<const IntegerProgram>, int,
                                                   std::shared_ptr<GraphChoices>) {
  throw std::runtime_error(
      "this build of tickinfer has no CUDA backend (configured without nvcc, TICKINFER_CUDA=OFF)");
}

}  // namespace tickinfer::cuda
