// The loop-matching helpers of loop_pattern.hpp.
#include "tflite/rewrite/loop_pattern.hpp"

#include <cmath>

#include <algorithm>
#include <cstring>

namespace tickinfer::tfl::loop {

namespace {

// The operands the matchers read of each op they look for: an op with fewer (a hostile file)
// is not the op they look for.
size_t operands_read(OpCode code) {
  switch (code) {
    case OpCode::StridedSlice: return 4;
    case OpCode::DynamicUpdateSlice: case OpCode::SplitV: return 3;
    case OpCode::Add: case OpCode::Sub: case OpCode::Mul: case OpCode::Less: case OpCode::LogicalAnd:
    case OpCode::Split: case OpCode::Gather: case OpCode::FullyConnected: return 2;
    default: return 1;
  }
}

}  // namespace

const Op* BodyGraph::made(int t, OpCode code) const {
  auto it = producer.find(t);
  if (it == producer.end()) return nullptr;
  const Op* op = it->second;
  if (op->code != code || op->options.activation != FusedActivation::None || op->inputs.size() < operands_read(code)) {
    return nullptr;
  }
  for (size_t k = 0; k < operands_read(code); ++k)
    if (op->inputs[k] < 0 && !(code == OpCode::FullyConnected && k >= 2)) return nullptr;
  return op;
}

bool BodyGraph::scalar_int(int t, int32_t* v) const {
  if (t < 0) return false;
  const Tensor& x = tensor(t);
  if (!x.is_constant() || x.type != DType::I32 || x.data.size() != 4) return false;
  std::memcpy(v, x.data.data(), 4);
  return true;
}

bool BodyGraph::scalar_float(int t, float* v) const {
  if (t < 0) return false;
  const Tensor& x = tensor(t);
  if (!x.is_constant() || x.type != DType::F32 || x.data.size() != 4 || !x.quant.empty()) return false;
  std::memcpy(v, x.data.data(), 4);
  return true;
}

bool BodyGraph::float_const(int t, const Shape& shape) const {
  if (t < 0) return false;
  const Tensor& x = tensor(t);
  return x.is_constant() && x.type == DType::F32 && x.shape == shape && x.quant.empty();
}

Filter filter_kind(const BodyGraph& g, int t, const Shape& shape) {
  if (t < 0) return Filter::None;
  if (g.float_const(t, shape)) return Filter::Float;
  const Tensor& w = g.tensor(t);
  if (!w.is_constant() || w.type != DType::I8 || w.shape != shape || w.quant.empty() || w.sparse_in_file) {
    return Filter::None;
  }
  if (w.quant.per_axis() && (w.quant.axis != 0 || static_cast<int>(w.quant.scale.size()) != shape[0])) return Filter::None;
  for (int64_t zp : w.quant.zero_point)
    if (zp != 0) return Filter::None;
  for (float sc : w.quant.scale)
    if (!(sc > 0.0f) || !std::isfinite(sc)) return Filter::None;
  return Filter::Int8;
}

BodyGraph graph_of(const Program& p, const std::vector<Op>& ops) {
  BodyGraph g{p, {}};
  for (const Op& op : ops)
    for (int t : op.outputs) g.producer[t] = &op;
  return g;
}

int other(const Op* op, int t) {
  if (!op || op->inputs.size() != 2) return -1;
  return op->inputs[0] == t ? op->inputs[1] : op->inputs[1] == t ? op->inputs[0] : -1;
}

bool counter_step(const BodyGraph& g, int out, int in) {
  const Op* add = g.made(out, OpCode::Add);
  int32_t one = 0;
  const int o = other(add, in);
  return o >= 0 && g.scalar_int(o, &one) && one == 1;
}

bool match_cond(const Program& p, const Subgraph& cond, int T) {
  if (cond.outputs.size() != 1 || cond.inputs.size() < 2) return false;
  const BodyGraph g = graph_of(p, cond.ops);
  const Op* both = g.made(cond.outputs[0], OpCode::LogicalAnd);
  std::vector<int> tests;
  if (both && both->inputs.size() == 2) {
    tests = both->inputs;
  } else if (g.made(cond.outputs[0], OpCode::Less)) {
    tests = {cond.outputs[0]};  // tf_keras: t < K alone
  } else {
    return false;
  }
  int limit = 1 << 30;
  bool seen[2] = {false, false};
  for (int t : tests) {
    const Op* less = g.made(t, OpCode::Less);
    int32_t k = 0;
    if (!less || less->inputs.size() != 2 || !g.scalar_int(less->inputs[1], &k)) return false;
    const int var = less->inputs[0] == cond.inputs[0] ? 0 : less->inputs[0] == cond.inputs[1] ? 1 : -1;
    if (var < 0 || seen[var]) return false;
    seen[var] = true;
    limit = std::min(limit, k);
  }
  return limit == T;
}

WhileParts while_parts(const Program& p, const Op& w, size_t n) {
  if (w.code != OpCode::While || w.inputs.size() != n || w.outputs.size() != n || n < 2) return {};
  for (int t : w.inputs)
    if (t < 0) return {};
  const Subgraph* cond = p.subgraph(w.options.cond_subgraph);
  const Subgraph* body = p.subgraph(w.options.body_subgraph);
  if (!cond || !body || body->inputs.size() != n || body->outputs.size() != n) return {};
  const BodyGraph main{p, {}};
  for (size_t k = 0; k < 2; ++k) {
    int32_t zero = 1;
    if (!main.scalar_int(w.inputs[k], &zero) || zero != 0) return {};
  }
  return {cond, body};
}

bool match_buffer(const BodyGraph& g, const Subgraph& body, int T, int H, bool* sequences) {
  const int out = body.outputs[2];
  if (const Op* r = g.made(out, OpCode::Reshape)) {
    *sequences = false;
    return r->inputs[0] == body.outputs[3] && g.tensor(out).shape == Shape{1, 1, H};
  }
  const Op* dus = g.made(out, OpCode::DynamicUpdateSlice);
  if (!dus || dus->inputs[0] != body.inputs[2] || g.tensor(out).shape != Shape{T, 1, H}) return false;
  const Op* r = g.made(dus->inputs[1], OpCode::Reshape);
  if (!r || r->inputs[0] != body.outputs[3]) return false;
  // The start operand is [t, -1, -1] (program_list_write.cpp checked that shape of it).
  const Op* cat = g.made(dus->inputs[2], OpCode::Concatenation);
  const Op* idx = cat ? g.made(cat->inputs[0], OpCode::Reshape) : nullptr;
  if (!idx || idx->inputs[0] != body.inputs[1]) return false;
  *sequences = true;
  return true;
}

int new_activation(Program& p, const std::string& name, Shape shape) {
  Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  p.tensors.push_back(std::move(t));
  return static_cast<int>(p.tensors.size() - 1);
}

void attach_lowered(Program& p, Op& w, Op fused) {
  Subgraph sg;
  sg.name = fused.label;
  sg.ops.push_back(std::move(fused));
  p.subgraphs.push_back(std::move(sg));
  w.options.lowered_subgraph = static_cast<int>(p.subgraphs.size());
}

}  // namespace tickinfer::tfl::loop
