#pragma once
// The options that pick and shape a GPU plan (CompileOptions::device, cuda_form, cuda_precision),
// parsed and checked in every build: a typo is caught on the machine it was made on, and a build
// without the CUDA backend (no nvcc) refuses `--device cuda` after the same checks, by name. Kept
// apart from the backend so that such a build links none of it (docs/gpu.md).
#include <cstdint>
#include <map>
#include <string>

#include "cuda/half_bits.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer::engine {

// "" and "cpu" -> -1 (the CPU plans); "cuda" -> 0; "cuda:N" -> N. Throws tickinfer::Error for
// anything else.
int cuda_device_index(const std::string& device);

// "" when CompileOptions::cuda_form and cuda_precision are well formed, else what is wrong (checked
// for every device, so a typo is caught on the machine it was made on).
std::string cuda_options_error(const CompileOptions& options);

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

}  // namespace tickinfer::engine
