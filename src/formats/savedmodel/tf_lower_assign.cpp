// A variable overwritten by a constant before it is read: tfmot's PruneLowMagnitude wrapper,
// exported without strip_pruning, runs `kernel.assign(kernel * mask)` at the start of every
// call and reads the kernel again under a control dependency on that assignment. Folding the
// assignment into the value of that read gives the masked kernel as a constant, so the Graph has
// a plain Dense and no wrapper work is left at run time.
#include <algorithm>

#include "formats/savedmodel/tf_frame.hpp"
#include "formats/savedmodel/tf_lowering.hpp"
#include "tensorflow/core/framework/graph.pb.h"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

constexpr int kMaxControlHops = 8;  // NoOp "group_deps" chains between an assignment and a read

// The data input `index` of `def` (control inputs "^x" skipped); "" if absent.
std::string data_input(const tensorflow::NodeDef& def, int index) {
  int k = 0;
  for (const std::string& in : def.input()) {
    if (in.empty() || in[0] == '^') continue;
    if (k++ == index) return in;
  }
  return {};
}

// The AssignVariableOp nodes that `def` depends on through control inputs (and NoOps between).
void control_assignments(const TfFrame& frame, const tensorflow::NodeDef& def, int hops,
                         std::vector<const tensorflow::NodeDef*>& out) {
  if (hops > kMaxControlHops) return;
  for (const std::string& in : def.input()) {
    if (in.empty() || in[0] != '^') continue;
    auto it = frame.nodes.find(in.substr(1));
    if (it == frame.nodes.end()) continue;
    const tensorflow::NodeDef& dep = *it->second;
    if (dep.op() == "AssignVariableOp") {
      if (std::find(out.begin(), out.end(), &dep) == out.end()) out.push_back(&dep);
    } else if (dep.op() == "NoOp") {
      control_assignments(frame, dep, hops + 1, out);
    }
  }
}

// "model/prune_low_magnitude_d1/AssignVariableOp" -> "prune_low_magnitude_d1"; "" otherwise.
std::string pruning_scope(const std::string& node_name) {
  const size_t at = node_name.find("prune_low_magnitude");
  if (at == std::string::npos) return {};
  return node_name.substr(at, node_name.find('/', at) - at);
}

}  // namespace

void TfLowering::assigned_before_read(const Op& read, TfTensor& value) {
  const std::string resource = data_input(read.def, 0);
  std::vector<const tensorflow::NodeDef*> assigns;
  control_assignments(read.frame, read.def, 0, assigns);
  for (const tensorflow::NodeDef* assign : assigns) {
    if (data_input(*assign, 0) != resource) continue;
    const std::string where = read.where + ": after AssignVariableOp '" + assign->name() + "'";
    const TfValue v = value_of(read.frame, data_input(*assign, 1), read.depth + 1);
    if (v.kind != TfValue::Kind::Const) {
      throw Error(where + ": the variable is assigned a computed value before it is read (only constant assignments, "
                  "such as a pruning wrapper's kernel * mask, are folded)");
    }
    if (v.tensor.shape != value.shape || v.tensor.dtype != value.dtype) {
      throw Error(where + ": the assigned value " + tf_shape_str(v.tensor.shape) + " does not match the variable " +
                  tf_shape_str(value.shape));
    }
    value = v.tensor;
    const std::string scope = pruning_scope(assign->name());
    if (scope.empty() || !pruned_layers_.insert(scope).second) continue;
    std::string list;
    for (const std::string& s : pruned_layers_) list += (list.empty() ? "'" : ", '") + s + "'";
    const std::string warning = "the SavedModel was saved with tfmot PruneLowMagnitude wrappers still in (" +
                                std::to_string(pruned_layers_.size()) + " layers: " + list +
                                "): tfmot.sparsity.keras.strip_pruning was skipped before saving; each wrapper's "
                                "kernel * mask assignment was folded into a constant kernel (its mask update is never run)";
    if (pruned_layers_.size() == 1) {
      graph_.warnings.push_back(warning);
    } else {
      for (std::string& w : graph_.warnings) {
        if (w.rfind("the SavedModel was saved with tfmot", 0) == 0) w = warning;
      }
    }
  }
}

}  // namespace tickinfer::formats
