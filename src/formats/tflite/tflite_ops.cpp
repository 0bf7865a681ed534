// TFLite builtin operators and their options, mapped onto the Program's OpCode / OpOptions.
#include "formats/tflite/tflite_ops.hpp"

#include <cmath>

#include "tflite_generated.h"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

using tfl::OpCode;

namespace {

// Upstream BuiltinOperator codes of the ops the interpreter runs (schema.fbs enum values).
struct BuiltinMapping {
  int builtin;
  OpCode code;
};
constexpr BuiltinMapping kMappings[] = {
    {0, OpCode::Add},
    {1, OpCode::AveragePool2D},
    {2, OpCode::Concatenation},
    {3, OpCode::Conv2D},
    {4, OpCode::DepthwiseConv2D},
    {6, OpCode::Dequantize},
    {9, OpCode::FullyConnected},
    {14, OpCode::Logistic},
    {17, OpCode::MaxPool2D},
    {18, OpCode::Mul},
    {19, OpCode::Relu},
    {21, OpCode::Relu6},
    {22, OpCode::Reshape},
    {25, OpCode::Softmax},
    {28, OpCode::Tanh},
    {34, OpCode::Pad},
    {36, OpCode::Gather},
    {37, OpCode::BatchToSpaceNd},
    {38, OpCode::SpaceToBatchNd},
    {39, OpCode::Transpose},
    {40, OpCode::Mean},
    {41, OpCode::Sub},
    {42, OpCode::Div},
    {43, OpCode::Squeeze},
    {44, OpCode::SequenceLstm},
    {45, OpCode::StridedSlice},
    {47, OpCode::Exp},
    {49, OpCode::Split},
    {102, OpCode::SplitV},
    {55, OpCode::Maximum},
    {57, OpCode::Minimum},
    {58, OpCode::Less},
    {59, OpCode::Neg},
    {65, OpCode::Slice},
    {70, OpCode::ExpandDims},
    {73, OpCode::Log},
    {74, OpCode::Sum},
    {75, OpCode::Sqrt},
    {76, OpCode::Rsqrt},
    {77, OpCode::Shape},
    {81, OpCode::ReduceProd},
    {83, OpCode::Pack},
    {86, OpCode::LogicalAnd},
    {88, OpCode::Unpack},
    {92, OpCode::Square},
    {98, OpCode::LeakyRelu},
    {99, OpCode::SquaredDifference},
    {101, OpCode::Abs},
    {105, OpCode::ReverseV2},
    {111, OpCode::Elu},
    {114, OpCode::Quantize},
    {117, OpCode::HardSwish},
    {119, OpCode::While},
    {123, OpCode::SelectV2},
    {126, OpCode::BatchMatMul},
    {129, OpCode::CallOnce},
    {142, OpCode::VarHandle},
    {143, OpCode::ReadVariable},
    {144, OpCode::AssignVariable},
    {150, OpCode::Gelu},
    {151, OpCode::DynamicUpdateSlice},
};

[[noreturn]] void fail(const std::string& where, const std::string& what) { throw Error(where + ": " + what); }

tfl::FusedActivation activation(int8_t v, const std::string& where) {
  if (v < 0 || v > 5) fail(where, "fused_activation_function " + std::to_string(v) + " is not a valid value");
  return static_cast<tfl::FusedActivation>(v);
}

tfl::PaddingMode padding(int8_t v, const std::string& where) {
  if (v != 0 && v != 1) fail(where, "padding " + std::to_string(v) + " is not SAME (0) or VALID (1)");
  return static_cast<tfl::PaddingMode>(v);
}

int positive(int v, const char* field, const std::string& where) {
  if (v < 1) fail(where, std::string(field) + " " + std::to_string(v) + " must be at least 1");
  return v;
}

float finite(float v, const char* field, const std::string& where) {
  if (!std::isfinite(v)) fail(where, std::string(field) + " is not a finite number");
  return v;
}

std::vector<int> ints(const flatbuffers::Vector<int32_t>* v) {
  return v ? std::vector<int>(v->begin(), v->end()) : std::vector<int>{};
}

// WHILE, CALL_ONCE, VAR_HANDLE, SHAPE and BATCH_MATMUL options (ops of Keras 3 conversions).
void read_control_flow_options(const tflite::Operator& op, OpCode code, const std::string& where, tfl::OpOptions& o) {
  switch (code) {
    case OpCode::BatchMatMul:
      if (auto* p = op.builtin_options_as_BatchMatMulOptions()) {
        o.adj_x = p->adj_x();
        o.adj_y = p->adj_y();
        o.asymmetric_quantize_inputs = p->asymmetric_quantize_inputs();
      }
      break;
    case OpCode::While:
      if (auto* p = op.builtin_options_as_WhileOptions()) {
        o.cond_subgraph = p->cond_subgraph_index();
        o.body_subgraph = p->body_subgraph_index();
      } else {
        fail(where, "WhileOptions missing (the cond and body subgraphs are required)");
      }
      break;
    case OpCode::CallOnce:
      if (auto* p = op.builtin_options_as_CallOnceOptions()) {
        o.body_subgraph = p->init_subgraph_index();
      } else {
        fail(where, "CallOnceOptions missing (the init subgraph is required)");
      }
      break;
    case OpCode::VarHandle:
      if (auto* p = op.builtin_options_as_VarHandleOptions()) {
        if (p->container()) o.container = p->container()->str();
        if (p->shared_name()) o.shared_name = p->shared_name()->str();
      }
      break;
    case OpCode::Shape:
      if (auto* p = op.builtin_options_as_ShapeOptions()) {
        if (p->out_type() != 2 && p->out_type() != 4) fail(where, "out_type " + std::to_string(p->out_type()) + " is not INT32 or INT64");
        o.out_type = static_cast<tfl::DType>(p->out_type());
      }
      break;
    default:
      break;
  }
}

}  // namespace

std::optional<OpCode> tflite_op_code(int builtin_code) {
  for (const auto& m : kMappings) {
    if (m.builtin == builtin_code) return m.code;
  }
  return std::nullopt;
}

tfl::OpOptions read_tflite_options(const tflite::Operator& op, OpCode code, const std::string& where) {
  tfl::OpOptions o;
  switch (code) {
    case OpCode::FullyConnected:
      if (auto* p = op.builtin_options_as_FullyConnectedOptions()) {
        o.activation = activation(p->fused_activation_function(), where);
        if (p->weights_format() != 0) {
          fail(where, p->weights_format() == 1
                          ? "weights_format SHUFFLED4x16INT8 is not supported"
                          : "weights_format " + std::to_string(p->weights_format()) + " is not supported");
        }
        o.keep_num_dims = p->keep_num_dims();
        o.asymmetric_quantize_inputs = p->asymmetric_quantize_inputs();
      }
      break;
    case OpCode::SequenceLstm:
      if (auto* p = op.builtin_options_as_UnidirectionalSequenceLSTMOptions()) {
        o.activation = activation(p->fused_activation_function(), where);
        o.cell_clip = finite(p->cell_clip(), "cell_clip", where);
        o.proj_clip = finite(p->proj_clip(), "proj_clip", where);
        if (o.cell_clip < 0 || o.proj_clip < 0) fail(where, "cell_clip and proj_clip must not be negative");
        o.time_major = p->time_major();
        o.asymmetric_quantize_inputs = p->asymmetric_quantize_inputs();
        if (p->diagonal_recurrent_tensors()) fail(where, "diagonal_recurrent_tensors=true is not supported");
      }
      break;
    case OpCode::Conv2D:
      if (auto* p = op.builtin_options_as_Conv2DOptions()) {
        o.padding = padding(p->padding(), where);
        o.stride_w = positive(p->stride_w(), "stride_w", where);
        o.stride_h = positive(p->stride_h(), "stride_h", where);
        o.activation = activation(p->fused_activation_function(), where);
        o.dilation_w = positive(p->dilation_w_factor(), "dilation_w_factor", where);
        o.dilation_h = positive(p->dilation_h_factor(), "dilation_h_factor", where);
      } else {
        fail(where, "Conv2DOptions missing (strides are required)");
      }
      break;
    case OpCode::DepthwiseConv2D:
      if (auto* p = op.builtin_options_as_DepthwiseConv2DOptions()) {
        o.padding = padding(p->padding(), where);
        o.stride_w = positive(p->stride_w(), "stride_w", where);
        o.stride_h = positive(p->stride_h(), "stride_h", where);
        o.depth_multiplier = positive(p->depth_multiplier(), "depth_multiplier", where);
        o.activation = activation(p->fused_activation_function(), where);
        o.dilation_w = positive(p->dilation_w_factor(), "dilation_w_factor", where);
        o.dilation_h = positive(p->dilation_h_factor(), "dilation_h_factor", where);
      } else {
        fail(where, "DepthwiseConv2DOptions missing (strides are required)");
      }
      break;
    case OpCode::MaxPool2D:
    case OpCode::AveragePool2D:
      if (auto* p = op.builtin_options_as_Pool2DOptions()) {
        o.padding = padding(p->padding(), where);
        o.stride_w = positive(p->stride_w(), "stride_w", where);
        o.stride_h = positive(p->stride_h(), "stride_h", where);
        o.filter_w = positive(p->filter_width(), "filter_width", where);
        o.filter_h = positive(p->filter_height(), "filter_height", where);
        o.activation = activation(p->fused_activation_function(), where);
      } else {
        fail(where, "Pool2DOptions missing (filter size and strides are required)");
      }
      break;
    case OpCode::Softmax:
      if (auto* p = op.builtin_options_as_SoftmaxOptions()) o.beta = finite(p->beta(), "beta", where);
      break;
    case OpCode::Concatenation:
      if (auto* p = op.builtin_options_as_ConcatenationOptions()) {
        o.axis = p->axis();
        o.activation = activation(p->fused_activation_function(), where);
      }
      break;
    case OpCode::Add:
      if (auto* p = op.builtin_options_as_AddOptions()) {
        o.activation = activation(p->fused_activation_function(), where);
        o.pot_scale_int16 = p->pot_scale_int16();
      }
      break;
    case OpCode::Sub:
      if (auto* p = op.builtin_options_as_SubOptions()) {
        o.activation = activation(p->fused_activation_function(), where);
        o.pot_scale_int16 = p->pot_scale_int16();
      }
      break;
    case OpCode::Mul:
      if (auto* p = op.builtin_options_as_MulOptions()) o.activation = activation(p->fused_activation_function(), where);
      break;
    case OpCode::Div:
      if (auto* p = op.builtin_options_as_DivOptions()) o.activation = activation(p->fused_activation_function(), where);
      break;
    case OpCode::Reshape:
      if (auto* p = op.builtin_options_as_ReshapeOptions()) o.new_shape = ints(p->new_shape());
      break;
    case OpCode::Squeeze:
      if (auto* p = op.builtin_options_as_SqueezeOptions()) o.new_shape = ints(p->squeeze_dims());
      break;
    case OpCode::StridedSlice:
      if (auto* p = op.builtin_options_as_StridedSliceOptions()) {
        o.begin_mask = p->begin_mask();
        o.end_mask = p->end_mask();
        o.ellipsis_mask = p->ellipsis_mask();
        o.new_axis_mask = p->new_axis_mask();
        o.shrink_axis_mask = p->shrink_axis_mask();
        o.offset = p->offset();
      }
      break;
    case OpCode::Mean:
    case OpCode::Sum:
    case OpCode::ReduceProd:
      if (auto* p = op.builtin_options_as_ReducerOptions()) o.keep_dims = p->keep_dims();
      break;
    case OpCode::Gather:
      if (auto* p = op.builtin_options_as_GatherOptions()) {
        o.axis = p->axis();
        if (p->batch_dims() != 0) fail(where, "batch_dims=" + std::to_string(p->batch_dims()) + " is not supported");
      }
      break;
    case OpCode::Split:
      if (auto* p = op.builtin_options_as_SplitOptions()) o.num = positive(p->num_splits(), "num_splits", where);
      break;
    case OpCode::SplitV:
      if (auto* p = op.builtin_options_as_SplitVOptions()) o.num = positive(p->num_splits(), "num_splits", where);
      break;
    case OpCode::Pack:
      if (auto* p = op.builtin_options_as_PackOptions()) {
        o.num = positive(p->values_count(), "values_count", where);
        o.axis = p->axis();
      }
      break;
    case OpCode::Unpack:
      if (auto* p = op.builtin_options_as_UnpackOptions()) {
        o.num = positive(p->num(), "num", where);
        o.axis = p->axis();
      }
      break;
    case OpCode::LeakyRelu:
      if (auto* p = op.builtin_options_as_LeakyReluOptions()) o.alpha = finite(p->alpha(), "alpha", where);
      break;
    case OpCode::Gelu:
      if (auto* p = op.builtin_options_as_GeluOptions()) o.approximate = p->approximate();
      break;
    default:
      read_control_flow_options(op, code, where, o);  // or no options
      break;
  }
  return o;
}

}  // namespace tickinfer::formats
