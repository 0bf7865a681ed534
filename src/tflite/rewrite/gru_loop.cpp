// The Keras GRU loop recogniser (gru_loop.hpp). The body, checked from h' back:
//   xs = SPLIT(FULLY_CONNECTED(GATHER(x, t), W, b_in), 3) along the last axis
//   reset_after:  rec = FULLY_CONNECTED(h, U, b_rec); rs_k = STRIDED_SLICE(rec, columns of gate k)
//     (Keras 3) or part k of SPLIT(rec, 3) (tf_keras)
//     z = sigmoid(xs_a + rs_a), r = sigmoid(xs_b + rs_b), hh = tanh(xs_c + r * rs_c)
//   reset_before: rec = FULLY_CONNECTED(h, U_zr) sliced in two the same way (tf_keras: a SPLIT_V
//     into {H, H, -1}, the last part empty)
//     z = sigmoid(xs_a + rs_a), r = sigmoid(xs_b + rs_b), hh = tanh(xs_c + FULLY_CONNECTED(r * h, U_h))
//   h' = z * h + (1 - z) * hh   (operands of ADD and MUL in either order)
//   buffer' as loop_pattern.hpp's match_buffer; step' = step + 1, t' = t + 1, x passed through.
// Which part of W and which rows of U belong to which gate is read from where each part is
// used, never assumed from the converter's order.
#include "tflite/rewrite/gru_loop.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "tflite/rewrite/loop_pattern.hpp"

namespace tickinfer::tfl {

namespace {

using loop::BodyGraph;
using loop::other;

struct Cell {
  const BodyGraph& g;
  const Subgraph& body;
  GruLoop& m;
  const Op* split = nullptr;   // of the input projection
  const Op* rec_fc = nullptr;  // h -> gates
  const Op* cand_fc = nullptr;  // (r * h) -> candidate (reset_before)
  int h_old() const { return body.inputs[3]; }

  // A SPLIT into `parts` along the last axis, else nullptr.
  const Op* split_of(int t, size_t parts) const {
    const Op* s = g.made(t, OpCode::Split);
    int32_t axis = 0;
    if (!s || s->outputs.size() != parts || s->inputs.size() != 2 || !g.scalar_int(s->inputs[0], &axis) ||
        (axis != 1 && axis != -1)) {
      return nullptr;
    }
    return s;
  }
  static int index_of(const Op* s, int t) {
    for (size_t k = 0; k < s->outputs.size(); ++k)
      if (s->outputs[k] == t) return static_cast<int>(k);
    return -1;
  }

  // The part of the input projection's SPLIT (of FULLY_CONNECTED(GATHER(x, t))) that t is, else -1.
  int x_part(int t) {
    const Op* s = split_of(t, 3);
    if (!s || (split && s != split)) return -1;
    const Op* fc = g.made(s->inputs[1], OpCode::FullyConnected);
    if (!fc || !g.made(fc->inputs[0], OpCode::Gather)) return -1;
    split = s;
    return index_of(s, t);
  }

  // Part k of a SPLIT_V of the recurrent projection (tf_keras' reset_before, which splits [1, 2H]
  // as {H, H, -1}): every part H or 0 wide, the H-wide ones first, along the last axis; else -1.
  int rec_split_v(int t) {
    const Op* sp = g.made(t, OpCode::SplitV);
    if (!sp || sp->inputs.size() != 3) return -1;
    const Op* fc = g.made(sp->inputs[0], OpCode::FullyConnected);
    const Shape& out = fc ? g.tensor(sp->inputs[0]).shape : Shape{};
    int32_t axis = 0;
    const Tensor& sizes = g.tensor(sp->inputs[1]);
    if (!fc || (rec_fc && fc != rec_fc) || fc->inputs[0] != h_old() || out.size() != 2 || out[0] != 1 ||
        !g.scalar_int(sp->inputs[2], &axis) || (axis != 1 && axis != -1) || !sizes.is_constant() ||
        sizes.type != DType::I32 || sizes.data.size() != 4 * sp->outputs.size()) {
      return -1;
    }
    if (sp->options.num != 0 && sp->options.num != static_cast<int>(sp->outputs.size())) return -1;
    int wide = 0, k = -1, rests = 0;
    for (size_t i = 0; i < sp->outputs.size(); ++i) {
      int32_t n = 0;
      std::memcpy(&n, sizes.data.data() + 4 * i, 4);
      if (n == -1 && rests++ == 0) n = out[1] - wide * m.H;  // the rest (sizes after it must be 0)
      if (n == m.H && wide == static_cast<int>(i)) {
        ++wide;
      } else if (n != 0) {
        return -1;  // a part neither H wide in order nor empty, or a second -1
      }
      if (g.tensor(sp->outputs[i]).shape != Shape{1, n}) return -1;
      if (sp->outputs[i] == t) k = n == m.H ? static_cast<int>(i) : -1;
    }
    if (out[1] != wide * m.H) return -1;
    rec_fc = fc;
    return k;
  }

  // The gate block of the recurrent projection [1, n * H] (FULLY_CONNECTED(h, U)) that t is:
  // a STRIDED_SLICE of columns [k * H, (k + 1) * H) (Keras 3), part k of a SPLIT into n
  // (tf_keras) or of a SPLIT_V into H-wide parts (tf_keras' reset_before); else -1.
  int rec_part(int t) {
    if (g.made(t, OpCode::SplitV)) return rec_split_v(t);
    if (const Op* sp = g.made(t, OpCode::Split)) {
      const Op* fc = g.made(sp->inputs.size() == 2 ? sp->inputs[1] : -1, OpCode::FullyConnected);
      const Shape& out = fc ? g.tensor(sp->inputs[1]).shape : Shape{};
      if (!fc || (rec_fc && fc != rec_fc) || fc->inputs[0] != h_old() || out.size() != 2 || out[0] != 1 ||
          out[1] != static_cast<int>(sp->outputs.size()) * m.H || !split_of(t, sp->outputs.size())) {
        return -1;
      }
      rec_fc = fc;
      return index_of(sp, t);
    }
    const Op* s = g.made(t, OpCode::StridedSlice);
    if (!s || s->inputs.size() != 4) return -1;
    const Op* fc = g.made(s->inputs[0], OpCode::FullyConnected);
    if (!fc || (rec_fc && fc != rec_fc) || fc->inputs[0] != h_old()) return -1;
    const Shape& in = g.tensor(s->inputs[0]).shape;
    const OpOptions& o = s->options;
    if (in.size() != 2 || in[0] != 1 || o.ellipsis_mask || o.new_axis_mask || o.shrink_axis_mask || o.offset) return -1;
    int32_t begin[2], end[2], stride[2];
    if (!ints(s->inputs[1], begin) || !ints(s->inputs[2], end) || !ints(s->inputs[3], stride)) return -1;
    if (stride[0] != 1 || stride[1] != 1) return -1;
    const auto range = [&](int d, int dim) {
      const auto at = [dim](int32_t x) { return x < 0 ? std::max(x + dim, 0) : std::min<int>(x, dim); };
      return std::pair<int, int>{(o.begin_mask >> d) & 1 ? 0 : at(begin[d]), (o.end_mask >> d) & 1 ? dim : at(end[d])};
    };
    if (range(0, 1) != std::pair<int, int>{0, 1}) return -1;
    const auto [b, e] = range(1, in[1]);
    if (e - b != m.H || b % m.H != 0) return -1;
    rec_fc = fc;
    return b / m.H;
  }

  bool ints(int t, int32_t (&v)[2]) const {
    if (t < 0) return false;
    const Tensor& x = g.tensor(t);
    if (!x.is_constant() || x.type != DType::I32 || x.data.size() != 8) return false;
    std::memcpy(v, x.data.data(), 8);
    return true;
  }

  // t = ADD(input part, recurrent part) -> gate's blocks.
  bool gate_sum(int t, int gate) {
    const Op* add = g.made(t, OpCode::Add);
    if (!add || add->inputs.size() != 2) return false;
    for (size_t k = 0; k < 2; ++k) {
      const int xp = x_part(add->inputs[k]);
      if (xp < 0) continue;
      const int rp = rec_part(add->inputs[1 - k]);
      if (rp < 0) return false;
      m.w_block[gate] = xp;
      m.u_block[gate] = rp;
      return true;
    }
    return false;
  }

  // t = sigmoid(ADD(...)) of gate.
  bool gate(int t, int g_index) {
    const Op* s = g.made(t, OpCode::Logistic);
    return s && gate_sum(s->inputs[0], g_index);
  }

  // hh = tanh(xs_c + ...) whose second term holds r.
  bool candidate(int t) {
    const Op* th = g.made(t, OpCode::Tanh);
    const Op* add = th ? g.made(th->inputs[0], OpCode::Add) : nullptr;
    if (!add || add->inputs.size() != 2) return false;
    for (size_t k = 0; k < 2; ++k) {
      const int xp = x_part(add->inputs[k]);
      if (xp < 0) continue;
      m.w_block[2] = xp;
      const int q = add->inputs[1 - k];
      if (const Op* mul = g.made(q, OpCode::Mul); mul && mul->inputs.size() == 2) {  // reset_after: r * rs_c
        for (size_t j = 0; j < 2; ++j) {
          const int rp = rec_part(mul->inputs[j]);
          if (rp >= 0 && gate(mul->inputs[1 - j], 1)) {
            m.reset_after = true;
            m.u_block[2] = rp;
            return true;
          }
        }
        return false;
      }
      const Op* fc = g.made(q, OpCode::FullyConnected);  // reset_before: FC(r * h, U_h)
      if (!fc || (fc->inputs.size() > 2 && fc->inputs[2] >= 0)) return false;
      cand_fc = fc;
      const Op* rh = g.made(fc->inputs[0], OpCode::Mul);
      const int r = other(rh, h_old());
      if (r < 0 || !gate(r, 1)) return false;
      m.reset_after = false;
      m.u_h = fc->inputs[1];
      return true;
    }
    return false;
  }

  bool match() {
    const Op* sum = g.made(body.outputs[3], OpCode::Add);
    if (!sum || sum->inputs.size() != 2) return false;
    for (size_t k = 0; k < 2; ++k) {
      const Op* keep = g.made(sum->inputs[k], OpCode::Mul);         // z * h
      const Op* take = g.made(sum->inputs[1 - k], OpCode::Mul);     // (1 - z) * hh
      const int z = other(keep, h_old());
      if (z < 0 || !take || take->inputs.size() != 2) continue;
      for (size_t j = 0; j < 2; ++j) {
        const Op* one_minus = g.made(take->inputs[j], OpCode::Sub);
        float one = 0;
        if (!one_minus || one_minus->inputs.size() != 2 || one_minus->inputs[1] != z ||
            !g.scalar_float(one_minus->inputs[0], &one) || one != 1.0f) {
          continue;
        }
        if (!gate(z, 0) || !candidate(take->inputs[1 - j])) return false;
        return projections();
      }
    }
    return false;
  }

  // The two FULLY_CONNECTED projections' weights, and every gate's blocks distinct.
  bool projections() {
    if (!split) return false;
    const Op* in_fc = g.made(split->inputs[1], OpCode::FullyConnected);
    if (!in_fc || !rec_fc) return false;
    const Op* gather = g.made(in_fc->inputs[0], OpCode::Gather);
    if (!gather || gather->inputs.size() != 2 || gather->inputs[0] != body.inputs[4] ||
        gather->inputs[1] != body.inputs[1] || gather->options.axis != 0) {
      return false;
    }
    const int H = m.H;
    const int rec_gates = m.reset_after ? 3 : 2;
    // Every filter float, or every one int8 with all three products quantizing their inputs alike.
    const loop::Filter kind = loop::filter_kind(g, in_fc->inputs[1], {3 * H, m.F});
    if (kind == loop::Filter::None || loop::filter_kind(g, rec_fc->inputs[1], {rec_gates * H, H}) != kind ||
        (cand_fc && loop::filter_kind(g, cand_fc->inputs[1], {H, H}) != kind)) {
      return false;
    }
    m.hybrid = kind == loop::Filter::Int8;
    m.asymmetric = in_fc->options.asymmetric_quantize_inputs;
    if (m.hybrid && (rec_fc->options.asymmetric_quantize_inputs != m.asymmetric ||
                     (cand_fc && cand_fc->options.asymmetric_quantize_inputs != m.asymmetric))) {
      return false;
    }
    m.w = in_fc->inputs[1];
    m.b_in = in_fc->inputs.size() > 2 ? in_fc->inputs[2] : -1;
    if (m.b_in >= 0 && !g.float_const(m.b_in, {3 * H})) return false;
    m.u = rec_fc->inputs[1];
    m.b_rec = rec_fc->inputs.size() > 2 ? rec_fc->inputs[2] : -1;
    if (m.b_rec >= 0 && (!m.reset_after || !g.float_const(m.b_rec, {3 * H}))) return false;
    bool w_used[3] = {false, false, false}, u_used[3] = {false, false, false};
    for (int k = 0; k < 3; ++k) {
      if (m.w_block[k] < 0 || w_used[m.w_block[k]]) return false;
      w_used[m.w_block[k]] = true;
      if (k == 2 && !m.reset_after) continue;
      if (m.u_block[k] < 0 || m.u_block[k] >= rec_gates || u_used[m.u_block[k]]) return false;
      u_used[m.u_block[k]] = true;
    }
    return true;
  }
};

}  // namespace

std::optional<GruLoop> match_gru_loop(const Program& p, const Op& w) {
  const auto [cond, body] = loop::while_parts(p, w, 5);
  if (!body) return std::nullopt;
  const Tensor& x = p.tensors[static_cast<size_t>(w.inputs[4])];
  const Tensor& h = p.tensors[static_cast<size_t>(w.inputs[3])];
  if (x.type != DType::F32 || x.shape.size() != 3 || x.shape[1] != 1 || h.type != DType::F32 || h.shape.size() != 2 ||
      h.shape[0] != 1) {
    return std::nullopt;
  }
  GruLoop m;
  m.T = x.shape[0];
  m.F = x.shape[2];
  m.H = h.shape[1];
  if (m.T < 1 || m.F < 1 || m.H < 1) return std::nullopt;
  const BodyGraph g = loop::graph_of(p, body->ops);
  Cell cell{g, *body, m};
  if (body->outputs[4] != body->inputs[4] || !loop::counter_step(g, body->outputs[0], body->inputs[0]) ||
      !loop::counter_step(g, body->outputs[1], body->inputs[1]) || !loop::match_cond(p, *cond, m.T) || !cell.match() ||
      !loop::match_buffer(g, *body, m.T, m.H, &m.sequences)) {
    return std::nullopt;
  }
  return m;
}

}  // namespace tickinfer::tfl
