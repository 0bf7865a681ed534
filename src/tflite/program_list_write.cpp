// The converter's "TensorList set item" inside a recurrent loop body (return_sequences=True):
//   head = SLICE(buf, [0, 0, ...], CONCATENATION(RESHAPE(t), [-1, -1, ...]))     buf[:t]
//   tail = SLICE(buf, CONCATENATION(RESHAPE(t + 1), [0, 0, ...]), [-1, -1, ...]) buf[t+1:]
//   out  = CONCATENATION(head, item, tail) along axis 0                          buf with row t = item
// head and tail change shape every iteration (their shapes in the file are placeholders), so
// the CONCATENATION is rewritten into DYNAMIC_UPDATE_SLICE(buf, item, head's size operand
// [t, -1, ...]), whose start indices clamp the -1s to 0. head and tail are then read by no op.
#include <cstring>
#include <map>

#include "tflite/rewrite/program_rewrite.hpp"

namespace tickinfer::tfl {

namespace {

using Producers = std::map<int, const Op*>;

const Op* producer(const Producers& by, int t, OpCode code) {
  auto it = by.find(t);
  return it != by.end() && it->second->code == code ? it->second : nullptr;
}

bool constant_all(const Program& p, int t, int32_t value) {
  const Tensor& x = p.tensors[static_cast<size_t>(t)];
  if (!x.is_constant() || x.type != DType::I32) return false;
  for (size_t i = 0; i < x.data.size() / 4; ++i) {
    int32_t v;
    std::memcpy(&v, x.data.data() + 4 * i, 4);
    if (v != value) return false;
  }
  return true;
}

// CONCATENATION(RESHAPE(scalar), const filled with `fill`) -> the scalar's tensor, or -1.
int index_vector_head(const Program& p, const Producers& by, int t, int32_t fill) {
  const Op* cat = producer(by, t, OpCode::Concatenation);
  if (!cat || cat->inputs.size() != 2 || !constant_all(p, cat->inputs[1], fill)) return -1;
  const Op* r = producer(by, cat->inputs[0], OpCode::Reshape);
  if (!r || r->inputs.empty()) return -1;
  const Tensor& s = p.tensors[static_cast<size_t>(r->inputs[0])];
  return s.type == DType::I32 && element_count(s.shape) == 1 ? r->inputs[0] : -1;
}

// t + 1 -> t, from ADD(t, 1) or ADD(1, t); else -1.
int minus_one(const Program& p, const Producers& by, int t) {
  const Op* add = producer(by, t, OpCode::Add);
  if (!add || add->inputs.size() != 2 || add->options.activation != FusedActivation::None) return -1;
  if (constant_all(p, add->inputs[1], 1)) return add->inputs[0];
  if (constant_all(p, add->inputs[0], 1)) return add->inputs[1];
  return -1;
}

bool rewrite_one(const Program& p, const Producers& by, Op& op) {
  if (op.code != OpCode::Concatenation || op.inputs.size() != 3 || op.outputs.size() != 1) return false;
  if (op.options.activation != FusedActivation::None) return false;
  const Op* head = producer(by, op.inputs[0], OpCode::Slice);
  const Op* tail = producer(by, op.inputs[2], OpCode::Slice);
  if (!head || !tail || head->inputs.size() != 3 || tail->inputs.size() != 3) return false;
  const int buf = head->inputs[0];
  if (tail->inputs[0] != buf) return false;
  const Tensor& b = p.tensors[static_cast<size_t>(buf)];
  const Tensor& item = p.tensors[static_cast<size_t>(op.inputs[1])];
  const Tensor& out = p.tensors[static_cast<size_t>(op.outputs[0])];
  const int rank = static_cast<int>(b.shape.size());
  if (rank < 1 || (op.options.axis != 0 && op.options.axis != -rank) || out.shape != b.shape || out.type != b.type) return false;
  if (item.shape.size() != b.shape.size() || item.shape[0] != 1) return false;
  for (int d = 1; d < rank; ++d) {
    if (item.shape[static_cast<size_t>(d)] != b.shape[static_cast<size_t>(d)]) return false;
  }
  if (!constant_all(p, head->inputs[1], 0) || !constant_all(p, tail->inputs[2], -1)) return false;
  const int t = index_vector_head(p, by, head->inputs[2], -1);
  const int t1 = index_vector_head(p, by, tail->inputs[1], 0);
  if (t < 0 || t1 < 0 || minus_one(p, by, t1) != t) return false;
  const int start = head->inputs[2];
  op.code = OpCode::DynamicUpdateSlice;
  op.inputs = {buf, op.inputs[1], start};
  op.options = OpOptions{};
  return true;
}

}  // namespace

int rewrite_tensor_list_writes(Program& p) {
  Producers by;
  auto index = [&](const std::vector<Op>& ops) {
    for (const Op& op : ops)
      for (int t : op.outputs) by[t] = &op;
  };
  index(p.ops);
  for (const Subgraph& sg : p.subgraphs) index(sg.ops);
  int n = 0;
  auto pass = [&](std::vector<Op>& ops) {
    for (Op& op : ops) n += rewrite_one(p, by, op) ? 1 : 0;
  };
  pass(p.ops);
  for (Subgraph& sg : p.subgraphs) pass(sg.ops);
  return n;
}

}  // namespace tickinfer::tfl
