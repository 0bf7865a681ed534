// PrepareContext's operand access and error reporting: every prepare-time failure names the op.
#include <string>

#include "tflite/prepared_op.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::tfl {

std::string PrepareContext::where() const {
  // The op's index in the program: ops are stored by value, so find it by address.
  long index = -1;
  std::string s;
  if (!program.ops.empty() && &op >= program.ops.data() && &op < program.ops.data() + program.ops.size()) {
    index = static_cast<long>(&op - program.ops.data());
  }
  for (size_t g = 0; index < 0 && g < program.subgraphs.size(); ++g) {
    const std::vector<Op>& ops = program.subgraphs[g].ops;
    if (!ops.empty() && &op >= ops.data() && &op < ops.data() + ops.size()) {
      index = static_cast<long>(&op - ops.data());
      s = "subgraph " + std::to_string(g + 1) + " ";
    }
  }
  s += "op ";
  s += index >= 0 ? std::to_string(index) : std::string("?");
  s += " (";
  s += op_name(op.code);
  if (!op.label.empty()) s += " '" + op.label + "'";
  s += "): ";
  return s;
}

void PrepareContext::fail(const std::string& what) const { throw Error(where() + what); }

const Tensor& PrepareContext::input(size_t i) const {
  if (!has_input(i)) fail("input " + std::to_string(i) + " is missing");
  const int t = op.inputs[i];
  if (static_cast<size_t>(t) >= program.tensors.size()) {
    fail("input " + std::to_string(i) + " refers to tensor " + std::to_string(t) + ", which does not exist");
  }
  return program.tensors[static_cast<size_t>(t)];
}

const Tensor& PrepareContext::output(size_t i) const {
  if (i >= op.outputs.size() || op.outputs[i] < 0) fail("output " + std::to_string(i) + " is missing");
  const int t = op.outputs[i];
  if (static_cast<size_t>(t) >= program.tensors.size()) {
    fail("output " + std::to_string(i) + " refers to tensor " + std::to_string(t) + ", which does not exist");
  }
  return program.tensors[static_cast<size_t>(t)];
}

}  // namespace tickinfer::tfl
