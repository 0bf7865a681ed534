#pragma once
// The CUDA graph form's program from the device-neutral lowering: every lowered op one
// DeviceStep, every tensor, kept state and scratch its own region of one arena (device memory is
// not scarce at these sizes, so nothing is reused), every weight matrix appended to one buffer,
// each matrix and each tensor stored as CompileOptions::cuda_precision says.
#include <map>
#include <string>

#include "cuda/device_program.hpp"
#include "cuda/half_bits.hpp"
#include "engine/lowering/lowered_graph.hpp"

namespace tickinfer::engine {

// How one layer is stored on the device (cuda/half_bits.hpp: fp32, or fp16/bf16 read into fp32
// arithmetic): its matrices, and the tensors holding its outputs (cuda/tensor_view.hpp). A tensor
// is 16-bit when the layer that last writes it asks for it (an activation folded into its
// product, or written over its input, decides for the tensor it leaves) and it is neither a
// model input nor an output nor an attention output (attention accumulates in its output).
struct LayerStorage {
  int32_t weights = cuda::kWeightsFp32, activations = cuda::kWeightsFp32;
  bool operator==(const LayerStorage&) const = default;
};

// `all`, except the layers by_layer names (a recurrent layer's input projection follows its layer).
struct StorageFormats {
  LayerStorage all;
  std::map<std::string, LayerStorage> by_layer;
  LayerStorage of(const std::string& layer) const;
};

// CompileOptions::cuda_precision: "" or FORMAT (every layer), then optional ",LAYER=FORMAT"
// overrides; FORMAT is W (the matrices; outputs fp32) or W/A (matrices / outputs), each fp32,
// fp16 or bf16: "fp16,lstm=fp32", "bf16/bf16,dense_1=fp32/fp32". Throws tickinfer::Error naming
// what is wrong.
StorageFormats parse_cuda_precision(const std::string& spec);
// The spec parse_cuda_precision reads back, and one layer's FORMAT in it (W, or W/A).
std::string cuda_precision_spec(const StorageFormats& f);
std::string layer_storage_spec(const LayerStorage& l);
const char* storage_format_name(int32_t format);

// Throws tickinfer::Error naming the layer when an op has more inputs or axes than a DeviceStep
// holds, or when `formats` names a layer the graph does not have.
cuda::DeviceProgram device_program_from(const LoweredGraph& g, const std::string& model_name,
                                        const StorageFormats& formats = {});

// Multiply-adds per run of the program's steps (the CPU plan's costs: Plan::flops() is twice).
int64_t device_program_macs(const cuda::DeviceProgram& p);

}  // namespace tickinfer::engine
