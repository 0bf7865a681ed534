#include "formats/savedmodel/tf_rnn_cell.hpp"

#include <cmath>
#include <random>

#include "tensorflow/core/framework/function.pb.h"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

struct Candidate {
  const char* name;
  ActivationSpec spec;
};

std::vector<Candidate> candidates() {
  auto make = [](ActKind k, float a = 0, float b = 0) {
    ActivationSpec s;
    s.kind = k;
    s.alpha = a;
    s.beta = b;
    return s;
  };
  return {{"tanh", make(ActKind::Tanh)},       {"sigmoid", make(ActKind::Sigmoid)},
          {"relu", make(ActKind::Relu)},       {"linear", make(ActKind::Linear)},
          {"hard_sigmoid (Keras 3)", make(ActKind::HardSigmoid, 1.0f / 6.0f, 0.5f)},
          {"hard_sigmoid (Keras 2)", make(ActKind::HardSigmoid, 0.2f, 0.5f)},
          {"softsign", make(ActKind::Softsign)}};
}

double apply(const ActivationSpec& s, double x) {
  switch (s.kind) {
    case ActKind::Tanh: return std::tanh(x);
    case ActKind::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case ActKind::Relu: return x > 0 ? x : 0.0;
    case ActKind::HardSigmoid: return std::min(1.0, std::max(0.0, static_cast<double>(s.alpha) * x + static_cast<double>(s.beta)));
    case ActKind::Softsign: return x / (1.0 + std::fabs(x));
    default: return x;
  }
}

// y[j] = sum_i x[i] * w[i][j] over columns [col0, col0 + n) of a row-major (rows, cols) matrix.
std::vector<double> matvec(const std::vector<double>& x, const TfTensor& w, int64_t col0, int64_t n) {
  const int64_t cols = w.shape[1];
  std::vector<double> y(static_cast<size_t>(n), 0.0);
  for (size_t i = 0; i < x.size(); ++i)
    for (int64_t j = 0; j < n; ++j) y[static_cast<size_t>(j)] += x[i] * w.values[static_cast<size_t>(static_cast<int64_t>(i) * cols + col0 + j)];
  return y;
}

struct Sample {
  std::vector<double> x, h, c;
};

struct Expected {
  std::vector<double> h, c;
};

Expected lstm_ref(const Sample& s, const TfTensor& k, const TfTensor& r, const std::vector<double>& b, int64_t u,
                  const ActivationSpec& act, const ActivationSpec& rec) {
  const auto zx = matvec(s.x, k, 0, 4 * u), zh = matvec(s.h, r, 0, 4 * u);
  Expected e;
  for (int64_t j = 0; j < u; ++j) {
    auto z = [&](int g) { const auto i = static_cast<size_t>(g * u + j); return zx[i] + zh[i] + b[i]; };
    const double ig = apply(rec, z(0)), fg = apply(rec, z(1)), cc = apply(act, z(2)), og = apply(rec, z(3));
    const double c2 = fg * s.c[static_cast<size_t>(j)] + ig * cc;
    e.c.push_back(c2);
    e.h.push_back(og * apply(act, c2));
  }
  return e;
}

Expected gru_ref(const Sample& s, const TfTensor& k, const TfTensor& r, const std::vector<double>& b, int64_t u, bool reset_after,
                 const ActivationSpec& act, const ActivationSpec& rec) {
  // b: reset_after -> [input bias (3u), recurrent bias (3u)]; else [bias (3u)].
  const auto xz = matvec(s.x, k, 0, 3 * u);
  Expected e;
  std::vector<double> inner = matvec(s.h, r, 0, 3 * u);
  std::vector<double> zg(static_cast<size_t>(u)), rg(static_cast<size_t>(u));
  for (int64_t j = 0; j < u; ++j) {
    const auto jz = static_cast<size_t>(j), jr = static_cast<size_t>(u + j);
    const double bx_z = b[jz], bx_r = b[jr];
    const double bh_z = reset_after ? b[static_cast<size_t>(3 * u) + jz] : 0.0, bh_r = reset_after ? b[static_cast<size_t>(3 * u) + jr] : 0.0;
    zg[jz] = apply(rec, xz[jz] + bx_z + inner[jz] + bh_z);
    rg[jz] = apply(rec, xz[jr] + bx_r + inner[jr] + bh_r);
  }
  std::vector<double> rh(static_cast<size_t>(u));
  for (int64_t j = 0; j < u; ++j) rh[static_cast<size_t>(j)] = rg[static_cast<size_t>(j)] * s.h[static_cast<size_t>(j)];
  const std::vector<double> rec_h = reset_after ? std::vector<double>() : matvec(rh, r, 2 * u, u);
  for (int64_t j = 0; j < u; ++j) {
    const auto jj = static_cast<size_t>(j), jh = static_cast<size_t>(2 * u + j);
    const double pre = reset_after ? xz[jh] + b[jh] + rg[jj] * (inner[jh] + b[static_cast<size_t>(3 * u) + jh]) : xz[jh] + b[jh] + rec_h[jj];
    const double hh = apply(act, pre);
    e.h.push_back(zg[jj] * s.h[jj] + (1.0 - zg[jj]) * hh);
  }
  return e;
}

bool close(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) if (!(std::fabs(a[i] - b[i]) <= 1e-6 * (1.0 + std::fabs(b[i])))) return false;  // float activation constants (1/6)
  return true;
}

std::vector<float> to_float(const std::vector<double>& v) { return {v.begin(), v.end()}; }

}  // namespace

RecognisedCell recognise_cell(const tensorflow::FunctionDef& body, const std::vector<LoopVar>& vars, int64_t features, const std::string& where) {
  std::vector<int> states, weights;
  int input = -1, output = -1;
  for (size_t i = 0; i < vars.size(); ++i) {
    switch (vars[i].role) {
      case LoopVar::Role::State: states.push_back(static_cast<int>(i)); break;
      case LoopVar::Role::Weight: weights.push_back(static_cast<int>(i)); break;
      case LoopVar::Role::Input: input = static_cast<int>(i); break;
      case LoopVar::Role::Output: output = static_cast<int>(i); break;
      default: break;
    }
  }
  const bool lstm = states.size() == 2;
  if ((states.size() != 1 && !lstm) || input < 0 || output < 0) {
    throw Error(where + ": loop is not a recurrent layer (expects an input list, an output list and one or two [1, units] states)");
  }
  const TfTensor& s0 = vars[static_cast<size_t>(states[0])].tensor;
  if (s0.shape.size() != 2 || s0.shape[0] != 1) throw Error(where + ": recurrent state of shape " + tf_shape_str(s0.shape));
  const int64_t u = s0.shape[1], gates = lstm ? 4 : 3;
  for (int s : states) {
    for (double v : vars[static_cast<size_t>(s)].tensor.values) if (v != 0.0) throw Error(where + ": initial recurrent state is not zero");
  }
  std::vector<int> kernels, recurrents, biases;
  for (int w : weights) {
    const auto& sh = vars[static_cast<size_t>(w)].tensor.shape;
    if (sh.size() == 2 && sh[0] == features && sh[1] == gates * u) kernels.push_back(w);
    if (sh.size() == 2 && sh[0] == u && sh[1] == gates * u) recurrents.push_back(w);
    if ((sh.size() == 1 && sh[0] == gates * u) || (!lstm && sh.size() == 2 && sh[0] == 2 && sh[1] == gates * u)) biases.push_back(w);
  }
  if (kernels.empty() || recurrents.empty() || biases.size() > (lstm ? 1u : 2u)) {
    throw Error(where + ": the loop's weights do not have " + (lstm ? "LSTM" : "GRU") + " shapes for " + std::to_string(u) + " units");
  }
  // One run of the body on random inputs, states and list contents.
  std::mt19937 rng(12345);
  std::uniform_real_distribution<double> dist(-1.5, 1.5);
  std::vector<LoopVar> sample = vars;
  Sample s;
  for (auto& item : sample[static_cast<size_t>(input)].items) {
    for (double& v : item.values) v = dist(rng);
  }
  if (sample[static_cast<size_t>(input)].items.empty()) throw Error(where + ": empty input sequence");
  for (int st : states) for (double& v : sample[static_cast<size_t>(st)].tensor.values) v = dist(rng);
  const std::vector<LoopVar> next = run_loop_body(body, sample, where);
  s.x = sample[static_cast<size_t>(input)].items[0].values;
  const auto& written = next[static_cast<size_t>(output)].items;
  if (written.empty()) throw Error(where + ": loop writes no output");
  const std::vector<double> out0 = written[0].values;

  for (int hi = 0; hi < static_cast<int>(states.size()); ++hi) {
    const int h_var = states[static_cast<size_t>(hi)], c_var = lstm ? states[static_cast<size_t>(1 - hi)] : -1;
    s.h = sample[static_cast<size_t>(h_var)].tensor.values;
    s.c = lstm ? sample[static_cast<size_t>(c_var)].tensor.values : std::vector<double>();
    const auto& new_h = next[static_cast<size_t>(h_var)].tensor.values;
    for (int kv : kernels) for (int rv : recurrents) {
      if (kv == rv) continue;
      const TfTensor& k = vars[static_cast<size_t>(kv)].tensor;
      const TfTensor& r = vars[static_cast<size_t>(rv)].tensor;
      // Bias candidates: (values in the Keras layout, reset_after). tf_keras GRUs pass the
      // input and recurrent biases as two loop variables.
      std::vector<std::pair<std::vector<double>, bool>> bias_options;
      const size_t gu = static_cast<size_t>(gates * u);
      if (biases.empty()) {
        bias_options.push_back({std::vector<double>(lstm ? gu : 2 * gu, 0.0), true});
        if (!lstm) bias_options.push_back({std::vector<double>(gu, 0.0), false});
      } else if (biases.size() == 1) {
        const TfTensor& bt = vars[static_cast<size_t>(biases[0])].tensor;
        bias_options.push_back({bt.values, lstm || bt.shape.size() == 2});
      } else {
        for (int first = 0; first < 2; ++first) {
          std::vector<double> b = vars[static_cast<size_t>(biases[static_cast<size_t>(first)])].tensor.values;
          const auto& second = vars[static_cast<size_t>(biases[static_cast<size_t>(1 - first)])].tensor.values;
          b.insert(b.end(), second.begin(), second.end());
          bias_options.push_back({b, true});
        }
      }
      for (const auto& [b, reset_after] : bias_options) {
        for (const Candidate& act : candidates()) for (const Candidate& rec : candidates()) {
          const Expected e = lstm ? lstm_ref(s, k, r, b, u, act.spec, rec.spec) : gru_ref(s, k, r, b, u, reset_after, act.spec, rec.spec);
          if (!close(new_h, e.h) || !close(out0, e.h)) continue;
          if (lstm && !close(next[static_cast<size_t>(c_var)].tensor.values, e.c)) continue;
          RecognisedCell cell;
          cell.kind = lstm ? OpKind::LSTM : OpKind::GRU;
          cell.units = static_cast<int>(u);
          cell.reset_after = reset_after;
          cell.activation = act.spec;
          cell.recurrent_activation = rec.spec;
          cell.h_var = h_var;
          cell.c_var = c_var;
          const int ui = static_cast<int>(u), fi = static_cast<int>(features), gi = static_cast<int>(gates);
          cell.weights = {Weight{{fi, gi * ui}, to_float(k.values)}, Weight{{ui, gi * ui}, to_float(r.values)}};
          if (!lstm && reset_after) cell.weights.push_back(Weight{{2, gi * ui}, to_float(b)});
          else cell.weights.push_back(Weight{{gi * ui}, to_float(b)});
          return cell;
        }
      }
    }
  }
  throw Error(where + ": loop body '" + body.signature().name() + "' is not a Keras " + (lstm ? "LSTM" : "GRU") +
              " cell (gate order " + (lstm ? "i, f, c, o" : "z, r, h") + ") with any supported activations");
}

}  // namespace tickinfer::formats
