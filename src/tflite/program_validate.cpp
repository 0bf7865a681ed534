// Structural validation of a Program (tfl::validate): what every loader and the quantizer
// must guarantee before the interpreter prepares ops, so prepare functions can index tensors
// and read constant data without re-checking ranges.
#include <cmath>
#include <cstdint>
#include <string>

#include "tflite/program.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::tfl {

namespace {

// Operand counts per op (TFLite's: the kernels' NumInputs/NumOutputs checks). kMany = no upper
// bound. `optional` lists input positions that may be -1 (left out).
constexpr int kMany = 1 << 30;
struct Arity {
  int min_in, max_in, min_out, max_out;
};

Arity arity(OpCode code) {
  switch (code) {
    case OpCode::FullyConnected: return {2, 3, 1, 1};
    case OpCode::SequenceLstm: return {20, 24, 1, 1};  // 20 in files written before layer norm
    case OpCode::SequenceGru: return {6, 6, 1, 1};
    case OpCode::Conv2D:
    case OpCode::DepthwiseConv2D: return {2, 3, 1, 1};
    case OpCode::Add:
    case OpCode::Sub:
    case OpCode::Mul:
    case OpCode::Div:
    case OpCode::SquaredDifference:
    case OpCode::Maximum:
    case OpCode::Minimum:
    case OpCode::Mean:
    case OpCode::Sum:
    case OpCode::ReduceProd:
    case OpCode::ExpandDims:
    case OpCode::Pad:
    case OpCode::Transpose:
    case OpCode::ReverseV2:
    case OpCode::Gather:
    case OpCode::Less:
    case OpCode::LogicalAnd:
    case OpCode::BatchMatMul: return {2, 2, 1, 1};
    case OpCode::Slice:
    case OpCode::SelectV2:
    case OpCode::DynamicUpdateSlice: return {3, 3, 1, 1};
    case OpCode::While: return {1, kMany, 1, kMany};  // as many outputs as inputs (checked below)
    case OpCode::CallOnce: return {0, 0, 0, 0};
    case OpCode::VarHandle: return {0, 0, 1, 1};
    case OpCode::AssignVariable: return {2, 2, 0, 0};
    case OpCode::Reshape: return {1, 2, 1, 1};
    case OpCode::StridedSlice: return {4, 4, 1, 1};
    case OpCode::SpaceToBatchNd:
    case OpCode::BatchToSpaceNd: return {3, 3, 1, 1};
    case OpCode::Concatenation:
    case OpCode::Pack: return {1, kMany, 1, 1};
    case OpCode::Split: return {2, 2, 1, kMany};  // axis, input
    case OpCode::SplitV: return {3, 3, 1, kMany};  // input, size_splits, axis
    case OpCode::Unpack: return {1, 1, 1, kMany};
    default: return {1, 1, 1, 1};  // unary ops, pooling, softmax, (de)quantize, squeeze
  }
}

bool optional_input(OpCode code, size_t i) {
  switch (code) {
    case OpCode::FullyConnected:
    case OpCode::Conv2D:
    case OpCode::DepthwiseConv2D: return i == 2;  // bias
    case OpCode::Reshape: return i == 1;          // shape operand (old files use options)
    case OpCode::SequenceGru: return i == 3 || i == 4;  // biases
    case OpCode::SequenceLstm:
      // input-gate weights and bias (CIFG), peepholes, projection, layer-norm coefficients
      return i == 1 || i == 5 || (i >= 9 && i <= 12) || i == 16 || i == 17 || i >= 20;
    default: return false;
  }
}

std::string tensor_where(const Program& p, size_t t) {
  return "tensor " + std::to_string(t) + " '" + p.tensors[t].name + "'";
}

std::string op_where(const Op& op, size_t i, int subgraph) {
  return (subgraph > 0 ? "subgraph " + std::to_string(subgraph) + " " : std::string()) + "op " + std::to_string(i) +
         " (" + op_name(op.code) + (op.label.empty() ? "" : " '" + op.label + "'") + ")";
}

[[noreturn]] void fail(const std::string& where, const std::string& what) { throw Error(where + ": " + what); }

void validate_tensor(const Program& p, size_t t) {
  const Tensor& x = p.tensors[t];
  const size_t esize = dtype_size(x.type);
  if (esize == 0) fail(tensor_where(p, t), "unknown type " + std::to_string(static_cast<int>(x.type)));
  const int64_t n = element_count(x.shape);
  if (n < 0) fail(tensor_where(p, t), "negative dimension in its shape");
  // 2^31 elements (8 GiB of float) is far beyond any batch-1 model: such a shape is a broken file.
  if (n > (int64_t{1} << 31)) fail(tensor_where(p, t), "shape has more than 2^31 elements");
  if (x.is_constant() && static_cast<uint64_t>(n) * esize != x.data.size()) {
    fail(tensor_where(p, t), "holds " + std::to_string(x.data.size()) + " bytes of data but its shape and type need " +
                                 std::to_string(static_cast<uint64_t>(n) * esize));
  }
  const QuantParams& q = x.quant;
  if (q.zero_point.size() != q.scale.size()) {
    fail(tensor_where(p, t), "quantization has " + std::to_string(q.scale.size()) + " scales but " +
                                 std::to_string(q.zero_point.size()) + " zero points");
  }
  for (float s : q.scale) {
    if (!std::isfinite(s) || s < 0) fail(tensor_where(p, t), "quantization scale is negative or not finite");
  }
  if (q.per_axis()) {
    if (q.axis < 0 || static_cast<size_t>(q.axis) >= x.shape.size()) {
      fail(tensor_where(p, t), "quantized dimension " + std::to_string(q.axis) + " is outside its rank");
    }
    if (static_cast<size_t>(x.shape[static_cast<size_t>(q.axis)]) != q.scale.size()) {
      fail(tensor_where(p, t), "has " + std::to_string(q.scale.size()) + " per-axis scales but dimension " +
                                   std::to_string(q.axis) + " is " + std::to_string(x.shape[static_cast<size_t>(q.axis)]));
    }
  }
}

// The subgraphs a WHILE / CALL_ONCE names exist, are not the main graph, and take and give
// as many tensors as the loop carries.
void validate_control_flow(const Program& p, const Op& op, const std::string& where) {
  const size_t n = op.inputs.size();
  if (op.code == OpCode::While) {
    if (op.outputs.size() != n) fail(where, "has " + std::to_string(n) + " inputs but " + std::to_string(op.outputs.size()) + " outputs");
    const Subgraph* cond = p.subgraph(op.options.cond_subgraph);
    const Subgraph* body = p.subgraph(op.options.body_subgraph);
    if (!cond) fail(where, "cond_subgraph_index " + std::to_string(op.options.cond_subgraph) + " names no subgraph");
    if (!body) fail(where, "body_subgraph_index " + std::to_string(op.options.body_subgraph) + " names no subgraph");
    if (cond->inputs.size() != n || cond->outputs.size() != 1) {
      fail(where, "cond subgraph " + std::to_string(op.options.cond_subgraph) + " must take " + std::to_string(n) +
                      " inputs and give one output");
    }
    if (body->inputs.size() != n || body->outputs.size() != n) {
      fail(where, "body subgraph " + std::to_string(op.options.body_subgraph) + " must take and give " + std::to_string(n) + " tensors");
    }
  } else if (op.code == OpCode::CallOnce) {
    if (!p.subgraph(op.options.body_subgraph)) {
      fail(where, "init_subgraph_index " + std::to_string(op.options.body_subgraph) + " names no subgraph");
    }
  }
}

void validate_op(const Program& p, const Op& op, size_t i, int subgraph) {
  const std::string where = op_where(op, i, subgraph);
  if (static_cast<size_t>(op.code) > static_cast<size_t>(kLastOpCode)) {
    fail(where, "unknown op code " + std::to_string(static_cast<int>(op.code)));
  }
  validate_control_flow(p, op, where);
  const Arity a = arity(op.code);
  const int nin = static_cast<int>(op.inputs.size()), nout = static_cast<int>(op.outputs.size());
  if (nin < a.min_in || nin > a.max_in) {
    fail(where, "has " + std::to_string(nin) + " inputs; it takes " + std::to_string(a.min_in) +
                             (a.max_in == a.min_in ? "" : a.max_in == kMany ? " or more" : " to " + std::to_string(a.max_in)));
  }
  if (nout < a.min_out || nout > a.max_out) {
    fail(where, "has " + std::to_string(nout) + " outputs; it gives " + std::to_string(a.min_out) +
                             (a.max_out == a.min_out ? "" : a.max_out == kMany ? " or more" : " to " + std::to_string(a.max_out)));
  }
  const auto ntensors = static_cast<int64_t>(p.tensors.size());
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    const int t = op.inputs[k];
    if (t == -1 && optional_input(op.code, k)) continue;
    if (t < 0 || t >= ntensors) {
      fail(where, "input " + std::to_string(k) + " refers to tensor " + std::to_string(t) +
                               (t == -1 ? " (left out, but the input is required)" : " (out of range)"));
    }
  }
  for (size_t k = 0; k < op.outputs.size(); ++k) {
    const int t = op.outputs[k];
    if (t < 0 || t >= ntensors) fail(where, "output " + std::to_string(k) + " refers to tensor " + std::to_string(t) + " (out of range)");
    if (p.tensors[static_cast<size_t>(t)].is_constant()) {
      fail(where, "output " + std::to_string(k) + " is the constant " + tensor_where(p, static_cast<size_t>(t)));
    }
  }
  for (size_t k = 0; k < op.intermediates.size(); ++k) {
    const int t = op.intermediates[k];
    if (t < 0 || t >= ntensors) {
      fail(where, "intermediate " + std::to_string(k) + " refers to tensor " + std::to_string(t) + " (out of range)");
    }
  }
}

}  // namespace

void validate(const Program& program) {
  for (size_t t = 0; t < program.tensors.size(); ++t) validate_tensor(program, t);
  for (size_t i = 0; i < program.ops.size(); ++i) validate_op(program, program.ops[i], i, 0);
  const auto ntensors_all = static_cast<int64_t>(program.tensors.size());
  for (size_t g = 0; g < program.subgraphs.size(); ++g) {
    const Subgraph& sg = program.subgraphs[g];
    for (size_t i = 0; i < sg.ops.size(); ++i) validate_op(program, sg.ops[i], i, static_cast<int>(g + 1));
    for (const auto* list : {&sg.inputs, &sg.outputs}) {
      for (int t : *list) {
        if (t < 0 || t >= ntensors_all) fail("subgraph " + std::to_string(g + 1), "tensor " + std::to_string(t) + " is out of range");
      }
    }
  }
  const auto ntensors = static_cast<int64_t>(program.tensors.size());
  auto check_io = [&](const std::vector<int>& list, const char* what) {
    for (int t : list) {
      if (t < 0 || t >= ntensors) fail(std::string("program ") + what, "tensor " + std::to_string(t) + " is out of range");
      if (program.tensors[static_cast<size_t>(t)].is_constant()) {
        fail(std::string("program ") + what, tensor_where(program, static_cast<size_t>(t)) + " is a constant");
      }
    }
  };
  if (program.inputs.empty()) throw Error("program has no inputs");
  if (program.outputs.empty()) throw Error("program has no outputs");
  check_io(program.inputs, "input");
  check_io(program.outputs, "output");
}

}  // namespace tickinfer::tfl
