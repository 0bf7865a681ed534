// The lift of tf2onnx's Keras GRU loop onto the engine's GRU.
//
// tf2onnx rewrites a tf_keras GRU with reset_after into the ONNX GRU op, but a Keras 3 GRU (and a
// tf_keras one without reset_after) stays the converted tf.while: a Loop whose body is one GRU
// cell step. The body is matched from the new state back:
//   h' = z * h + (1 - z) * hh                        (operands of Add and Mul in either order)
//   z = Sigmoid(xz + hz), r = Sigmoid(xr + hr)
//   reset_after:  hh = Tanh(xh + r * hh_rec)
//   reset_before: hh = Tanh(xh + (r * h) @ U_h [+ b])
// where every x* is a column range of Gather(X, t) @ W [+ b] and every h* one of h @ U [+ b]; the
// ranges come from the Split / Slice nodes the converter wrote, and which columns feed which gate
// is read from where each range is used, never assumed from the converter's order. The loop must
// run once per time step reading step t at iteration t (LoopBody::check_runs_once_per_step) from
// a zero state. The loop's scan output is the GRU's sequence, its carried h the last step.
#include <algorithm>
#include <array>

#include "formats/onnx/onnx_loop_body.hpp"

namespace tickinfer::formats::onnx_import {

namespace {

enum class Source { X, H, ResetH };

// Columns of src @ w + b: w is [rows, cols] row-major, b [cols].
struct Projection {
  Source src = Source::X;
  int rows = 0, cols = 0;
  std::vector<float> w, b;
  std::string reset;  // ResetH: the reset gate r of r * h
};

Projection columns(const Projection& p, int c0, int c1) {
  Projection r = p;
  r.cols = c1 - c0;
  r.w.clear();
  for (int i = 0; i < p.rows; ++i) {
    r.w.insert(r.w.end(), p.w.begin() + static_cast<size_t>(i) * p.cols + c0, p.w.begin() + static_cast<size_t>(i) * p.cols + c1);
  }
  r.b.assign(p.b.begin() + c0, p.b.begin() + c1);
  return r;
}

class GruCell {
 public:
  explicit GruCell(LoopBody& body) : b_(body) {}

  std::string x_name, index_name, h_name;  // outer sequence, its step index, the body's state input
  Projection xz, xr, xh, hz, hr, hh;       // hh: h @ U_h (reset_after) or (r * h) @ U_h
  bool reset_after = true;

  // Matches the cell whose new state is `h_new` (a body value).
  void match(const std::string& h_new) {
    const auto [zh, rest] = product_pair(add_operands(h_new, "the new state"), "the new state");
    // zh = z * h, rest = (1 - z) * hh; z is the operand of zh that is not a state input.
    const auto zh_ops = mul_operands(zh);
    int state = -1;
    for (int k = 0; k < 2; ++k) {
      if (b_.input_index(zh_ops[k]) >= 2) state = k;
    }
    if (state < 0) b_.refuse("the new state is not z * h + (1 - z) * candidate");
    h_name = zh_ops[state];
    const std::string z = zh_ops[1 - state];
    const auto rest_ops = mul_operands(rest);
    int one_minus = -1;
    for (int k = 0; k < 2; ++k) {
      const onnx::NodeProto* s = b_.made(rest_ops[k], "Sub");
      if (s && s->input_size() == 2 && is_one(s->input(0)) && b_.skip_identity(s->input(1)) == z) one_minus = k;
    }
    if (one_minus < 0) b_.refuse("the new state is not z * h + (1 - z) * candidate");
    const std::string candidate = rest_ops[1 - one_minus];

    const onnx::NodeProto* tanh = b_.made(candidate, "Tanh");
    if (!tanh) b_.refuse("the candidate's activation is " + op_of(candidate) + ", not Tanh (the only one the lift reads)");
    const auto c_ops = add_operands(tanh->input(0), "the candidate");
    // One operand is the input projection; the other r * (h @ U_h) or (r * h) @ U_h.
    std::string r;
    for (int k = 0; k < 2 && r.empty(); ++k) {
      const std::string& other = c_ops[1 - k];
      if (b_.made(other, "Mul")) {
        // r * (columns of h @ U): r is the operand that is not a column range of a projection.
        const auto ops = mul_operands(other);
        for (int j = 0; j < 2 && r.empty(); ++j) {
          if (is_projection_op(ops[1 - j]) && !is_projection_op(ops[j])) {
            hh = projection(ops[1 - j]);
            if (hh.src != Source::H) b_.refuse("the reset gate multiplies something other than a projection of h");
            r = ops[j];
            reset_after = true;
          }
        }
      } else {
        hh = projection(other);
        if (hh.src == Source::ResetH) {
          r = hh.reset;
          reset_after = false;
        }
      }
      if (!r.empty()) xh = projection(c_ops[k]);
    }
    if (r.empty() || xh.src != Source::X) b_.refuse("the candidate is not Tanh(x projection + reset gate term)");
    gate(z, xz, hz);
    gate(r, xr, hr);
  }

 private:
  static std::string op_of_node(const onnx::NodeProto* p) { return p ? p->op_type() : std::string("an input"); }
  std::string op_of(const std::string& name) const { return op_of_node(b_.producer(b_.skip_identity(name))); }

  bool is_projection_op(const std::string& name) const {
    const onnx::NodeProto* p = b_.producer(b_.skip_identity(name));
    if (p == nullptr) return false;
    const std::string& op = p->op_type();
    return op == "MatMul" || op == "Slice" || op == "Split" || op == "Add";
  }

  bool is_one(const std::string& name) const {
    const std::optional<Tensor> c = b_.constant(b_.skip_identity(name));
    return c && c->size() == 1 && c->at(0) == 1.0;
  }

  std::array<std::string, 2> operands(const std::string& name, const char* op, const std::string& what) const {
    const onnx::NodeProto* p = b_.made(name, op);
    if (!p || p->input_size() != 2) b_.refuse(what + " is " + op_of(name) + " where an " + op + " was expected");
    return {b_.skip_identity(p->input(0)), b_.skip_identity(p->input(1))};
  }
  std::array<std::string, 2> add_operands(const std::string& name, const std::string& what) const {
    return operands(name, "Add", what);
  }
  std::array<std::string, 2> mul_operands(const std::string& name) const { return operands(name, "Mul", "a gate product"); }

  // The Add operands of h' ordered (z * h, (1 - z) * hh): the second holds a Sub.
  std::pair<std::string, std::string> product_pair(const std::array<std::string, 2>& ops, const std::string& what) const {
    for (int k = 0; k < 2; ++k) {
      if (!b_.made(ops[k], "Mul") || !b_.made(ops[1 - k], "Mul")) continue;
      const auto m = mul_operands(ops[1 - k]);
      if (b_.made(m[0], "Sub") || b_.made(m[1], "Sub")) return {ops[k], ops[1 - k]};
    }
    b_.refuse(what + " is not z * h + (1 - z) * candidate");
  }

  // z or r: Sigmoid(x projection + h projection) in either order.
  void gate(const std::string& name, Projection& x, Projection& h) {
    const onnx::NodeProto* s = b_.made(name, "Sigmoid");
    if (!s) b_.refuse("a gate's activation is " + op_of(name) + ", not Sigmoid (the only one the lift reads)");
    const auto ops = add_operands(s->input(0), "a gate's argument");
    Projection a = projection(ops[0]), c = projection(ops[1]);
    if (a.src == Source::H) std::swap(a, c);
    if (a.src != Source::X || c.src != Source::H) b_.refuse("a gate is not Sigmoid(x projection + h projection)");
    x = std::move(a);
    h = std::move(c);
  }

  // Where the left operand of a MatMul comes from: the step of X, the state, or r * state.
  Projection source_of(const std::string& name) {
    Projection p;
    const std::string s = b_.skip_identity(name);
    if (const onnx::NodeProto* gth = b_.made(s, "Gather")) {
      if (b_.L.attr_i(*gth, "axis", 0) != 0 || gth->input_size() != 2) b_.refuse("the sequence is not read one step at a time");
      const std::string x = gth->input(0), idx = b_.skip_identity(gth->input(1));
      if (b_.producer(x) || b_.input_index(x) >= 0) b_.refuse("the sequence it reads is computed in the body");
      if ((!x_name.empty() && x != x_name) || (!index_name.empty() && idx != index_name)) {
        b_.refuse("it reads more than one sequence or index");
      }
      x_name = x, index_name = idx;
      p.src = Source::X;
    } else if (b_.input_index(s) >= 2) {
      if (!h_name.empty() && s != h_name) b_.refuse("a gate reads a carried value other than the state");
      p.src = Source::H;
    } else if (b_.made(s, "Mul")) {
      const auto ops = mul_operands(s);
      const int k = ops[0] == h_name ? 0 : ops[1] == h_name ? 1 : -1;
      if (k < 0) b_.refuse("a projection reads a product that is not r * h");
      p.src = Source::ResetH;
      p.reset = ops[1 - k];
    } else {
      b_.refuse("a projection reads " + op_of(s) + " (neither the sequence's step nor the state)");
    }
    return p;
  }

  // `name` as columns of a projection of X's step, h or r * h.
  Projection projection(const std::string& raw, int depth = 0) {
    if (depth > 16) b_.refuse("a projection is nested too deeply");
    const std::string name = b_.skip_identity(raw);
    const onnx::NodeProto* p = b_.producer(name);
    if (p == nullptr) b_.refuse("'" + name + "' is read where a projection was expected");
    const std::string& op = p->op_type();
    if (op == "MatMul") {
      const std::optional<Tensor> w = p->input_size() == 2 ? b_.constant(p->input(1)) : std::nullopt;
      if (!w || !w->is_float || w->dims.size() != 2) b_.refuse("a MatMul's right operand is not a constant matrix");
      Projection r = source_of(p->input(0));
      r.rows = static_cast<int>(w->dims[0]);
      r.cols = static_cast<int>(w->dims[1]);
      r.w = w->f;
      r.b.assign(static_cast<size_t>(r.cols), 0.0f);
      return r;
    }
    if (op == "Add" && p->input_size() == 2) {
      for (int k = 0; k < 2; ++k) {
        const std::optional<Tensor> c = b_.constant(p->input(k));
        if (!c) continue;
        Projection r = projection(p->input(1 - k), depth + 1);
        const bool row = c->dims.size() == 1 || (c->dims.size() == 2 && c->dims[0] == 1);
        if (!c->is_float || !row || c->size() != r.cols) b_.refuse("a bias does not have one value per column");
        for (int j = 0; j < r.cols; ++j) r.b[j] += c->f[j];
        return r;
      }
    }
    if (op == "Split" && p->input_size() >= 1) {
      Projection r = projection(p->input(0), depth + 1);
      const int64_t axis = b_.L.attr_i(*p, "axis", 0);
      if (axis != 1 && axis != -1) b_.refuse("a Split is not along the columns");
      std::vector<int64_t> sizes = b_.L.attr_ints(*p, "split");
      if (sizes.empty() && p->input_size() > 1 && !p->input(1).empty()) {
        const std::optional<Tensor> s = b_.constant(p->input(1));
        if (!s || s->is_float) b_.refuse("a Split's sizes are not constant");
        sizes = s->i;
      }
      if (sizes.empty()) sizes.assign(static_cast<size_t>(p->output_size()), r.cols / std::max(p->output_size(), 1));
      if (std::any_of(sizes.begin(), sizes.end(), [](int64_t z) { return z < 0; })) b_.refuse("a Split has a negative size");
      int64_t from = 0;
      for (int j = 0; j < p->output_size() && j < static_cast<int>(sizes.size()); ++j) {
        if (p->output(j) == name && sizes[j] >= 0 && from + sizes[j] <= r.cols) {
          return columns(r, static_cast<int>(from), static_cast<int>(from + sizes[j]));
        }
        from += sizes[j];
      }
      b_.refuse("a Split's sizes do not cover its input");
    }
    if (op == "Slice" && p->input_size() >= 3) {
      Projection r = projection(p->input(0), depth + 1);
      const auto ints = [&](int k) {
        const std::optional<Tensor> t = k < p->input_size() && !p->input(k).empty() ? b_.constant(p->input(k)) : std::nullopt;
        if (!t || t->is_float) b_.refuse("a Slice's bounds are not constant");
        return t->i;
      };
      const std::vector<int64_t> s = ints(1), e = ints(2);
      std::vector<int64_t> axes = p->input_size() > 3 && !p->input(3).empty() ? ints(3) : std::vector<int64_t>{};
      if (axes.empty()) for (size_t a = 0; a < s.size(); ++a) axes.push_back(static_cast<int64_t>(a));
      if (p->input_size() > 4 && !p->input(4).empty()) {
        for (int64_t st : ints(4)) if (st != 1) b_.refuse("a Slice has a step other than 1");
      }
      if (s.size() != e.size() || s.size() != axes.size()) b_.refuse("a Slice's bounds do not match its axes");
      int c0 = 0, c1 = r.cols;
      for (size_t j = 0; j < s.size(); ++j) {
        const int64_t a = axes[j] < 0 ? axes[j] + 2 : axes[j];
        const auto clampc = [&](int64_t x) { return static_cast<int>(std::clamp<int64_t>(x < 0 ? x + r.cols : x, 0, r.cols)); };
        if (a == 0) {
          if (s[j] != 0 || e[j] < 1) b_.refuse("a Slice cuts the batch");
        } else if (a == 1) {
          c0 = clampc(s[j]), c1 = std::max(c0, clampc(e[j]));
        } else {
          b_.refuse("a Slice of a projection is along a third axis");
        }
      }
      return columns(r, c0, c1);
    }
    b_.refuse("'" + name + "' (" + op + ") is not a column range of a projection");
  }

  LoopBody& b_;
};

// Keras layout: gate blocks z, r, h of H columns.
void place(std::vector<float>& m, int cols, int block, const Projection& p) {
  for (int i = 0; i < p.rows; ++i) {
    std::copy(p.w.begin() + static_cast<size_t>(i) * p.cols, p.w.begin() + static_cast<size_t>(i + 1) * p.cols,
              m.begin() + static_cast<size_t>(i) * cols + static_cast<size_t>(block) * p.cols);
  }
}

}  // namespace

Value lower_gru_loop(Lowerer& L, const onnx::NodeProto& n, int out) {
  LoopBody body(L, n);
  // The state h' the loop carries and scans: the body output of the carried value that is not
  // passed through unchanged and is not a counter, found from the scans.
  if (body.g.output_size() <= body.carried + 1) body.refuse("it has no scan output (the sequence of states)");
  const std::string h_new = body.skip_identity(body.g.output(body.carried + 1).name());
  GruCell cell(body);
  cell.match(h_new);
  const int k_h = body.input_index(cell.h_name) - 2;
  if (body.skip_identity(body.g.output(k_h + 1).name()) != h_new) body.refuse("the carried state is not the new state");
  if (!L.has_input(n, k_h + 2) || !known_zero(L, n.input(k_h + 2))) body.refuse("the state does not start at zero");

  const int H = cell.hz.rows, F = cell.xz.rows;
  if (H < 1 || F < 1) body.refuse("a projection has no rows");
  for (const Projection* p : {&cell.xz, &cell.xr, &cell.xh}) {
    if (p->rows != F || p->cols != H) body.refuse("the input projections do not have " + std::to_string(H) + " columns per gate");
  }
  for (const Projection* p : {&cell.hz, &cell.hr, &cell.hh}) {
    if (p->rows != H || p->cols != H) body.refuse("the state projections are not " + std::to_string(H) + " x " + std::to_string(H));
  }
  const Value& xv = L.value(cell.x_name);
  if (xv.is_const) body.refuse("the sequence is a constant");
  L.require_unpadded(n, xv);
  const std::vector<int> xd = L.dims(xv);
  if (xd.size() != 3 || xd[2] != F) body.refuse("the sequence is not [time, batch, " + std::to_string(F) + "]");
  body.check_runs_once_per_step(cell.index_name, xd[0]);

  Node node;
  node.kind = OpKind::GRU;
  node.keras_class = "GRU";  // inspect's class column; the origin still names the Loop
  node.units = H;
  node.recurrent_activation.kind = ActKind::Sigmoid;
  node.activation.kind = ActKind::Tanh;
  node.reset_after = cell.reset_after;
  std::vector<float> kernel(static_cast<size_t>(F) * 3 * H), recurrent(static_cast<size_t>(H) * 3 * H);
  place(kernel, 3 * H, 0, cell.xz), place(kernel, 3 * H, 1, cell.xr), place(kernel, 3 * H, 2, cell.xh);
  place(recurrent, 3 * H, 0, cell.hz), place(recurrent, 3 * H, 1, cell.hr), place(recurrent, 3 * H, 2, cell.hh);
  Weight bias;
  if (cell.reset_after) {
    bias = {{2, 3 * H}, std::vector<float>(static_cast<size_t>(6) * H)};
    const Projection* rows[2][3] = {{&cell.xz, &cell.xr, &cell.xh}, {&cell.hz, &cell.hr, &cell.hh}};
    for (int r = 0; r < 2; ++r)
      for (int g = 0; g < 3; ++g) std::copy(rows[r][g]->b.begin(), rows[r][g]->b.end(), bias.data.begin() + (r * 3 + g) * H);
  } else {
    // Without reset_after every bias sits inside its gate's activation: one sum per gate.
    bias = {{3 * H}, std::vector<float>(static_cast<size_t>(3) * H)};
    const Projection* parts[3][2] = {{&cell.xz, &cell.hz}, {&cell.xr, &cell.hr}, {&cell.xh, &cell.hh}};
    for (int g = 0; g < 3; ++g)
      for (int j = 0; j < H; ++j) bias.data[g * H + j] = parts[g][0]->b[j] + parts[g][1]->b[j];
  }
  node.weights = {{{F, 3 * H}, std::move(kernel)}, {{H, 3 * H}, std::move(recurrent)}, std::move(bias)};

  const Value x = rnn_sequence(L, n, xv, /*layout=*/0, F);
  Value v;
  if (out >= body.carried && out + 1 < body.g.output_size() && body.skip_identity(body.g.output(out + 1).name()) == h_new) {
    node.return_sequences = true;
    v.axes = {0, kUnit, 1};
  } else if (out == k_h) {
    node.return_sequences = false;
    v.axes = {kUnit, 0};
  } else {
    L.fail(n, "output " + std::to_string(out) + " is neither the GRU's sequence nor its last state");
  }
  v.node = L.add(std::move(node), n, {x.node});
  return v;
}

}  // namespace tickinfer::formats::onnx_import
