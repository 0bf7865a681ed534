// TFLite's builtin op names for the OpCode values, for error messages and `inspect`.
#include "quant/program.hpp"

namespace tickinfer::quant {

const char* op_name(OpCode code) {
  switch (code) {
    case OpCode::FullyConnected: return "FULLY_CONNECTED";
    case OpCode::SequenceLstm: return "UNIDIRECTIONAL_SEQUENCE_LSTM";
    case OpCode::Conv2D: return "CONV_2D";
    case OpCode::DepthwiseConv2D: return "DEPTHWISE_CONV_2D";
    case OpCode::MaxPool2D: return "MAX_POOL_2D";
    case OpCode::AveragePool2D: return "AVERAGE_POOL_2D";
    case OpCode::Quantize: return "QUANTIZE";
    case OpCode::Dequantize: return "DEQUANTIZE";
    case OpCode::Logistic: return "LOGISTIC";
    case OpCode::Tanh: return "TANH";
    case OpCode::Relu: return "RELU";
    case OpCode::Relu6: return "RELU6";
    case OpCode::LeakyRelu: return "LEAKY_RELU";
    case OpCode::Softmax: return "SOFTMAX";
    case OpCode::Add: return "ADD";
    case OpCode::Sub: return "SUB";
    case OpCode::Mul: return "MUL";
    case OpCode::SquaredDifference: return "SQUARED_DIFFERENCE";
    case OpCode::Rsqrt: return "RSQRT";
    case OpCode::Mean: return "MEAN";
    case OpCode::Sum: return "SUM";
    case OpCode::Concatenation: return "CONCATENATION";
    case OpCode::Reshape: return "RESHAPE";
    case OpCode::ExpandDims: return "EXPAND_DIMS";
    case OpCode::Squeeze: return "SQUEEZE";
    case OpCode::StridedSlice: return "STRIDED_SLICE";
    case OpCode::Pad: return "PAD";
    case OpCode::Transpose: return "TRANSPOSE";
    case OpCode::Gather: return "GATHER";
    case OpCode::Split: return "SPLIT";
    case OpCode::Pack: return "PACK";
    case OpCode::Unpack: return "UNPACK";
    case OpCode::SpaceToBatchNd: return "SPACE_TO_BATCH_ND";
    case OpCode::BatchToSpaceNd: return "BATCH_TO_SPACE_ND";
    case OpCode::Gelu: return "GELU";
    case OpCode::HardSwish: return "HARD_SWISH";
    case OpCode::Elu: return "ELU";
    case OpCode::Exp: return "EXP";
    case OpCode::Neg: return "NEG";
    case OpCode::Abs: return "ABS";
    case OpCode::Maximum: return "MAXIMUM";
    case OpCode::Minimum: return "MINIMUM";
    case OpCode::Div: return "DIV";
    case OpCode::Sqrt: return "SQRT";
    case OpCode::Log: return "LOG";
    case OpCode::Square: return "SQUARE";
    case OpCode::BatchMatMul: return "BATCH_MATMUL";
  }
  return "UNKNOWN_OP";
}

}  // namespace tickinfer::quant
