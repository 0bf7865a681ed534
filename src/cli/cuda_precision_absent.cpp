// `tickinfer cuda-precision` in a build without the CUDA backend (TICKINFER_CUDA=OFF): the
// per-layer report runs the backend's own step bodies on the host, and such a build links none
// of the backend, so the command says so.
#include "cli/commands.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::cli {

int run_cuda_precision(const ArgParser&) {
  throw Error("cuda-precision: this build of tickinfer has no CUDA backend (configured without nvcc); the report "
              "runs the backend's step bodies on the host, so any build with nvcc gives it, GPU or not");
}

}  // namespace tickinfer::cli
