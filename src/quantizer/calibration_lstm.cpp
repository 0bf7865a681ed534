// Float replay of LSTM ops for the cell-state range (see calibration_lstm.hpp).
#include "quantizer/calibration_lstm.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tickinfer::quantizer {

namespace {

std::vector<float> floats(const Tensor& t) {
  std::vector<float> v(t.data.size() / sizeof(float));
  if (!v.empty()) std::memcpy(v.data(), t.data.data(), t.data.size());
  return v;
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

}  // namespace

bool lstm_is_plain(const Program& p, const Op& op) {
  if (op.code != OpCode::SequenceLstm || op.options.activation != FusedActivation::Tanh || op.options.time_major) return false;
  const auto has = [&](size_t i) { return i < op.inputs.size() && op.inputs[i] >= 0; };
  bool plain = has(0) && has(18) && has(19);
  for (size_t i : {1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 14, 15}) {
    plain = plain && has(i) && p.tensors[static_cast<size_t>(op.inputs[i])].type == DType::F32;
  }
  for (size_t i : {9, 10, 11, 16, 17, 20, 21, 22, 23}) plain = plain && !has(i);
  return plain;
}

LstmCellObserver::LstmCellObserver(const Program& p, bool carry_state) : carry_(carry_state), tensor_count_(p.tensors.size()) {
  for (const Op& op : p.ops) {
    if (!lstm_is_plain(p, op)) continue;
    Cell c;
    c.input = op.inputs[0];
    c.cell_tensor = op.inputs[19];
    const Shape& xs = p.tensors[static_cast<size_t>(c.input)].shape;
    const Shape& ws = p.tensors[static_cast<size_t>(op.inputs[1])].shape;
    if (xs.size() != 3 || ws.size() != 2) continue;
    c.steps = xs[1];
    c.depth = xs[2];
    c.units = ws[0];
    bool float_weights = true;
    for (size_t g = 0; g < 4; ++g) {
      const Tensor &wx = p.tensors[static_cast<size_t>(op.inputs[1 + g])], &wh = p.tensors[static_cast<size_t>(op.inputs[5 + g])],
                   &b = p.tensors[static_cast<size_t>(op.inputs[12 + g])];
      float_weights = float_weights && wx.type == DType::F32 && wh.type == DType::F32 && b.type == DType::F32;
      c.wx[g] = floats(wx);
      c.wh[g] = floats(wh);
      c.bias[g] = floats(b);
      float_weights = float_weights && c.wx[g].size() == static_cast<size_t>(c.units) * c.depth &&
                      c.wh[g].size() == static_cast<size_t>(c.units) * c.units && c.bias[g].size() == static_cast<size_t>(c.units);
    }
    if (!float_weights) continue;
    c.h.assign(static_cast<size_t>(c.units), 0.0f);
    c.c.assign(static_cast<size_t>(c.units), 0.0f);
    cells_.push_back(std::move(c));
  }
}

void LstmCellObserver::step(Cell& cell, const float* x) {
  const auto u = static_cast<size_t>(cell.units), d = static_cast<size_t>(cell.depth);
  if (!carry_) {
    std::fill(cell.h.begin(), cell.h.end(), 0.0f);
    std::fill(cell.c.begin(), cell.c.end(), 0.0f);
  }
  std::vector<float> z(4 * u), h_next(u);
  for (int t = 0; t < cell.steps; ++t) {
    const float* xt = x + static_cast<size_t>(t) * d;
    for (size_t g = 0; g < 4; ++g) {
      for (size_t o = 0; o < u; ++o) {
        float acc = cell.bias[g][o];
        for (size_t k = 0; k < d; ++k) acc += cell.wx[g][o * d + k] * xt[k];
        for (size_t k = 0; k < u; ++k) acc += cell.wh[g][o * u + k] * cell.h[k];
        z[g * u + o] = acc;
      }
    }
    for (size_t o = 0; o < u; ++o) {
      const float i = sigmoid(z[o]), f = sigmoid(z[u + o]), g = std::tanh(z[2 * u + o]), og = sigmoid(z[3 * u + o]);
      cell.c[o] = f * cell.c[o] + i * g;
      cell.max_abs = std::max(cell.max_abs, std::abs(cell.c[o]));
      h_next[o] = og * std::tanh(cell.c[o]);
    }
    cell.h.swap(h_next);
  }
}

std::vector<float> LstmCellObserver::max_abs_cell() const {
  std::vector<float> m(tensor_count_, 0.0f);
  for (const Cell& c : cells_) m[static_cast<size_t>(c.cell_tensor)] = std::max(c.max_abs, 1e-6f);
  return m;
}

float lstm_cell_scale(float max_abs_cell) {
  int e = static_cast<int>(std::ceil(std::log2(static_cast<double>(std::max(max_abs_cell, 1e-9f)))));
  e = std::clamp(e, 0, 6);  // the kernel takes 2^-15 .. 2^-9
  return std::ldexp(1.0f, e - 15);
}

}  // namespace tickinfer::quantizer
