// Whether this build has the CUDA backend and how many devices it sees. Plain C++: the engine,
// front ends and tests ask without including anything of CUDA.
#pragma once

namespace tickinfer::cuda {

// False in a build configured without nvcc (TICKINFER_CUDA=OFF).
bool built_with_cuda();
// Devices the runtime sees: 0 without a driver, without a GPU, or in a build without CUDA (the
// runtime's "no device" and "driver too old" answers both count as none; nothing aborts).
int device_count();

}  // namespace tickinfer::cuda
