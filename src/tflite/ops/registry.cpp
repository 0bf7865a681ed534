// prepare_op: the one place that maps an OpCode to the family that prepares it.
#include <algorithm>

#include "tflite/ops/control_flow.hpp"
#include "tflite/ops/ops.hpp"

namespace tickinfer::tfl {

std::unique_ptr<PreparedOp> prepare_op(const PrepareContext& ctx) {
  using namespace ops;
  // Every output computed at prepare (tflite/rewrite/program_rewrite.hpp) leaves nothing to run.
  const auto& outs = ctx.op.outputs;
  if (!outs.empty() && std::all_of(outs.begin(), outs.end(), [&](int t) {
        return t >= 0 && static_cast<size_t>(t) < ctx.program.tensors.size() && ctx.program.tensors[static_cast<size_t>(t)].is_constant();
      })) {
    return make_folded_op();
  }
  switch (ctx.op.code) {
    case OpCode::FullyConnected: return prepare_fully_connected(ctx);
    case OpCode::SequenceLstm: return prepare_sequence_lstm(ctx);
    case OpCode::SequenceGru: return prepare_sequence_gru(ctx);
    case OpCode::Conv2D: return prepare_conv2d(ctx);
    case OpCode::DepthwiseConv2D: return prepare_depthwise_conv2d(ctx);
    case OpCode::MaxPool2D:
    case OpCode::AveragePool2D: return prepare_pool2d(ctx);
    case OpCode::Quantize:
    case OpCode::Dequantize: return prepare_quantize(ctx);
    case OpCode::Logistic:
    case OpCode::Tanh:
    case OpCode::Relu:
    case OpCode::Relu6:
    case OpCode::LeakyRelu:
    case OpCode::Gelu:
    case OpCode::HardSwish:
    case OpCode::Elu:
    case OpCode::Exp:
    case OpCode::Neg:
    case OpCode::Abs:
    case OpCode::Sqrt:
    case OpCode::Rsqrt:
    case OpCode::Log:
    case OpCode::Square: return prepare_activation(ctx);
    case OpCode::Softmax: return prepare_softmax(ctx);
    case OpCode::Add:
    case OpCode::Sub:
    case OpCode::Mul:
    case OpCode::Div:
    case OpCode::SquaredDifference:
    case OpCode::Maximum:
    case OpCode::Minimum: return prepare_elementwise(ctx);
    case OpCode::Mean:
    case OpCode::Sum: return prepare_reduce(ctx);
    case OpCode::Reshape:
    case OpCode::ExpandDims:
    case OpCode::Squeeze: return prepare_shape_op(ctx);
    case OpCode::Gather:  // constant indices: a copy plan; runtime ones (a loop counter): read at eval
      if (!ctx.has_input(1) || !ctx.input(1).is_constant()) return prepare_dynamic_op(ctx);
      return prepare_layout_op(ctx);
    case OpCode::Concatenation:
    case OpCode::StridedSlice:
    case OpCode::Pad:
    case OpCode::Transpose:
    case OpCode::ReverseV2:
    case OpCode::Split:
    case OpCode::SplitV:
    case OpCode::Pack:
    case OpCode::Unpack:
    case OpCode::SpaceToBatchNd:
    case OpCode::BatchToSpaceNd: return prepare_layout_op(ctx);
    case OpCode::BatchMatMul: return prepare_batch_matmul(ctx);
    case OpCode::While:
    case OpCode::CallOnce:
    case OpCode::VarHandle:
    case OpCode::ReadVariable:
    case OpCode::AssignVariable: return prepare_control_flow(ctx);
    case OpCode::Less:
    case OpCode::LogicalAnd:
    case OpCode::Shape:
    case OpCode::Slice:
    case OpCode::SelectV2: return prepare_dynamic_op(ctx);
    case OpCode::DynamicUpdateSlice: return prepare_dynamic_update_slice(ctx);
    case OpCode::ReduceProd: return prepare_reduce_prod(ctx);
  }
  ctx.fail("this op is not supported by the interpreter");
}

}  // namespace tickinfer::tfl
