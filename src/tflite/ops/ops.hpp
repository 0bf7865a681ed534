#pragma once
// One prepare function per op family, each in its own file under src/tflite/ops/ (prepare checks
// operand types and shapes and builds the PreparedOp; see tflite/prepared_op.hpp). registry.cpp
// dispatches an Op to them by OpCode.
#include <memory>

#include "tflite/prepared_op.hpp"

namespace tickinfer::tfl::ops {

std::unique_ptr<PreparedOp> prepare_fully_connected(const PrepareContext& ctx);  // float, hybrid, int8, bf16 filter
std::unique_ptr<PreparedOp> prepare_sequence_gru(const PrepareContext& ctx);     // float, bf16, hybrid weights
std::unique_ptr<PreparedOp> prepare_sequence_lstm(const PrepareContext& ctx);    // float, hybrid, int8 (8x8_16), bf16 weights
std::unique_ptr<PreparedOp> prepare_conv2d(const PrepareContext& ctx);           // Conv2D
std::unique_ptr<PreparedOp> prepare_depthwise_conv2d(const PrepareContext& ctx);
std::unique_ptr<PreparedOp> prepare_pool2d(const PrepareContext& ctx);           // MaxPool2D, AveragePool2D
std::unique_ptr<PreparedOp> prepare_quantize(const PrepareContext& ctx);         // Quantize, Dequantize
std::unique_ptr<PreparedOp> prepare_activation(const PrepareContext& ctx);       // Logistic, Tanh, Relu, Relu6, LeakyRelu, Gelu, HardSwish, Elu, Exp, ...
std::unique_ptr<PreparedOp> prepare_softmax(const PrepareContext& ctx);
std::unique_ptr<PreparedOp> prepare_elementwise(const PrepareContext& ctx);      // Add, Sub, Mul, Div, SquaredDifference, Maximum, Minimum (broadcasting)
std::unique_ptr<PreparedOp> prepare_reduce(const PrepareContext& ctx);           // Mean, Sum
std::unique_ptr<PreparedOp> prepare_shape_op(const PrepareContext& ctx);         // Reshape, ExpandDims, Squeeze (copies)
std::unique_ptr<PreparedOp> prepare_layout_op(const PrepareContext& ctx);        // Concatenation, StridedSlice, Pad, Transpose, Split, Pack, Unpack, Gather, ...
std::unique_ptr<PreparedOp> prepare_control_flow(const PrepareContext& ctx);     // While, CallOnce, VarHandle, ReadVariable, AssignVariable
std::unique_ptr<PreparedOp> prepare_dynamic_op(const PrepareContext& ctx);       // Less, LogicalAnd, Shape, Slice, Gather (runtime indices)
std::unique_ptr<PreparedOp> prepare_batch_matmul(const PrepareContext& ctx);     // float, int8
std::unique_ptr<PreparedOp> prepare_dynamic_update_slice(const PrepareContext& ctx);
std::unique_ptr<PreparedOp> prepare_reduce_prod(const PrepareContext& ctx);      // float, int32 (shape arithmetic)

}  // namespace tickinfer::tfl::ops
