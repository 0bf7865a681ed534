#pragma once
// The CUDA graph form's program from the device-neutral lowering: every lowered op one
// DeviceStep, every tensor, kept state and scratch its own region of one arena (device memory is
// not scarce at these sizes, so nothing is reused), every weight matrix appended to one buffer,
// each matrix and each tensor stored as CompileOptions::cuda_precision says.
#include <string>

#include "cuda/device_program.hpp"
#include "engine/device_options.hpp"
#include "engine/lowering/lowered_graph.hpp"

namespace tickinfer::engine {

// Throws tickinfer::Error naming the layer when an op has more inputs or axes than a DeviceStep
// holds, or when `formats` names a layer the graph does not have.
cuda::DeviceProgram device_program_from(const LoweredGraph& g, const std::string& model_name,
                                        const StorageFormats& formats = {});

// Multiply-adds per run of the program's steps (the CPU plan's costs: Plan::flops() is twice).
int64_t device_program_macs(const cuda::DeviceProgram& p);

}  // namespace tickinfer::engine
