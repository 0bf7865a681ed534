#pragma once
// Keras Graph (model/graph.hpp) -> float32 Program, with the ops the TFLite converter would emit
// for the same layers, so the quantizer can treat a Keras model and a float .tflite alike:
//
//   Dense            FULLY_CONNECTED, filter [units, in] = the Keras kernel transposed
//                    (keep_num_dims for sequence inputs); relu / relu6 fused, every other
//                    activation a separate op (LOGISTIC, TANH, SOFTMAX, LEAKY_RELU, ELU, GELU, EXP)
//   Activation       the same op alone (RELU / RELU6 for relu layers)
//   LSTM             UNIDIRECTIONAL_SEQUENCE_LSTM (per-gate weights, Keras gate order i, f, c, o,
//                    zero variable state tensors), then for return_sequences=false the last step
//                    (RESHAPE when T = 1, else STRIDED_SLICE with shrink_axis_mask)
//   Conv1D           RESHAPE to NHWC [1, 1, T, C] + (PAD for causal) + CONV_2D (filter
//                    [oc, 1, k, ic]) + RESHAPE back
//   Max/AvgPool1D    RESHAPE + MAX_POOL_2D / AVERAGE_POOL_2D + RESHAPE
//   GlobalAvgPool1D  MEAN over the steps axis; GlobalMaxPool1D: MAX_POOL_2D over all steps
//   Flatten/Reshape  RESHAPE; Add / Subtract / Multiply: ADD / SUB / MUL; Concatenate: CONCATENATION
//   BatchNorm        MUL + ADD with the folded scale and offset
//   LayerNorm        MEAN, SUB, SQUARED_DIFFERENCE, MEAN, ADD eps, RSQRT, MUL, MUL gamma, ADD beta
//   Dropout & co.    nothing (the tensor passes through)
// Every op's label is the Keras layer name; a layer's ops are consecutive. Tensor shapes carry
// batch 1 in front. GRU (the converter emits a WHILE loop) and activations with no TFLite op
// (selu, softplus, softsign, hard_sigmoid, swish) throw tickinfer::Error naming layer and class.
#include "model/graph.hpp"
#include "quantizer/tflite_names.hpp"

namespace tickinfer::quantizer {

struct LowerOptions {
  // Steps to use for an input with an unknown (-1) sequence length; 0 = such inputs are an error.
  int window_length = 0;
  // Lower the model to run one time step per call, its recurrent layers' state carried from call
  // to call (stream mode, docs/streaming.md): every sequence input [T, F] becomes [1, F], whatever
  // T the model was saved with. A model that looks across time other than through its recurrent
  // state is refused by name (check_streamable).
  bool one_step_per_call = false;
};

Program lower_graph(const Graph& graph, const LowerOptions& options = {});

}  // namespace tickinfer::quantizer
