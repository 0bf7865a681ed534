// The lift of tf2onnx's Keras GRU and LSTM loops onto the engine's GRU and LSTM.
//
// tf2onnx rewrites most Keras recurrent layers into the ONNX GRU / LSTM ops, but not a Keras 3
// GRU, a tf_keras GRU without reset_after, or an LSTM converted at a fixed batch of 1 (its
// rewriter's pattern needs the batch axis): those stay the converted tf.while, a Loop whose body
// is one cell step. The body is matched from the new state back, every gate argument read as a
// linear form of x_t and h (onnx_loop_cell.hpp):
//   GRU:  h' = z * h + (1 - z) * hh   (operands of Add and Mul in either order)
//         z = Sigmoid(x Wz + h Uz + b), r = Sigmoid(x Wr + h Ur + b)
//         reset_after:  hh = Tanh(x Wh + b + r * (h Uh + b_rec))
//         reset_before: hh = Tanh(x Wh + (r * h) Uh + b)
//   LSTM: h' = o * Tanh(c'),  c' = f * c + i * g,  i, f, o = Sigmoid(...), g = Tanh(...)
// Which gate is which is read from where each value is used, never from the converter's order.
// The loop must run once per time step reading step t at iteration t
// (LoopBody::check_runs_once_per_step), from zero states or (an LSTM) from computed h and c. Its
// scan output is the layer's sequence, its carried h the last step, its carried c the final cell
// state (read, or started from computed states: one return_state node, each output a SliceRows).
#include <algorithm>
#include <string>

#include "formats/onnx/onnx_loop_cell.hpp"

namespace tickinfer::formats::onnx_import {

namespace {

struct Gate {
  Linear x, h;  // x: W and the bias; h: U (reset_after's candidate: and the recurrent bias)
};

// The input of an activation the match found: a malformed file's node may have none, or more.
const std::string& only_input(const LoopBody& body, const onnx::NodeProto& n) {
  if (n.input_size() != 1) {
    body.refuse(n.op_type() + " '" + n.name() + "' has " + std::to_string(n.input_size()) + " inputs, not 1");
  }
  return n.input(0);
}

class CellMatch {
 public:
  explicit CellMatch(LoopBody& body) : b_(body), r_(body) {}

  CellReader& reader() { return r_; }

  // Sigmoid / Tanh (`act`) of a linear form of x and h, split into its x part (with the bias)
  // and its h part.
  Gate activated(const std::string& name, const char* act, const std::string& what) {
    const onnx::NodeProto* p = b_.made(name, act);
    if (!p) b_.refuse(what + "'s activation is " + r_.op_of(name) + ", not " + act + " (the only one the lift reads)");
    return split(r_.linear(only_input(b_, *p)), what);
  }

  Gate split(const Linear& l, const std::string& what) {
    if (!l.has(kX) || !l.has(kH) || l.has(kResetH)) b_.refuse(what + " is not an x projection plus an h projection");
    Gate g;
    g.x.cols = g.h.cols = l.cols;
    g.x.w[kX] = l.w[kX], g.x.rows[kX] = l.rows[kX], g.x.b = l.b;
    g.h.w[kH] = l.w[kH], g.h.rows[kH] = l.rows[kH], g.h.b.assign(static_cast<size_t>(l.cols), 0.0f);
    return g;
  }

  // The operand of a state input among `ops` (-1: none), setting the reader's h when first seen.
  int state_operand(const std::array<std::string, 2>& ops) {
    for (int k = 0; k < 2; ++k) {
      if (b_.input_index(ops[k]) >= 2) return k;
    }
    return -1;
  }

 private:
  LoopBody& b_;
  CellReader r_;
};

// Gate blocks of the engine's Keras layout: block k of W ([F, G*H]), U ([H, G*H]) and b.
struct Weights {
  int F = 0, H = 0, G = 0;
  std::vector<float> kernel, recurrent, bias, recurrent_bias;
  Weights(int f, int h, int g)
      : F(f), H(h), G(g), kernel(static_cast<size_t>(f) * g * h), recurrent(static_cast<size_t>(h) * g * h),
        bias(static_cast<size_t>(g) * h), recurrent_bias(static_cast<size_t>(g) * h) {}
  void place(int k, const Gate& gate, LoopBody& b) {
    const Linear& x = gate.x;
    const Linear& hh = gate.h;
    const Source hs = hh.has(kResetH) ? kResetH : kH;
    if (x.rows[kX] != F || x.cols != H || hh.rows[hs] != H || hh.cols != H) {
      b.refuse("gate " + std::to_string(k) + " is not " + std::to_string(F) + " x " + std::to_string(H) + " and " +
               std::to_string(H) + " x " + std::to_string(H));
    }
    for (int i = 0; i < F; ++i) {
      std::copy_n(x.w[kX].begin() + static_cast<size_t>(i) * H, H, kernel.begin() + static_cast<size_t>(i) * G * H + k * H);
    }
    for (int i = 0; i < H; ++i) {
      std::copy_n(hh.w[hs].begin() + static_cast<size_t>(i) * H, H, recurrent.begin() + static_cast<size_t>(i) * G * H + k * H);
    }
    std::copy(x.b.begin(), x.b.end(), bias.begin() + k * H);
    std::copy(hh.b.begin(), hh.b.end(), recurrent_bias.begin() + k * H);
  }
};

struct Matched {
  Node node;
  std::string h_state, c_state;  // body names of the carried states (c: LSTM only)
  std::string c_new;
};

Matched match_gru(LoopBody& body, CellMatch& m, const std::string& h_new) {
  CellReader& r = m.reader();
  // h' = z * h + (1 - z) * hh: the product holding a Sub is (1 - z) * hh.
  const auto sum = r.operands(h_new, "Add", "the new state");
  int with_sub = -1;
  for (int k = 0; k < 2 && with_sub < 0; ++k) {
    if (!body.made(sum[k], "Mul") || !body.made(sum[1 - k], "Mul")) continue;
    const auto ops = r.operands(sum[k], "Mul", "the new state");
    if (body.made(ops[0], "Sub") || body.made(ops[1], "Sub")) with_sub = k;
  }
  if (with_sub < 0) body.refuse("the new state is not z * h + (1 - z) * candidate");
  const auto zh = r.operands(sum[1 - with_sub], "Mul", "the new state");
  const int hk = m.state_operand(zh);
  if (hk < 0) body.refuse("the new state is not z * h + (1 - z) * candidate");
  r.h_name = zh[hk];
  const std::string z = zh[1 - hk];
  const auto rest = r.operands(sum[with_sub], "Mul", "the new state");
  int one_minus = -1;
  for (int k = 0; k < 2; ++k) {
    const onnx::NodeProto* s = body.made(rest[k], "Sub");
    if (s && s->input_size() == 2 && r.is_one(s->input(0)) && body.skip_identity(s->input(1)) == z) one_minus = k;
  }
  if (one_minus < 0) body.refuse("the new state is not z * h + (1 - z) * candidate");
  const std::string candidate = rest[1 - one_minus];

  // The candidate: Tanh(x part + r * h part) or Tanh(x part + (r * h) U).
  const onnx::NodeProto* tanh = body.made(candidate, "Tanh");
  if (!tanh) body.refuse("the candidate's activation is " + r.op_of(candidate) + ", not Tanh (the only one the lift reads)");
  const auto c_ops = r.operands(only_input(body, *tanh), "Add", "the candidate");
  Gate hh;
  std::string reset;
  bool reset_after = true;
  for (int k = 0; k < 2 && reset.empty(); ++k) {
    const std::string& other = c_ops[1 - k];
    if (body.made(other, "Mul")) {  // r * (columns of h U + b_rec): r is the operand that is not such a form
      const auto ops = r.operands(other, "Mul", "the candidate");
      for (int j = 0; j < 2 && reset.empty(); ++j) {
        if (!r.is_linear_op(ops[1 - j]) || r.is_linear_op(ops[j])) continue;
        const Linear rec = r.linear(ops[1 - j]);
        if (!rec.has(kH) || rec.has(kX) || rec.has(kResetH)) body.refuse("the reset gate multiplies something other than h's projection");
        hh.h = rec;
        reset = ops[j];
      }
    } else if (r.is_linear_op(other)) {
      const Linear rh = r.linear(other);
      if (!rh.has(kResetH)) continue;
      if (rh.has(kX) || rh.has(kH)) body.refuse("the candidate mixes r * h with other projections");
      hh.h = rh;
      hh.h.b.assign(static_cast<size_t>(rh.cols), 0.0f);
      reset = rh.reset;
      reset_after = false;
      hh.x.b = rh.b;  // a bias beside (r * h) U sits inside the activation like the input bias
    }
    if (!reset.empty()) {
      const Linear x = r.linear(c_ops[k]);
      if (!x.has(kX) || x.has(kH) || x.has(kResetH)) body.refuse("the candidate's other term is not an x projection");
      std::vector<float> extra = hh.x.b;
      hh.x = x;
      for (size_t j = 0; j < extra.size() && j < hh.x.b.size(); ++j) hh.x.b[j] += extra[j];
    }
  }
  if (reset.empty()) body.refuse("the candidate is not Tanh(x projection + reset gate term)");
  const Gate zg = m.activated(z, "Sigmoid", "the update gate"), rg = m.activated(reset, "Sigmoid", "the reset gate");

  Matched out;
  out.h_state = r.h_name;
  const int F = zg.x.rows[kX], H = zg.h.rows[kH];
  Weights w(F, H, 3);
  w.place(0, zg, body), w.place(1, rg, body), w.place(2, hh, body);
  Node& n = out.node;
  n.kind = OpKind::GRU;
  n.reset_after = reset_after;
  if (reset_after) {  // bias (2, 3H): input, then recurrent (only the candidate's matters apart)
    w.bias.insert(w.bias.end(), w.recurrent_bias.begin(), w.recurrent_bias.end());
    n.weights = {{{F, 3 * H}, std::move(w.kernel)}, {{H, 3 * H}, std::move(w.recurrent)}, {{2, 3 * H}, std::move(w.bias)}};
  } else {
    n.weights = {{{F, 3 * H}, std::move(w.kernel)}, {{H, 3 * H}, std::move(w.recurrent)}, {{3 * H}, std::move(w.bias)}};
  }
  n.units = H;
  return out;
}

Matched match_lstm(LoopBody& body, CellMatch& m, const std::string& h_new) {
  CellReader& r = m.reader();
  // h' = o * Tanh(c').
  const auto prod = r.operands(h_new, "Mul", "the new state");
  const int tk = body.made(prod[0], "Tanh") && !body.made(prod[1], "Tanh") ? 0 : 1;
  const onnx::NodeProto* tanh_c = body.made(prod[tk], "Tanh");
  if (!tanh_c) body.refuse("the new state is not o * Tanh(c)");
  const std::string c_new = body.skip_identity(only_input(body, *tanh_c)), o = prod[1 - tk];
  // c' = f * c + i * g: the product holding a carried state is f * c; of i * g, g is the Tanh.
  const auto sum = r.operands(c_new, "Add", "the new cell state");
  int fk = -1, ck = -1;
  for (int k = 0; k < 2 && fk < 0; ++k) {
    if (!body.made(sum[k], "Mul")) continue;
    const int s = m.state_operand(r.operands(sum[k], "Mul", "the new cell state"));
    if (s >= 0) fk = k, ck = s;
  }
  if (fk < 0) body.refuse("the new cell state is not f * c + i * g");
  const auto fc = r.operands(sum[fk], "Mul", "the new cell state");
  const auto ig = r.operands(sum[1 - fk], "Mul", "the new cell state");
  const int gk = body.made(ig[0], "Tanh") && body.made(ig[1], "Sigmoid") ? 0 : 1;
  Matched out;
  out.c_state = fc[ck];
  out.c_new = c_new;
  // h: the carried state the gates' projections read (the reader takes the first it sees).
  r.h_name.clear();
  const Gate gi = m.activated(ig[1 - gk], "Sigmoid", "the input gate");
  if (r.h_name.empty() || r.h_name == out.c_state) body.refuse("the gates do not read a hidden state apart from the cell state");
  out.h_state = r.h_name;
  const Gate gf = m.activated(fc[1 - ck], "Sigmoid", "the forget gate");
  const Gate gg = m.activated(ig[gk], "Tanh", "the cell candidate");
  const Gate go = m.activated(o, "Sigmoid", "the output gate");
  const int F = gi.x.rows[kX], H = gi.h.rows[kH];
  Weights w(F, H, 4);
  w.place(0, gi, body), w.place(1, gf, body), w.place(2, gg, body), w.place(3, go, body);
  for (size_t j = 0; j < w.bias.size(); ++j) w.bias[j] += w.recurrent_bias[j];  // both inside the activations
  Node& n = out.node;
  n.kind = OpKind::LSTM;
  n.units = H;
  n.weights = {{{F, 4 * H}, std::move(w.kernel)}, {{H, 4 * H}, std::move(w.recurrent)}, {{4 * H}, std::move(w.bias)}};
  return out;
}

// Body output k + 1 (carried value k) resolved, or "" past the end.
std::string carried_out(const LoopBody& body, int k) {
  return k >= 0 && k + 1 < body.g.output_size() ? body.skip_identity(body.g.output(k + 1).name()) : std::string();
}

}  // namespace

Value lower_rnn_loop(Lowerer& L, const onnx::NodeProto& n, int out) {
  LoopBody body(L, n);
  if (body.g.output_size() <= body.carried + 1) body.refuse("it has no scan output (the sequence of states)");
  const std::string h_new = body.skip_identity(body.g.output(body.carried + 1).name());
  CellMatch m(body);
  Matched got;
  if (body.made(h_new, "Add")) {
    got = match_gru(body, m, h_new);
  } else if (body.made(h_new, "Mul")) {
    got = match_lstm(body, m, h_new);
  } else {
    body.refuse("the new state is " + m.reader().op_of(h_new) + ", neither a GRU's sum nor an LSTM's product");
  }
  const int k_h = body.input_index(got.h_state) - 2, k_c = got.c_state.empty() ? -1 : body.input_index(got.c_state) - 2;
  if (carried_out(body, k_h) != h_new) body.refuse("the carried state is not the new state");
  if (k_c >= 0 && carried_out(body, k_c) != got.c_new) body.refuse("the carried cell state is not the new cell state");
  // States from zero, or (an LSTM's, both) computed: a decoder started from its encoder's state.
  auto zero_start = [&](int k) { return k >= 0 && L.has_input(n, k + 2) && known_zero(L, n.input(k + 2)); };
  const bool seeded = got.node.kind == OpKind::LSTM && !zero_start(k_h) && !zero_start(k_c);
  if (!seeded && (!zero_start(k_h) || (k_c >= 0 && !zero_start(k_c)))) body.refuse("a state does not start at zero");

  CellReader& r = m.reader();
  const Value& xv = L.value(r.x_name);
  if (xv.is_const) body.refuse("the sequence is a constant");
  L.require_unpadded(n, xv);
  const int F = got.node.weights[0].shape[0];
  const std::vector<int> xd = L.dims(xv);
  if (xd.size() != 3 || xd[2] != F) body.refuse("the sequence is not [time, batch, " + std::to_string(F) + "]");
  body.check_runs_once_per_step(r.index_name, xd[0]);

  Node node = std::move(got.node);
  node.keras_class = node.kind == OpKind::GRU ? "GRU" : "LSTM";  // inspect's class; the origin names the Loop
  node.recurrent_activation.kind = ActKind::Sigmoid;
  node.activation.kind = ActKind::Tanh;
  const Value x = rnn_sequence(L, n, xv, /*layout=*/0, F);
  const bool reads_c = k_c >= 0 && L.uses(n.output(k_c)) > 0;
  if (seeded || reads_c) {
    // One LSTM node with return_state for every output of the loop (each a SliceRows of it), so
    // the recurrence runs once.
    int full = L.shared_node(n);
    if (full < 0) {
      std::vector<int> inputs = {x.node};
      if (seeded) {
        for (int k : {k_h, k_c}) {
          const Value& s0 = L.runtime(n, k + 2);
          if (shape_size(L.eshape(s0.node)) != node.units) body.refuse("an initial state is not [1, units]");
          inputs.push_back(L.reshape(n, s0, Shape{node.units}));
        }
      }
      node.return_sequences = node.return_state = true;
      full = L.add(std::move(node), n, inputs);
      L.set_shared_node(n, full);
    }
    const bool sequence = out >= body.carried && carried_out(body, out) == h_new;
    if (!sequence && out != k_h && out != k_c) {
      L.fail(n, "output " + std::to_string(out) + " is neither the layer's sequence nor its last state");
    }
    Node rows = lstm_output_slice(sequence ? LstmOutput::Output : out == k_h ? LstmOutput::StateH : LstmOutput::StateC,
                                  /*sequences=*/true);
    rows.name = sequence ? "sequence" : out == k_h ? "state_h" : "state_c";
    Value v;
    v.node = L.add(std::move(rows), n, {full});
    v.axes = sequence ? std::vector<int>{0, kUnit, 1} : std::vector<int>{kUnit, 0};
    return v;
  }
  Value v;
  if (out >= body.carried && carried_out(body, out) == h_new) {
    node.return_sequences = true;
    v.axes = {0, kUnit, 1};
  } else if (out == k_h) {
    node.return_sequences = false;
    v.axes = {kUnit, 0};
  } else {
    L.fail(n, "output " + std::to_string(out) + " is neither the layer's sequence nor its last state");
  }
  v.node = L.add(std::move(node), n, {x.node});
  return v;
}

}  // namespace tickinfer::formats::onnx_import
