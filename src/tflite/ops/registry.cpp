// prepare_op: the one place that maps an OpCode to the family that prepares it.
#include "tflite/ops/ops.hpp"

namespace tickinfer::tfl {

std::unique_ptr<PreparedOp> prepare_op(const PrepareContext& ctx) {
  using namespace ops;
  switch (ctx.op.code) {
    case OpCode::FullyConnected: return prepare_fully_connected(ctx);
    case OpCode::SequenceLstm: return prepare_sequence_lstm(ctx);
    case OpCode::Conv2D:
    case OpCode::DepthwiseConv2D: return prepare_conv2d(ctx);
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
    case OpCode::Concatenation:
    case OpCode::StridedSlice:
    case OpCode::Pad:
    case OpCode::Transpose:
    case OpCode::Gather:
    case OpCode::Split:
    case OpCode::Pack:
    case OpCode::Unpack:
    case OpCode::SpaceToBatchNd:
    case OpCode::BatchToSpaceNd: return prepare_layout_op(ctx);
    case OpCode::BatchMatMul: break;
  }
  ctx.fail("this op is not supported by the interpreter");
}

}  // namespace tickinfer::tfl
