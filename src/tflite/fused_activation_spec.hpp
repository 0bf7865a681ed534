#pragma once
// A TFLite fused activation as the graph engine's activation (its kernel sets' vector forms): the
// float clamps as a Keras ReLU (relu6: max_value 6), TANH as tanh. Shared by the TFLite lift
// (formats/tflite/tflite_graph_lift.cpp) and SEQUENCE_GRU's own arithmetic
// (tflite/ops/sequence_gru_own.cpp), so both read a fused activation the same way.
#include "kernels/activation_spec.hpp"
#include "tflite/program.hpp"

namespace tickinfer::tfl {

// False for RELU_N1_TO_1 and SIGN_BIT, which the graph engine has no activation for.
inline bool graph_activation(FusedActivation a, ActivationSpec* s) {
  *s = ActivationSpec{};
  switch (a) {
    case FusedActivation::None: return true;
    case FusedActivation::Relu: s->kind = ActKind::Relu; return true;
    case FusedActivation::Relu6:
      s->kind = ActKind::Relu;
      s->max_value = 6.0f;
      return true;
    case FusedActivation::Tanh: s->kind = ActKind::Tanh; return true;
    case FusedActivation::ReluN1To1:
    case FusedActivation::SignBit: return false;
  }
  return false;
}

}  // namespace tickinfer::tfl
