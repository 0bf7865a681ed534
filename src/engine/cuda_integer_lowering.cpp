#include "engine/cuda_integer_lowering.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "engine/cuda_integer_padding.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::engine {
namespace {

constexpr int64_t kAlign = 16;
int64_t align_up(int64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

// The parameter buffer: each piece 8-byte aligned (doubles and int32s read in place).
struct Params {
  std::vector<uint8_t>& bytes;
  template <class T>
  int64_t put(const T* data, size_t n) {
    const size_t at = (bytes.size() + 7) / 8 * 8;
    bytes.resize(at + n * sizeof(T));
    if (n) std::memcpy(bytes.data() + at, data, n * sizeof(T));
    return int64_t(at);
  }
  template <class T>
  int64_t put(const std::vector<T>& v) {
    return put(v.data(), v.size());
  }
};

// A gather that copies its one activation input whole and in order (RESHAPE, EXPAND_DIMS,
// SQUEEZE, a one-part CONCATENATION): its output can be its input's bytes, no step at all (every
// tensor is written once, so the two never differ).
bool is_identity(const tfl::Program& p, const tfl::IntegerForm& f) {
  if (f.kind != tfl::IntegerKind::Gather || f.inputs.size() != 1 || !f.input_tables.empty()) return false;
  const tfl::Tensor& x = p.tensors[size_t(f.inputs[0])];
  if (x.is_constant() || tfl::element_count(x.shape) != f.count) return false;
  for (size_t e = 0; e < f.source_input.size(); ++e)
    if (f.source_input[e] != 0 || f.source_element[e] != int32_t(e)) return false;
  return true;
}

// Where each tensor the steps touch lives in the arena: the constants a step reads as an
// operand first (they form the arena's image), then every activation, each on its own but for
// an identity's output, which is its input's bytes (is_identity).
class ArenaLayout {
 public:
  ArenaLayout(const tfl::Program& p, const std::vector<tfl::IntegerForm>& forms, const std::vector<bool>& identity,
              const std::vector<int>& inputs, const std::string& name)
      : p_(p) {
    std::set<int> written(inputs.begin(), inputs.end());
    std::vector<int> constants;
    std::vector<std::pair<int, int>> activations;  // (tensor, the tensor whose bytes it shares, or -1)
    for (int t : inputs) activations.push_back({t, -1});
    for (size_t i = 0; i < forms.size(); ++i) {
      const tfl::IntegerForm& f = forms[i];
      for (int t : f.inputs) {
        const tfl::Tensor& x = p.tensors[size_t(t)];
        if (x.is_constant()) {
          if (x.type != tfl::DType::I8) throw Error("--device cuda: model '" + name + "': constant '" + x.name + "' is not int8");
          constants.push_back(t);
        } else if (!written.count(t)) {
          throw Error("--device cuda: model '" + name + "': tensor '" + x.name +
                      "' is read before any op of the integer program writes it (state or a float input)");
        }
      }
      written.insert(f.output);
      activations.push_back({f.output, identity[i] ? f.inputs[0] : -1});
    }
    for (int t : constants) place(t);
    image_bytes_ = end_;
    for (const auto& [t, shares] : activations) {
      if (shares < 0) place(t);
      else if (!offset_.count(t)) offset_[t] = offset_.at(shares);
    }
    // An LSTM's state (reset by the step itself) and its gates, a region keyed by the step's number.
    for (size_t i = 0; i < forms.size(); ++i) {
      if (forms[i].kind != tfl::IntegerKind::Lstm) continue;
      place(forms[i].lstm.state_h);
      place(forms[i].lstm.state_c);
      place_bytes(scratch_key(i), 2 * int64_t(forms[i].lstm.rows));
    }
  }
  static int scratch_key(size_t step) { return -1 - int(step); }
  int64_t at(int t) const { return offset_.at(t); }
  int64_t bytes() const { return end_; }
  std::vector<uint8_t> image() const {
    std::vector<uint8_t> img(size_t(image_bytes_), 0);
    for (const auto& [t, off] : offset_) {
      if (t < 0 || off >= image_bytes_) continue;  // scratch, or not a constant
      const tfl::Tensor& x = p_.tensors[size_t(t)];
      if (x.is_constant()) std::memcpy(img.data() + off, x.data.data(), x.data.size());
    }
    return img;
  }

 private:
  void place(int t) {
    const tfl::Tensor& x = p_.tensors[size_t(t)];
    place_bytes(t, tfl::element_count(x.shape) * int64_t(tfl::dtype_size(x.type)));
  }
  void place_bytes(int key, int64_t bytes) {
    if (offset_.count(key)) return;
    offset_[key] = end_;
    end_ = align_up(end_ + std::max<int64_t>(bytes, 1));
  }
  const tfl::Program& p_;
  std::map<int, int64_t> offset_;
  int64_t end_ = 0, image_bytes_ = 0;
};

void requant_params(const tfl::IntegerForm& f, Params& P, cuda::IntegerStep& s) {
  s.requant = f.requant == tfl::RequantForm::Scaled   ? cuda::kRequantScaled
              : f.requant == tfl::RequantForm::Single ? cuda::kRequantSingle
                                                      : cuda::kRequantDouble;
  const size_t channels = f.requant == tfl::RequantForm::Scaled ? f.scale.size() : f.multiplier.size();
  s.per_channel = channels > 1;
  if (f.requant == tfl::RequantForm::Scaled) {
    s.scale = P.put(f.scale);
  } else {
    s.multiplier = P.put(f.multiplier);
    s.shift = P.put(f.shift);
  }
  s.in_offset = f.in_offset;
  s.out_zp = f.out_zp;
  s.lo = f.lo;
  s.hi = f.hi;
}

void geometry(const tfl::IntegerForm& f, cuda::IntegerStep& s) {
  s.batch = f.batch, s.units = f.units, s.depth = f.depth;
  s.in_h = f.in_h, s.in_w = f.in_w, s.in_c = f.in_c, s.out_h = f.out_h, s.out_w = f.out_w, s.out_c = f.out_c;
  s.filter_h = f.filter_h, s.filter_w = f.filter_w, s.stride_h = f.stride_h, s.stride_w = f.stride_w;
  s.dil_h = f.dil_h, s.dil_w = f.dil_w, s.pad_h = f.pad_h, s.pad_w = f.pad_w;
  s.depth_multiplier = f.depth_multiplier;
  s.outer = f.outer, s.reduced = f.reduced, s.inner = f.inner;
}

// The integer LSTM's step: its matrices, biases, per-row scales and tables into the parameters,
// its state and gates in the arena.
void lstm_step(const tfl::IntegerLstmForm& l, int64_t scratch, const ArenaLayout& L, Params& P, cuda::IntegerStep& s) {
  s.kind = cuda::IntKind::Lstm;
  s.batch = l.batch, s.lstm_time = l.time, s.depth = l.input, s.units = l.cell, s.rows = l.rows;
  s.time_major = l.time_major;
  for (int g = 0; g < 4; ++g) s.gate_row[g] = l.gate_row[g];
  s.weights = P.put(l.wx);
  s.weights_h = P.put(l.wh);
  s.bias = P.put(l.bias_x);
  s.bias_h = P.put(l.bias_h);
  s.multiplier = P.put(l.mult_x), s.shift = P.put(l.shift_x);
  s.multiplier_h = P.put(l.mult_h), s.shift_h = P.put(l.shift_h);
  std::vector<int16_t> tables;
  for (const int16_t* t : {l.sigmoid, l.tanh_gate, l.tanh_cell}) tables.insert(tables.end(), t, t + 65536);
  s.tables = P.put(tables);
  s.cell_shift = l.cell_shift, s.cell_clip = l.cell_clip;
  s.hidden_multiplier = l.hidden_multiplier, s.hidden_shift = l.hidden_shift;
  s.out_zp = l.hidden_zp;
  s.state_zp = l.state_zp;
  s.requant = l.elementwise == tfl::RequantForm::Single ? cuda::kRequantSingle : cuda::kRequantDouble;
  s.state = L.at(l.state_h);
  s.cell = L.at(l.state_c);
  s.scratch = scratch;
}

// Each filter row's sum: a unit's (FULLY_CONNECTED, rows of depth) or an output channel's at
// one tap (CONV_2D, rows of in_c), with int32's wrap-around as the reference's sums have it.
std::vector<int32_t> row_sums(const tfl::IntegerForm& f) {
  const int64_t len = f.kind == tfl::IntegerKind::FullyConnected ? f.depth : f.in_c;
  std::vector<int32_t> sums(size_t(len > 0 ? f.weight_count / len : 0), 0);
  for (size_t r = 0; r < sums.size(); ++r) {
    uint32_t sum = 0;
    for (int64_t k = 0; k < len; ++k) sum += uint32_t(int32_t(f.weights[int64_t(r) * len + k]));
    sums[r] = int32_t(sum);
  }
  return sums;
}

cuda::IntegerStep step_of(const tfl::Program& p, const tfl::IntegerForm& f, const ArenaLayout& L, Params& P,
                          size_t index) {
  cuda::IntegerStep s;
  s.count = f.count;
  s.out = L.at(f.output);
  if (!f.inputs.empty()) s.in = L.at(f.inputs[0]);
  geometry(f, s);
  switch (f.kind) {
    case tfl::IntegerKind::Gather: {
      s.kind = cuda::IntKind::Gather;
      std::vector<int32_t> source(f.source_input.size()), slot(f.source_input.size());
      for (size_t e = 0; e < source.size(); ++e) {
        const int32_t k = f.source_input[e];
        source[e] = k < 0 ? -1 : int32_t(L.at(f.inputs.at(size_t(k))) + f.source_element[e]);
        slot[e] = k < 0 ? 0 : k;
      }
      s.source = P.put(source);
      s.fill = f.fill;
      if (!f.input_tables.empty()) {
        std::vector<int8_t> tables;
        for (const auto& t : f.input_tables) tables.insert(tables.end(), t.begin(), t.end());
        s.table = P.put(tables);
        s.index_a = P.put(slot);
      }
      break;
    }
    case tfl::IntegerKind::Table:
      s.kind = cuda::IntKind::Table;
      s.table = P.put(f.table, 256);
      break;
    case tfl::IntegerKind::Binary:
      s.kind = cuda::IntKind::Binary;
      s.in2 = L.at(f.inputs.at(1));
      s.raw = f.raw == tfl::BinaryRaw::Add   ? cuda::kRawAdd
              : f.raw == tfl::BinaryRaw::Sub ? cuda::kRawSub
              : f.raw == tfl::BinaryRaw::Mul ? cuda::kRawMul
                                             : cuda::kRawSquaredDifference;
      s.table_a = P.put(f.table_a, 256);
      s.table_b = P.put(f.table_b, 256);
      s.off_a = f.off_a, s.off_b = f.off_b;
      if (!f.index_a.empty()) s.index_a = P.put(f.index_a), s.index_b = P.put(f.index_b);
      requant_params(f, P, s);
      break;
    case tfl::IntegerKind::FullyConnected:
    case tfl::IntegerKind::Conv2D:
    case tfl::IntegerKind::DepthwiseConv2D:
      s.kind = f.kind == tfl::IntegerKind::FullyConnected ? cuda::IntKind::FullyConnected
               : f.kind == tfl::IntegerKind::Conv2D       ? cuda::IntKind::Conv2D
                                                          : cuda::IntKind::DepthwiseConv2D;
      s.weights = P.put(f.weights, size_t(f.weight_count));
      if (f.kind != tfl::IntegerKind::DepthwiseConv2D) s.row_sums = P.put(row_sums(f));
      if (f.bias) s.bias = P.put(f.bias, size_t(f.kind == tfl::IntegerKind::FullyConnected ? f.units : f.out_c));
      requant_params(f, P, s);
      break;
    case tfl::IntegerKind::MaxPool:
    case tfl::IntegerKind::AvgPool:
      s.kind = f.kind == tfl::IntegerKind::MaxPool ? cuda::IntKind::MaxPool : cuda::IntKind::AvgPool;
      s.lo = f.lo, s.hi = f.hi;
      break;
    case tfl::IntegerKind::Reduce:
      s.kind = cuda::IntKind::Reduce;
      requant_params(f, P, s);
      break;
    case tfl::IntegerKind::Softmax:
      s.kind = cuda::IntKind::Softmax;
      s.table_a = P.put(f.table_a, 256);
      s.table_b = P.put(f.table_b, 256);
      break;
    case tfl::IntegerKind::Lstm:
      lstm_step(f.lstm, L.at(ArenaLayout::scratch_key(index)), L, P, s);
      break;
  }
  return s;
}

}  // namespace

cuda::IntegerProgram integer_program_from(const tfl::Interpreter& interp, const std::vector<size_t>& ops,
                                          const std::vector<int>& inputs, const std::vector<int>& outputs,
                                          const std::string& name) {
  const tfl::Program& p = interp.program();
  std::vector<tfl::IntegerForm> forms;
  std::vector<std::string> labels;
  for (size_t i : ops) {
    const size_t before = forms.size();
    if (std::string why = interp.integer_forms(i, &forms); !why.empty())
      throw Error("--device cuda: model '" + name + "': " + why +
                  "; the CUDA integer program runs int8 FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D, pools, MEAN/SUM, "
                  "ADD/SUB/MUL/SQUARED_DIFFERENCE, SOFTMAX, the integer LSTM (without peephole, projection or CIFG), "
                  "table activations and the layout ops");
    for (size_t k = before; k < forms.size(); ++k)
      labels.push_back(std::string(tfl::op_name(p.ops[i].code)) + " '" + p.ops[i].label + "'");
  }
  std::vector<bool> identity(forms.size());
  for (size_t i = 0; i < forms.size(); ++i) identity[i] = is_identity(p, forms[i]);
  const std::vector<bool> folded = fold_padding(p, forms, identity, outputs);
  const ArenaLayout layout(p, forms, identity, inputs, name);
  cuda::IntegerProgram prog;
  prog.name = name;
  Params P{prog.params};
  for (size_t i = 0; i < forms.size(); ++i) {
    if (identity[i] || folded[i]) continue;  // its output is its input's bytes; a PAD a convolution does
    prog.steps.push_back(step_of(p, forms[i], layout, P, i));
    prog.labels.push_back(labels[i]);
  }
  prog.arena_bytes = layout.bytes();
  prog.arena_image = layout.image();
  for (int t : inputs) prog.inputs.push_back({layout.at(t), tfl::element_count(p.tensors[size_t(t)].shape)});
  for (int t : outputs) {
    // An output no op of the range writes (the program's input itself) is refused by at().
    try {
      prog.outputs.push_back({layout.at(t), tfl::element_count(p.tensors[size_t(t)].shape)});
    } catch (const std::out_of_range&) {
      throw Error("--device cuda: model '" + name + "': output '" + p.tensors[size_t(t)].name + "' is not written by the integer program");
    }
  }
  if (std::string e = cuda::integer_program_error(prog); !e.empty()) throw Error("--device cuda: model '" + name + "': " + e);
  return prog;
}

}  // namespace tickinfer::engine
