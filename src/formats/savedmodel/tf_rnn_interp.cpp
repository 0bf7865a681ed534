// The interpreter recognise_cell uses: a loop body's nodes evaluated on concrete tensors, with
// TensorLists as vectors of tensors.
#include <map>

#include "formats/savedmodel/tf_eval.hpp"
#include "formats/savedmodel/tf_frame.hpp"
#include "formats/savedmodel/tf_rnn_cell.hpp"
#include "tensorflow/core/framework/function.pb.h"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

struct Interp {
  const tensorflow::FunctionDef& fn;
  const std::string& where;
  std::map<std::string, const tensorflow::NodeDef*> nodes;
  std::map<std::string, int> args;
  const std::vector<LoopVar>& in;
  std::map<std::string, std::vector<LoopVar>> done;
  int depth = 0;

  LoopVar value(const std::string& ref) {
    const size_t colon = ref.find(':');
    const std::string name = ref.substr(0, colon);
    if (colon == std::string::npos && args.count(name)) return in[static_cast<size_t>(args[name])];
    auto it = nodes.find(name);
    if (it == nodes.end()) throw Error(where + ": body input '" + ref + "' names no node");
    const TfRef r = parse_tf_ref(ref, it->second->op());
    const std::vector<LoopVar>& outs = eval(*it->second);
    if (static_cast<size_t>(r.index) >= outs.size()) throw Error(where + ": body node '" + name + "' has no output " + std::to_string(r.index));
    return outs[static_cast<size_t>(r.index)];
  }

  const std::vector<LoopVar>& eval(const tensorflow::NodeDef& n) {
    if (auto d = done.find(n.name()); d != done.end()) return d->second;
    if (++depth > 50000) throw Error(where + ": loop body nested too deeply");
    const std::string at = where + ": body node '" + n.name() + "' (" + n.op() + ")";
    std::vector<LoopVar> ins;
    for (const std::string& ref : n.input()) if (!ref.empty() && ref[0] != '^') ins.push_back(value(ref));
    std::vector<LoopVar> out;
    const std::string& op = n.op();
    auto index_of = [&](const LoopVar& v) {
      if (v.tensor.values.size() != 1) throw Error(at + ": list index is not a scalar");
      const int64_t i = tf_to_int(v.tensor.values[0]);
      if (i < 0) throw Error(at + ": negative list index");
      return static_cast<size_t>(i);
    };
    if (op == "Const") {
      auto a = n.attr().find("value");
      if (a == n.attr().end()) throw Error(at + ": Const without value");
      LoopVar v;
      v.tensor = tf_tensor_from_proto(a->second.tensor(), at);
      out.push_back(v);
    } else if (op == "NoOp") {
    } else if (op == "ReadVariableOp" || op == "Identity" || op == "StopGradient") {
      LoopVar v = ins.at(0);
      v.resource = false;
      out.push_back(v);
    } else if (op == "TensorListGetItem") {
      const size_t i = index_of(ins.at(1));
      if (i >= ins[0].items.size()) throw Error(at + ": list index " + std::to_string(i) + " out of range");
      LoopVar v;
      v.tensor = ins[0].items[i];
      out.push_back(v);
    } else if (op == "TensorListSetItem") {
      LoopVar v = ins.at(0);
      const size_t i = index_of(ins.at(1));
      if (i >= v.items.size()) throw Error(at + ": list index " + std::to_string(i) + " out of range");
      v.items[i] = ins.at(2).tensor;
      out.push_back(v);
    } else {
      std::vector<TfTensor> t;
      for (const LoopVar& v : ins) {
        if (v.role == LoopVar::Role::Input || v.role == LoopVar::Role::Output) throw Error(at + ": op on a TensorList is not supported");
        t.push_back(v.tensor);
      }
      for (TfTensor& r : eval_tf_op(n, t, at)) {
        LoopVar v;
        v.tensor = std::move(r);
        out.push_back(std::move(v));
      }
    }
    --depth;
    return done[n.name()] = std::move(out);
  }
};

}  // namespace

std::vector<LoopVar> run_loop_body(const tensorflow::FunctionDef& body, const std::vector<LoopVar>& vars, const std::string& where) {
  if (body.signature().input_arg_size() != static_cast<int>(vars.size()) || body.signature().output_arg_size() != static_cast<int>(vars.size())) {
    throw Error(where + ": loop body '" + body.signature().name() + "' does not take and return the " + std::to_string(vars.size()) + " loop variables");
  }
  Interp it{body, where, {}, {}, vars, {}, 0};
  for (const auto& n : body.node_def()) it.nodes[n.name()] = &n;
  for (int i = 0; i < body.signature().input_arg_size(); ++i) it.args[body.signature().input_arg(i).name()] = i;
  std::vector<LoopVar> out;
  for (int i = 0; i < body.signature().output_arg_size(); ++i) {
    auto r = body.ret().find(body.signature().output_arg(i).name());
    if (r == body.ret().end()) throw Error(where + ": loop body output " + std::to_string(i) + " has no return value");
    LoopVar v = it.value(r->second);
    v.role = vars[static_cast<size_t>(i)].role;
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace tickinfer::formats
