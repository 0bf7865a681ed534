#pragma once
// The CUDA graph form's program from the device-neutral lowering: every lowered op one
// DeviceStep, every tensor, kept state and scratch its own region of one arena (device memory is
// not scarce at these sizes, so nothing is reused), every weight matrix appended to one buffer.
#include <map>
#include <string>

#include "cuda/device_program.hpp"
#include "cuda/half_bits.hpp"
#include "engine/lowering/lowered_graph.hpp"

namespace tickinfer::engine {

// How each layer's matrices are stored on the device (cuda/half_bits.hpp: fp32, or fp16/bf16 read
// into fp32 arithmetic): `all`, except the layers by_layer names (a recurrent layer's input
// projection follows its layer).
struct WeightFormats {
  int32_t all = cuda::kWeightsFp32;
  std::map<std::string, int32_t> by_layer;
  int32_t of(const std::string& layer) const;
};

// CompileOptions::cuda_precision: "" or "fp32", "fp16", "bf16" (every layer), then optional
// ",LAYER=FORMAT" overrides ("fp16,lstm=fp32"). Throws tickinfer::Error naming what is wrong.
WeightFormats parse_weight_formats(const std::string& spec);
// The spec parse_weight_formats reads back.
std::string weight_formats_spec(const WeightFormats& f);
const char* weight_format_name(int32_t format);

// Throws tickinfer::Error naming the layer when an op has more inputs or axes than a DeviceStep
// holds, or when `formats` names a layer the graph does not have.
cuda::DeviceProgram device_program_from(const LoweredGraph& g, const std::string& model_name,
                                        const WeightFormats& formats = {});

// Multiply-adds per run of the program's steps (the CPU plan's costs: Plan::flops() is twice).
int64_t device_program_macs(const cuda::DeviceProgram& p);

}  // namespace tickinfer::engine
