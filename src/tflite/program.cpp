// Names, sizes and structural validation of a tensor Program.
#include "tflite/program.hpp"

#include <limits>

#include <iterator>
#include <string>

#include "tickinfer/error.hpp"

namespace tickinfer::tfl {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "float32";
    case DType::F16: return "float16";
    case DType::I32: return "int32";
    case DType::U8: return "uint8";
    case DType::I64: return "int64";
    case DType::Bool: return "bool";
    case DType::I16: return "int16";
    case DType::I8: return "int8";
    case DType::BF16: return "bfloat16";
    case DType::Resource: return "resource";
  }
  return "unknown";
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::F32: case DType::I32: return 4;
    case DType::Resource: return 4;  // room for a handle in the arena; never read as data
    case DType::F16: case DType::I16: case DType::BF16: return 2;
    case DType::U8: case DType::I8: case DType::Bool: return 1;
    case DType::I64: return 8;
  }
  return 0;
}

namespace {
// TFLite's names, in OpCode order (one file maps to the other one to one).
const char* const kOpNames[] = {
    "FULLY_CONNECTED", "UNIDIRECTIONAL_SEQUENCE_LSTM", "CONV_2D", "DEPTHWISE_CONV_2D", "MAX_POOL_2D",
    "AVERAGE_POOL_2D", "QUANTIZE", "DEQUANTIZE", "LOGISTIC", "TANH", "RELU", "RELU6", "LEAKY_RELU",
    "SOFTMAX", "ADD", "SUB", "MUL", "SQUARED_DIFFERENCE", "RSQRT", "MEAN", "SUM", "CONCATENATION",
    "RESHAPE", "EXPAND_DIMS", "SQUEEZE", "STRIDED_SLICE", "PAD", "TRANSPOSE", "GATHER", "SPLIT",
    "PACK", "UNPACK", "SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND", "GELU", "HARD_SWISH", "ELU", "EXP",
    "NEG", "ABS", "MAXIMUM", "MINIMUM", "DIV", "SQRT", "LOG", "SQUARE", "BATCH_MATMUL", "WHILE",
    "CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "LESS", "LOGICAL_AND", "SHAPE", "SLICE",
    "DYNAMIC_UPDATE_SLICE", "REDUCE_PROD", "SELECT_V2", "REVERSE_V2", "SEQUENCE_GRU", "SPLIT_V",
};
static_assert(std::size(kOpNames) == static_cast<size_t>(kLastOpCode) + 1,
              "kOpNames must list every OpCode");
}  // namespace

const char* op_name(OpCode code) {
  auto i = static_cast<size_t>(code);
  return i < std::size(kOpNames) ? kOpNames[i] : "unknown op";
}

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::F32: return "fp32";
    case Precision::BF16: return "bf16";
    case Precision::Int8Dynamic: return "int8-dynamic";
    case Precision::Int8: return "int8";
  }
  return "unknown";
}

int64_t element_count(const Shape& shape) {
  for (int d : shape) {
    if (d < 0) return -1;
  }
  for (int d : shape) {
    if (d == 0) return 0;
  }
  int64_t n = 1;
  for (int d : shape) {
    // Saturates instead of overflowing: a hostile shape must not be undefined behaviour.
    if (n > std::numeric_limits<int64_t>::max() / d) return std::numeric_limits<int64_t>::max();
    n *= d;
  }
  return n;
}

}  // namespace tickinfer::tfl
