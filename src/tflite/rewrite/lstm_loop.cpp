// Recognising the converter's Keras 3 LSTM loop (a float WHILE over cond/body subgraphs) and
// lowering it onto UNIDIRECTIONAL_SEQUENCE_LSTM (tflite/rewrite/program_rewrite.hpp, lower_lstm_loops).
//
// The loop carries [step, t, buffer, h, c, x] (x time-major [T, 1, F]), or [step, t, h, c, x]
// where only the final state is read (program_rewrite.hpp, LstmLoopVars); the body, checked op
// by op from its outputs back:
//   step' = step + 1, t' = t + 1, x passed through;
//   z = FULLY_CONNECTED(GATHER(x, t), W) + RESHAPE(FULLY_CONNECTED(h, U)) + b  (the ADDs in any order)
//   [z_0 .. z_3] = SPLIT(z, 4) along axis 1
//   c' = sigmoid(z_f) * c + sigmoid(z_i) * tanh(z_g);  h' = sigmoid(z_o) * tanh(c')
//   buffer' = RESHAPE(h') (the last output only) or DYNAMIC_UPDATE_SLICE(buffer, h', t)
//   (return_sequences; rewritten so from the converter's TensorList write).
// Which split part is which gate is read from where it is used (forget multiplies c, the tanh
// one multiplies input, output multiplies tanh(c')), and W, U, b are cut into per-gate blocks
// by that. The cond must be step < K1 && t < K2 with constant K1, K2 whose minimum is T, and
// both counters must start at constant 0. Anything else leaves the loop to run op by op.
//
// W and U are both float, or both int8 (the converter's dynamic-range file: each FULLY_CONNECTED
// is then hybrid, quantizing its own input row). A hybrid loop is lowered only where its body's
// arithmetic can be kept bit for bit: the bias added last, ((FC_x + FC_h) + b), and both FCs
// quantizing their inputs alike; its fused op is flagged `keras_cell` and runs the body's ops'
// own kernels (ops/lstm/keras_cell_hybrid.cpp), not TFLite's fused hybrid LSTM, whose
// operation order differs.
#include <cmath>
#include <optional>

#include "tflite/rewrite/loop_pattern.hpp"
#include "tflite/rewrite/program_rewrite.hpp"

namespace tickinfer::tfl {

namespace {

using loop::BodyGraph;
using loop::other;

struct Match {
  LstmLoopVars v{};
  int T = 0, F = 0, H = 0;
  int w = -1, u = -1, b = -1;  // [4H, F], [4H, H], [4H]
  int slot[4] = {-1, -1, -1, -1};  // split part of gate i, f, c (g), o
  bool sequences = false;          // buffer' = all h_t
  bool hybrid = false;             // W and U int8 (dynamic range)
  bool asymmetric = false;         // hybrid: how both FCs quantize their input rows
};

using loop::Filter;
using loop::filter_kind;

// z = FC(GATHER(x, t), W) + [RESHAPE] FC(h, U) + b, as a tree of two ADDs.
bool match_gates_input(const BodyGraph& g, const Subgraph& body, int z, Match& m) {
  std::vector<int> leaves;
  const Op* top = g.made(z, OpCode::Add);
  if (!top || top->inputs.size() != 2) return false;
  bool bias_last = false;
  for (int t : top->inputs) bias_last = bias_last || g.float_const(t, {4 * m.H});
  for (int t : top->inputs) {
    const Op* inner = g.made(t, OpCode::Add);
    if (inner && inner->inputs.size() == 2 && !g.tensor(t).is_constant()) {
      leaves.insert(leaves.end(), inner->inputs.begin(), inner->inputs.end());
    } else {
      leaves.push_back(t);
    }
  }
  if (leaves.size() != 3) return false;
  Filter kind[2] = {Filter::None, Filter::None};  // of W, U
  bool asymmetric[2] = {false, false};
  for (int t : leaves) {
    if (g.float_const(t, {4 * m.H})) {
      m.b = t;
      continue;
    }
    int fc_out = t;
    if (const Op* r = g.made(t, OpCode::Reshape)) fc_out = r->inputs[0];
    const Op* fc = g.made(fc_out, OpCode::FullyConnected);
    if (!fc || (fc->inputs.size() > 2 && fc->inputs[2] >= 0)) return false;
    const int in = fc->inputs[0], filter = fc->inputs[1];
    if (in == body.inputs[static_cast<size_t>(m.v.h)]) {
      kind[1] = filter_kind(g, filter, {4 * m.H, m.H});
      asymmetric[1] = fc->options.asymmetric_quantize_inputs;
      m.u = filter;
    } else if (const Op* gather = g.made(in, OpCode::Gather)) {
      if (gather->inputs[0] != body.inputs[static_cast<size_t>(m.v.x)] || gather->inputs[1] != body.inputs[1] ||
          gather->options.axis != 0) {
        return false;
      }
      kind[0] = filter_kind(g, filter, {4 * m.H, m.F});
      asymmetric[0] = fc->options.asymmetric_quantize_inputs;
      m.w = filter;
    } else {
      return false;
    }
  }
  if (m.w < 0 || m.u < 0 || m.b < 0 || kind[0] == Filter::None || kind[0] != kind[1]) return false;
  m.hybrid = kind[0] == Filter::Int8;
  m.asymmetric = asymmetric[0];
  return !m.hybrid || (bias_last && asymmetric[0] == asymmetric[1]);
}

// The split part behind an activation of `code` producing t, or -1.
int part(const BodyGraph& g, const Op* split, int t, OpCode code) {
  const Op* act = g.made(t, code);
  if (!act) return -1;
  for (size_t k = 0; k < split->outputs.size(); ++k)
    if (split->outputs[k] == act->inputs[0]) return static_cast<int>(k);
  return -1;
}

bool match_cell(const BodyGraph& g, const Subgraph& body, Match& m) {
  const int h_new = body.outputs[static_cast<size_t>(m.v.h)], c_new = body.outputs[static_cast<size_t>(m.v.c)];
  const int c_old = body.inputs[static_cast<size_t>(m.v.c)];
  const Op* mul_h = g.made(h_new, OpCode::Mul);
  const Op* tanh_c = nullptr;
  int sig_o = -1;
  for (int k = 0; mul_h && k < 2; ++k) {
    const Op* t = g.made(mul_h->inputs[static_cast<size_t>(k)], OpCode::Tanh);
    if (t && t->inputs[0] == c_new) {
      tanh_c = t;
      sig_o = mul_h->inputs[static_cast<size_t>(1 - k)];
    }
  }
  const Op* add_c = g.made(c_new, OpCode::Add);
  if (!tanh_c || !add_c || add_c->inputs.size() != 2) return false;
  const Op* mul_f = nullptr;
  const Op* mul_i = nullptr;
  for (int t : add_c->inputs) {
    const Op* mul = g.made(t, OpCode::Mul);
    if (!mul || mul->inputs.size() != 2) return false;
    (other(mul, c_old) >= 0 ? mul_f : mul_i) = mul;
  }
  if (!mul_f || !mul_i) return false;
  const Op* sig_f_op = g.made(other(mul_f, c_old), OpCode::Logistic);
  if (!sig_f_op) return false;
  const Op* split = g.made(sig_f_op->inputs[0], OpCode::Split);
  if (!split || split->outputs.size() != 4) return false;
  int32_t axis = 0;
  if (!g.scalar_int(split->inputs[0], &axis) || (axis != 1 && axis != -1)) return false;
  m.slot[1] = part(g, split, other(mul_f, c_old), OpCode::Logistic);
  for (int k = 0; k < 2; ++k) {
    const int a = mul_i->inputs[static_cast<size_t>(k)], b = mul_i->inputs[static_cast<size_t>(1 - k)];
    if (part(g, split, a, OpCode::Logistic) >= 0 && part(g, split, b, OpCode::Tanh) >= 0) {
      m.slot[0] = part(g, split, a, OpCode::Logistic);
      m.slot[2] = part(g, split, b, OpCode::Tanh);
    }
  }
  m.slot[3] = part(g, split, sig_o, OpCode::Logistic);
  bool used[4] = {false, false, false, false};
  for (int s : m.slot) {
    if (s < 0 || used[s]) return false;
    used[s] = true;
  }
  return match_gates_input(g, body, split->inputs[1], m);
}

std::optional<Match> match_loop(const Program& p, const Op& w) {
  const size_t n = w.inputs.size() == 5 ? 5 : 6;
  const loop::WhileParts parts = loop::while_parts(p, w, n);
  if (!parts.body) return std::nullopt;
  const Subgraph& cond = *parts.cond;
  const Subgraph& body = *parts.body;
  Match m;
  m.v = lstm_loop_vars(n);
  const auto at = [](int i) { return static_cast<size_t>(i); };
  const Tensor& x = p.tensors[at(w.inputs[at(m.v.x)])];
  const Tensor& h = p.tensors[at(w.inputs[at(m.v.h)])];
  if (x.type != DType::F32 || x.shape.size() != 3 || x.shape[1] != 1 || h.type != DType::F32 || h.shape.size() != 2) {
    return std::nullopt;
  }
  m.T = x.shape[0];
  m.F = x.shape[2];
  m.H = h.shape[1];
  if (m.T < 1 || m.H < 1 || p.tensors[at(w.inputs[at(m.v.c)])].shape != h.shape || h.shape[0] != 1) return std::nullopt;
  const BodyGraph g = loop::graph_of(p, body.ops);
  if (body.outputs[at(m.v.x)] != body.inputs[at(m.v.x)] || !loop::counter_step(g, body.outputs[0], body.inputs[0]) ||
      !loop::counter_step(g, body.outputs[1], body.inputs[1]) || !loop::match_cond(p, cond, m.T) ||
      !match_cell(g, body, m) || (m.v.buffer >= 0 && !loop::match_buffer(g, body, m.T, m.H, &m.sequences))) {
    return std::nullopt;
  }
  return m;
}

// Rows [block * rows, (block + 1) * rows) of a constant [*, cols] float or int8 matrix, as a new
// constant; an int8 one keeps its scale, or its rows' scales.
int gate_block(Program& p, int src, int block, int rows, int cols, const std::string& name) {
  const Tensor& from = p.tensors[static_cast<size_t>(src)];
  Tensor t;
  t.name = name;
  t.type = from.type;
  t.shape = cols > 0 ? Shape{rows, cols} : Shape{rows};
  const size_t row_bytes = static_cast<size_t>(cols > 0 ? cols : 1) * dtype_size(from.type);
  const auto& d = from.data;
  t.data.assign(d.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(block) * rows * row_bytes),
                d.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(block + 1) * rows * row_bytes));
  if (from.quant.per_axis()) {
    const auto first = static_cast<std::ptrdiff_t>(block) * rows;
    t.quant.scale.assign(from.quant.scale.begin() + first, from.quant.scale.begin() + first + rows);
    t.quant.zero_point.assign(static_cast<size_t>(rows), 0);
  } else {
    t.quant = from.quant;
  }
  p.tensors.push_back(std::move(t));
  return static_cast<int>(p.tensors.size() - 1);
}

void lower(Program& p, Op& w, const Match& m) {
  const std::string base = w.label.empty() ? std::string("lstm loop") : w.label;
  Op lstm;
  lstm.code = OpCode::SequenceLstm;
  lstm.label = base + " (lowered LSTM loop)";
  lstm.inputs.assign(24, -1);
  lstm.inputs[0] = w.inputs[static_cast<size_t>(m.v.x)];
  static const char* const kGate[] = {"input", "forget", "cell", "output"};
  for (int g = 0; g < 4; ++g) {
    const std::string n = base + "/" + kGate[g];
    lstm.inputs[static_cast<size_t>(1 + g)] = gate_block(p, m.w, m.slot[g], m.H, m.F, n + "_kernel");
    lstm.inputs[static_cast<size_t>(5 + g)] = gate_block(p, m.u, m.slot[g], m.H, m.H, n + "_recurrent_kernel");
    lstm.inputs[static_cast<size_t>(12 + g)] = gate_block(p, m.b, m.slot[g], m.H, 0, n + "_bias");
  }
  lstm.inputs[18] = loop::new_activation(p, base + "/h", {1, m.H});
  lstm.inputs[19] = loop::new_activation(p, base + "/c", {1, m.H});
  lstm.outputs = {m.sequences ? w.outputs[static_cast<size_t>(m.v.buffer)] : loop::new_activation(p, base + "/sequence", {m.T, 1, m.H})};
  lstm.options.activation = FusedActivation::Tanh;
  lstm.options.time_major = true;
  lstm.options.keras_cell = m.hybrid;
  lstm.options.asymmetric_quantize_inputs = m.asymmetric;
  loop::attach_lowered(p, w, std::move(lstm));
}

}  // namespace

int lower_lstm_loops(Program& p) {
  return loop::lower_whiles(p, [](Program& q, Op& w) {
    const auto m = match_loop(q, w);
    if (m) lower(q, w, *m);
    return m.has_value();
  });
}

}  // namespace tickinfer::tfl
