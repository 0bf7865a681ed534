#pragma once
// The UNIDIRECTIONAL_SEQUENCE_LSTM variants, one file each; prepare_sequence_lstm
// (sequence_lstm.cpp) picks one from the operand types.
//  * float:  float input, state and weights (sequence_lstm_float.cpp); also bfloat16 weights,
//            widened to fp32 at prepare (the quantizer's bf16 precision).
//  * hybrid: float input/state/bias, int8 weights (dynamic range; sequence_lstm_hybrid.cpp); a
//            lowered dynamic-range Keras 3 LSTM loop (OpOptions::keras_cell) runs as its body's
//            ops instead (keras_cell_hybrid.cpp).
//  * int8:   int8 input/output_state, int16 cell_state, int8 weights, int32 biases, gate
//            scales in the op's 5 intermediates (TFLite's 8x8_16; sequence_lstm_int8.cpp).
#include <memory>

#include "tflite/ops/lstm/sequence_lstm_operands.hpp"

namespace tickinfer::tfl::ops::lstm {

std::unique_ptr<PreparedOp> prepare_float(const PrepareContext& ctx, const LstmOperands& o);
std::unique_ptr<PreparedOp> prepare_hybrid(const PrepareContext& ctx, const LstmOperands& o);
std::unique_ptr<PreparedOp> prepare_keras_cell_hybrid(const PrepareContext& ctx, const LstmOperands& o);
std::unique_ptr<PreparedOp> prepare_int8(const PrepareContext& ctx, const LstmOperands& o);

}  // namespace tickinfer::tfl::ops::lstm
