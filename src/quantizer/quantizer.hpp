#pragma once
// Float Program + a precision per layer + calibrated ranges -> a quantized Program.
//
//   fp32          the layer's ops unchanged.
//   bf16          FULLY_CONNECTED / LSTM weights stored as bfloat16 (round to nearest even);
//                 activations float.
//   int8-dynamic  FC / Conv2D weights int8 per-channel symmetric, LSTM weights int8 per-tensor
//                 symmetric (TFLite's hybrid kernels); activations float, inputs quantized per row
//                 at run time (asymmetric_quantize_inputs, as the converter writes it).
//   int8          full integer: int8 per-channel symmetric weights in [-127, 127], int32 biases
//                 with scale input_scale * weight_scale[c], per-tensor asymmetric int8 activations
//                 from the calibrated ranges (zero nudged to be exact); LOGISTIC / SOFTMAX outputs
//                 1/256 zp -128, TANH 1/128 zp 0; reshapes, slices, padding and pooling keep their
//                 input's parameters; float constant operands of ADD / MUL / ... are quantized
//                 per tensor from their own range.
// QUANTIZE / DEQUANTIZE ops are inserted where a tensor crosses between int8 and float (once per
// tensor, right before its first consumer in the other domain), and at the model's inputs and
// outputs unless integer_io.
#include <vector>

#include "quantizer/calibration.hpp"
#include "quantizer/layers.hpp"
#include "quantizer/tflite_names.hpp"

namespace tickinfer::quantizer {

struct QuantizeOptions {
  // int8 model inputs and outputs (the converter's inference_input_type / output_type = int8)
  // instead of float with QUANTIZE / DEQUANTIZE at the edges.
  bool integer_io = false;
  // GRU layers (SEQUENCE_GRU) in tickinfer's own arithmetic (OpOptions::own_arithmetic: the graph
  // engine's vector gates, the int8 state's sums scaled in one pass) instead of the converter
  // loop's, which a dynamic-range converter file computes bit for bit. quantize_model sets it from
  // QuantizeRequest::gru_arithmetic.
  bool gru_own_arithmetic = false;
};

struct QuantizedProgram {
  Program program;
  // For each tensor of the float program: the tensor of `program` that holds its value, in
  // whichever domain the layer producing it runs (int8 or float); -1 for dropped constants.
  std::vector<int> tensor_map;
};

// `precisions` has one entry per layer (find_layers(float_program)); each must be allowed for its
// layer. `ranges` from calibrate(); int8 layers need their activations observed. Throws
// tickinfer::Error naming the layer otherwise.
QuantizedProgram quantize_program(const Program& float_program, const std::vector<Layer>& layers,
                                  const std::vector<Precision>& precisions,
                                  const std::vector<TensorRange>& ranges, const QuantizeOptions& options = {});

}  // namespace tickinfer::quantizer
