#pragma once
// The unit the quantizer assigns a precision to: a layer = the consecutive ops of a float
// Program that share a label (a Keras layer: FC/Conv/LSTM with its activation and reshapes; for
// a TFLite file, whatever the loader labelled together). Each layer knows which precisions it
// can take and why not the others, and its multiply-accumulate count (its latency weight).
#include <cstdint>
#include <string>
#include <vector>

#include "quantizer/tflite_names.hpp"

namespace tickinfer::quantizer {

struct Layer {
  std::string label;
  std::vector<size_t> ops;      // indices into the float program's ops, in order
  int output = -1;              // the float tensor the layer ends with (its last op's output)
  bool has_weights = false;     // FC, Conv2D or LSTM: the ops int8-dynamic and bf16 change
  // Precisions this layer can take, cheapest first (int8 < int8-dynamic < bf16 < fp32).
  std::vector<Precision> allowed;
  std::string why_not_int8;     // empty when int8 is allowed
  int64_t macs = 0;             // multiply-accumulates (elementwise ops count one per element)
};

// Groups `p` (a float program) into layers. Throws tickinfer::Error when an op is not float.
std::vector<Layer> find_layers(const Program& p);

bool layer_allows(const Layer& layer, Precision precision);
// The cheapest allowed precision not cheaper than `wanted` (fp32 is always allowed).
Precision nearest_allowed(const Layer& layer, Precision wanted);

// Relative per-MAC cost of a precision, used to weigh latency in the auto search: int8 1,
// int8-dynamic 1.25 (input quantization per row), bf16 1.75 (widening), fp32 2.
double precision_cost(Precision p);

}  // namespace tickinfer::quantizer
