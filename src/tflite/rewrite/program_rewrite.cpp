// Resource variables to variable tensors, and prepare-time folding (tflite/rewrite/program_rewrite.hpp).
#include "tflite/rewrite/program_rewrite.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "tflite/ops/control_flow.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::tfl {

namespace {

template <class F>
void for_each_graph(Program& p, F f) {
  f(p.ops);
  for (Subgraph& sg : p.subgraphs) f(sg.ops);
}

// The variable a handle tensor names, by the VAR_HANDLE that produced it or the WHILE loop
// variable that carries it into a cond or body subgraph.
std::map<int, std::string> handle_keys(Program& p) {
  std::map<int, std::string> key_of;
  for_each_graph(p, [&](std::vector<Op>& ops) {
    for (const Op& op : ops) {
      if (op.code == OpCode::VarHandle && !op.outputs.empty()) {
        key_of[op.outputs[0]] = op.options.container + "/" + op.options.shared_name;
      }
    }
  });
  if (key_of.empty()) return key_of;
  for (int pass = 0; pass < 8; ++pass) {  // nested loops carry a handle one level per pass
    bool changed = false;
    for_each_graph(p, [&](std::vector<Op>& ops) {
      for (const Op& op : ops) {
        if (op.code != OpCode::While) continue;
        const Subgraph* cond = p.subgraph(op.options.cond_subgraph);
        const Subgraph* body = p.subgraph(op.options.body_subgraph);
        for (size_t i = 0; i < op.inputs.size(); ++i) {
          auto k = key_of.find(op.inputs[i]);
          if (k == key_of.end()) continue;
          const std::string key = k->second;
          for (int t : {op.outputs[i], cond->inputs[i], body->inputs[i]}) changed |= key_of.emplace(t, key).second;
        }
      }
    });
    if (!changed) break;
  }
  return key_of;
}

bool foldable(const Op& op, const Program& p) {
  switch (op.code) {
    case OpCode::Shape:
    case OpCode::Pack:
    case OpCode::Unpack:
    case OpCode::StridedSlice:
    case OpCode::Slice:
    case OpCode::Reshape:
    case OpCode::ExpandDims:
    case OpCode::Squeeze:
    case OpCode::Concatenation:
    case OpCode::Gather:
    case OpCode::Transpose:
    case OpCode::Split: break;
    case OpCode::Add:
    case OpCode::Sub:
    case OpCode::Mul:
    case OpCode::Less:
    case OpCode::ReduceProd:
    case OpCode::LogicalAnd: {
      // Shape and index arithmetic only: float and quantized math stays where the file put it.
      const DType t = p.tensors[static_cast<size_t>(op.outputs[0])].type;
      if (t != DType::I32 && t != DType::I64 && t != DType::Bool) return false;
      break;
    }
    default: return false;
  }
  for (int t : op.outputs) {
    const Tensor& x = p.tensors[static_cast<size_t>(t)];
    if (x.is_constant() || element_count(x.shape) <= 0) return false;
    if (std::find(p.outputs.begin(), p.outputs.end(), t) != p.outputs.end()) return false;
  }
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    const int t = op.inputs[k];
    if (t < 0) continue;
    if (op.code == OpCode::Shape && k == 0) continue;  // only its (static) shape is read
    if (!p.tensors[static_cast<size_t>(t)].is_constant()) return false;
  }
  return true;
}

// Runs one foldable op with its own kernel and stores its outputs as constants.
void fold(Program& p, const Op& op, const InterpreterOptions& options, ::tickinfer::kernels::Isa isa) {
  PrepareContext ctx{p, op, options, isa};
  std::unique_ptr<PreparedOp> prepared = prepare_op(ctx);
  TensorMemory mem;
  mem.addr.assign(p.tensors.size(), nullptr);
  for (int t : op.inputs) {
    if (t >= 0 && p.tensors[static_cast<size_t>(t)].is_constant()) {
      mem.addr[static_cast<size_t>(t)] = const_cast<uint8_t*>(p.tensors[static_cast<size_t>(t)].data.data());
    }
  }
  std::vector<std::vector<uint8_t>> results;
  for (int t : op.outputs) {
    const Tensor& x = p.tensors[static_cast<size_t>(t)];
    results.emplace_back(static_cast<size_t>(element_count(x.shape)) * dtype_size(x.type));
    mem.addr[static_cast<size_t>(t)] = results.back().data();
  }
  // results' buffers do not move once all are created: point at them again before running.
  for (size_t k = 0; k < op.outputs.size(); ++k) mem.addr[static_cast<size_t>(op.outputs[k])] = results[k].data();
  prepared->eval(mem);
  for (size_t k = 0; k < op.outputs.size(); ++k) p.tensors[static_cast<size_t>(op.outputs[k])].data = std::move(results[k]);
}

}  // namespace

int lower_resource_variables(Program& p) {
  const std::map<int, std::string> key_of = handle_keys(p);
  if (key_of.empty()) return 0;
  std::map<std::string, int> var_of;
  std::set<std::string> assigned;
  std::map<std::string, std::string> read_into;  // a variable -> the first tensor read from it
  for_each_graph(p, [&](std::vector<Op>& ops) {
    for (Op& op : ops) {
      const bool read = op.code == OpCode::ReadVariable, assign = op.code == OpCode::AssignVariable;
      if ((!read && !assign) || op.inputs.empty() || (read && op.outputs.empty()) || (assign && op.inputs.size() < 2)) continue;
      auto k = key_of.find(op.inputs[0]);
      if (k == key_of.end()) continue;  // prepare refuses the op, naming the handle
      if (assign) assigned.insert(k->second);
      if (read) read_into.emplace(k->second, p.tensors[static_cast<size_t>(op.outputs[0])].name);
      auto v = var_of.find(k->second);
      if (v == var_of.end()) {
        const Tensor value = p.tensors[static_cast<size_t>(read ? op.outputs[0] : op.inputs[1])];
        Tensor var;
        var.name = "variable " + k->second;
        var.type = value.type;
        var.shape = value.shape;
        var.quant = value.quant;
        var.is_variable = true;
        p.tensors.push_back(std::move(var));
        v = var_of.emplace(k->second, static_cast<int>(p.tensors.size() - 1)).first;
      }
      op.inputs[0] = v->second;  // a value of another type or shape is refused at prepare
    }
  });
  // A variable read but assigned nowhere (not in the main graph, a CALL_ONCE initializer or a
  // loop body) has no value: TFLite's interpreter fails to invoke such a file. TF 2.21's
  // converter writes one when a batch-1 concrete function of a stateful Keras 3 model is
  // converted without freezing its variables; zeros in its place would be a silent wrong answer.
  for (const auto& [key, tensor] : read_into) {
    if (assigned.count(key) == 0) {
      const std::string name = key.rfind('/', 0) == 0 ? key.substr(1) : key;  // container/shared_name
      throw Error("resource variable '" + name + "' is read (READ_VARIABLE into '" + tensor +
                  "') but nothing in the file assigns it (no ASSIGN_VARIABLE in any subgraph): the model's "
                  "initial values were not converted; convert from a function whose variables are frozen to "
                  "constants, or one that initializes them");
    }
  }
  return static_cast<int>(var_of.size());
}

int fold_constant_ops(Program& p, const InterpreterOptions& options, ::tickinfer::kernels::Isa isa) {
  int folded = 0;
  auto pass = [&](std::vector<Op>& ops) {
    for (const Op& op : ops) {
      if (!foldable(op, p)) continue;
      fold(p, op, options, isa);
      ++folded;
    }
  };
  pass(p.ops);
  for (size_t g = 0; g < p.subgraphs.size(); ++g) pass(p.subgraphs[g].ops);
  return folded;
}

std::shared_ptr<const Program> rewrite_for_interpreter(std::shared_ptr<const Program> program,
                                                       const InterpreterOptions& options,
                                                       ::tickinfer::kernels::Isa isa) {
  // The copy costs a second set of weights per interpreter: make it only for programs one of
  // the passes can change.
  bool has_slice = false;
  auto any_slice = [&](const std::vector<Op>& ops) {
    for (const Op& op : ops) has_slice |= op.code == OpCode::Slice;
  };
  any_slice(program->ops);
  for (const Subgraph& sg : program->subgraphs) any_slice(sg.ops);
  bool applies = false;
  auto scan = [&](const std::vector<Op>& ops) {
    for (const Op& op : ops) {
      applies |= op.code == OpCode::VarHandle || op.code == OpCode::SpaceToBatchNd ||
                 (op.code == OpCode::Concatenation && has_slice) ||
                 (op.code == OpCode::While && options.lower_recurrent_loops) ||
                 (op.code == OpCode::LeakyRelu && options.fuse_activations && !options.keep_all_tensors) ||
                 foldable(op, *program);
    }
  };
  scan(program->ops);
  for (const Subgraph& sg : program->subgraphs) scan(sg.ops);
  if (!applies) return program;
  auto copy = std::make_shared<Program>(*program);
  lower_resource_variables(*copy);
  fold_dilated_convolutions(*copy);
  rewrite_tensor_list_writes(*copy);
  fold_constant_ops(*copy, options, isa);
  if (refresh_placeholder_shapes(*copy) > 0) fold_constant_ops(*copy, options, isa);
  if (options.lower_recurrent_loops) {
    lower_lstm_loops(*copy);
    lower_gru_loops(*copy);
  }
  if (options.fuse_activations && !options.keep_all_tensors) fuse_leaky_relu(*copy);
  return copy;
}

}  // namespace tickinfer::tfl
