// plan_row_updates (incremental_rows.hpp): the changed rows of every tensor, from the inputs
// (their last row is new) forward through the ops.
#include "engine/lowering/incremental_rows.hpp"

#include <algorithm>

namespace tickinfer::engine {

namespace {

struct Changed {
  int T = 0;              // time rows (0: not followed)
  int front = 0, back = 0;
};

RowForm form_of(StepKind k) {
  switch (k) {
    case StepKind::Conv1D:
    case StepKind::Conv2D:
    case StepKind::DepthwiseConv2D:
    case StepKind::MaxPool:
    case StepKind::AvgPool:
    case StepKind::MaxPool2D:
    case StepKind::AvgPool2D: return RowForm::Windowed;
    case StepKind::Dense:
    case StepKind::Softmax:
    case StepKind::Affine:
    case StepKind::LayerNorm: return RowForm::Rows;
    case StepKind::Activation:
    case StepKind::Add:
    case StepKind::Sub:
    case StepKind::Mul: return RowForm::Elements;
    case StepKind::Concat: return RowForm::Blocks;
    default: return RowForm::None;
  }
}

const char* whole_window_reason(StepKind k) {
  switch (k) {
    case StepKind::Lstm:
    case StepKind::LstmWindow:
    case StepKind::Gru:
    case StepKind::GruClassic: return "a recurrent layer's state runs from the window's first row";
    case StepKind::Attention: return "attention reads every row of the window";
    case StepKind::GlobalAvgPool:
    case StepKind::GlobalMaxPool: return "global pooling reads every row of the window";
    case StepKind::Pad:
    case StepKind::Transpose: return "padding and transposes are not followed row by row";
    case StepKind::ReverseRows: return "reading the window backwards moves every row when one arrives";
    default: return "it does not work row by row";
  }
}

class Analysis {
 public:
  explicit Analysis(const LoweredGraph& g) : g_(g), changed_(g.tensors.size()) {
    for (size_t t = 0; t < g.tensors.size(); ++t) {
      const LoweredTensor& x = g.tensors[t];
      if (x.input >= 0 && x.shape.size() >= 2 && x.shape[0] >= 2) changed_[t] = {x.shape[0], 0, 1};
    }
  }

  std::vector<RowUpdate> run() {
    std::vector<RowUpdate> ups;
    for (const LoweredOp& op : g_.ops) ups.push_back(update(op));
    return ups;
  }

  std::vector<int> time_rows() const {
    std::vector<int> r;
    for (const Changed& c : changed_) r.push_back(c.T);
    return r;
  }

 private:
  // Floats per time row of tensor t (its time rows known).
  int64_t row_floats(int t) const { return g_.tensors[t].floats / changed_[t].T; }

  RowUpdate off(const LoweredOp& op, std::string why) {
    RowUpdate u;
    u.why = std::move(why);
    if (op.out >= 0) changed_[op.out] = {};  // (an in-place op makes its input tensor whole too)
    return u;
  }

  RowUpdate update(const LoweredOp& op) {
    const RowForm form = form_of(op.kind);
    if (form == RowForm::None) return off(op, whole_window_reason(op.kind));
    std::vector<int> ins;
    if (op.in >= 0) ins.push_back(op.in);
    if (op.rhs >= 0) ins.push_back(op.rhs);
    for (int t : op.extra_inputs) {
      if (std::find(ins.begin(), ins.end(), t) == ins.end()) ins.push_back(t);
    }
    if (ins.empty()) return off(op, "it reads no sequence");
    Changed in = changed_[ins[0]];
    for (int t : ins) {
      const Changed& c = changed_[t];
      if (c.T == 0) return off(op, "it reads a tensor that is recomputed whole");
      if (c.T != in.T) return off(op, "its inputs have different time lengths");
      in.front = std::max(in.front, c.front);
      in.back = std::max(in.back, c.back);
    }
    Changed out{in.T, in.front, in.back};
    const int64_t out_floats = g_.tensors[op.out].floats;
    if (form == RowForm::Windowed) {
      if (op.in_len != in.T) return off(op, "its time axis is not the window's");
      if (op.stride != 1) return off(op, "it is strided in time");
      const int64_t in_row = row_floats(op.in);
      const int64_t want_row = op.kind == StepKind::Conv1D || op.kind == StepKind::MaxPool || op.kind == StepKind::AvgPool
                                   ? op.in_ch
                                   : int64_t{op.in_w} * op.in_ch;
      if (in_row != want_row) return off(op, "its input rows are not the window's rows");
      const int span = (op.window - 1) * op.dilation + 1;
      out.T = op.steps;
      out.front = std::min(op.steps, in.front + std::max(op.pad_left, 0));
      out.back = std::clamp(op.steps - (in.T - in.back + op.pad_left - span + 1), 1, op.steps);
    } else {
      // Row-local: each time row of the output from the same time row of every input.
      for (int t : ins) {
        if (g_.tensors[t].floats % in.T != 0) return off(op, "its rows do not split by time");
      }
      if (out_floats % in.T != 0) return off(op, "its rows do not split by time");
      if (form == RowForm::Rows || form == RowForm::Blocks) {
        if (op.rows < in.T) {
          return off(op, op.kind == StepKind::Affine ? "its constant table varies along time"
                                                     : "it reads the whole window as one row (a Flatten before it)");
        }
        if (op.rows % in.T != 0) return off(op, "its rows do not split by time");
      }
      if (form == RowForm::Elements && op.out_width != out_floats) return off(op, "it does not cover its tensor");
    }
    if (out.front + out.back >= out.T) return off(op, "the window's move changes every row of its output");
    RowUpdate u;
    u.on = true;
    u.form = form;
    u.time_rows = out.T;
    u.front = out.front;
    u.back = out.back;
    changed_[op.out] = out;
    return u;
  }

  const LoweredGraph& g_;
  std::vector<Changed> changed_;
};

}  // namespace

std::vector<RowUpdate> plan_row_updates(const LoweredGraph& g) {
  if (g.mode != RecurrentMode::Window) {
    std::vector<RowUpdate> ups(g.ops.size());
    for (RowUpdate& u : ups) u.why = "stream mode";
    return ups;
  }
  return Analysis(g).run();
}

std::vector<int> tensor_time_rows(const LoweredGraph& g, const std::vector<RowUpdate>& ups) {
  std::vector<int> r(g.tensors.size(), 0);
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const LoweredTensor& x = g.tensors[t];
    if (x.input >= 0 && x.shape.size() >= 2 && x.shape[0] >= 2) r[t] = x.shape[0];
  }
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (ups[i].on) r[static_cast<size_t>(g.ops[i].out)] = ups[i].time_rows;
  }
  return r;
}

}  // namespace tickinfer::engine
