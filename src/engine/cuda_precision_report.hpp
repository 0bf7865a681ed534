#pragma once
// What fp16 and bf16 storage costs in accuracy on the CUDA graph and program forms, layer by
// layer, for the weight matrices and for the tensors holding each layer's outputs, measured on
// the host executor (the GPU's own step bodies, so any machine can answer before a GPU is
// involved), and the per-layer mix that stays within a bound: the CompileOptions::cuda_precision
// spec `tickinfer cuda-precision` prints.
#include <cstdint>
#include <string>
#include <vector>

#include "model/graph.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer::engine {

struct CudaPrecisionLayer {
  std::string layer;
  int64_t matrix_values = 0;  // weights in its matrices (kernel, recurrent, depthwise taps)
  int64_t output_values = 0;  // floats per row of the tensors holding its outputs that may be 16-bit
  // max |output - the fp32 program's output| over every output value of every row, with only
  // this layer's matrices (its output tensors) in fp16 (bf16); infinity when a value overflows
  // fp16. Zero where the layer has no matrices (no such tensors).
  double fp16_error = 0, bf16_error = 0;
  double out_fp16_error = 0, out_bf16_error = 0;
  std::string chosen = "fp32";  // as the spec writes it: W or W/A
};

struct CudaPrecisionReport {
  std::vector<CudaPrecisionLayer> layers;  // every layer with matrices or such tensors, in run order
  double output_scale = 0;                 // max |fp32 output|, to read the errors against
  double chosen_error = 0;                 // the chosen mix, all layers together
  int64_t matrix_bytes_fp32 = 0, matrix_bytes_chosen = 0;
  int64_t output_bytes_fp32 = 0, output_bytes_chosen = 0;  // per row
  int rows = 0;
  std::string spec;  // CompileOptions::cuda_precision for the chosen mix
};

// inputs[i]: `rows` rows of the plan's input i (window mode: a window each; stream mode: the ticks
// of one sequence, the state carried from tick to tick). The candidates (a layer's matrices, a layer's output tensors) are taken largest first, each in its
// more accurate 16-bit format, kept when the whole mix stays within max_error. Throws
// tickinfer::Error (a graph the graph form cannot run).
CudaPrecisionReport cuda_precision_report(const Graph& graph, const CompileOptions& options,
                                          const std::vector<const float*>& inputs, int rows, double max_error);

}  // namespace tickinfer::engine
