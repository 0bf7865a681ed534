// compile_graph(): Graph -> PlanLayout + PackedWeights -> GraphPlan. Resolves shapes for the
// chosen mode, folds BatchNormalization, packs weights for the kernels, assigns every tensor an
// arena offset and emits the step list.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/graph_plan.hpp"
#include "engine/sparse_choice.hpp"
#include "engine/stream_check.hpp"

namespace tickinfer::engine {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// W (K x N) row-major -> the shared packed gemv layout.
const float* pack(PackedWeights& pw, const float* w, int K, int N) {
  AlignedBuffer b(kernels::packed_floats(K, N));
  kernels::pack_weights(w, K, N, b.data());
  return pw.add(std::move(b));
}

const float* copy_vec(PackedWeights& pw, const std::vector<float>& v) {
  AlignedBuffer b(v.size());
  std::copy(v.begin(), v.end(), b.data());
  return pw.add(std::move(b));
}

// Columns [c0, c0 + n) of a (K x N) row-major matrix.
std::vector<float> columns(const Weight& w, int c0, int n) {
  const int K = w.shape[0], N = w.shape[1];
  std::vector<float> out(static_cast<size_t>(K) * n);
  for (int k = 0; k < K; ++k) {
    std::copy_n(w.data.begin() + static_cast<size_t>(k) * N + c0, n, out.begin() + static_cast<size_t>(k) * n);
  }
  return out;
}

// A relu that a gemv clamp expresses exactly, or linear.
bool clamp_for(const ActivationSpec& a, float& lo, float& hi) {
  if (a.kind == ActKind::Linear) {
    lo = -kInf, hi = kInf;
    return true;
  }
  if (a.kind == ActKind::Relu && a.alpha == 0.0f && a.threshold == 0.0f) {
    lo = 0.0f, hi = a.max_value;
    return true;
  }
  return false;
}

// FLOPs (2 per multiply-accumulate) and weight bytes of one run of the emitted steps.
// Weights a layer could reuse across rows (Dense over a sequence, Conv1D positions) count
// once; recurrent weights count once per time step, since each step depends on the last.
void count_cost(PlanLayout& layout) {
  for (const Step& s : layout.steps) {
    const int64_t k = s.in_width, n = s.out_width, T = s.steps;  // recurrent: n = units
    int64_t macs = 0, weights = 0;
    switch (s.kind) {
      case StepKind::Dense:
        macs = s.rows * k * n;
        // A sparse form reads its kept blocks and their indices instead.
        weights = (s.sparse_kernel ? static_cast<int64_t>(s.sparse_kernel->panels.bytes() / 4) : k * n) + n;
        break;
      case StepKind::Lstm:
        macs = T * (k + n) * 4 * n;
        // Each step needs all recurrent weights after the previous step: read T times.
        weights = T * ((s.sparse_kernel ? static_cast<int64_t>(s.sparse_kernel->panels.bytes() / 4) : (k + n) * 4 * n) +
                       4 * n);
        break;
      case StepKind::LstmWindow:
        // From a zero state the first step has no h U: W and b T times, U T - 1 times.
        macs = T * k * 4 * n + (T - 1) * n * 4 * n;
        weights = T * (k * 4 * n + 4 * n) + (T - 1) * n * 4 * n;
        break;
      case StepKind::Gru:
      case StepKind::GruClassic:
        macs = T * (k + n) * 3 * n;
        weights = T * ((k + n) * 3 * n + 6 * n);
        break;
      case StepKind::Conv1D:
        macs = T * s.window * s.in_ch * n;
        weights = int64_t{s.window} * s.in_ch * n + n;
        break;
      case StepKind::Affine:
      case StepKind::LayerNorm:
        weights = 2 * n;
        break;
      default:
        break;
    }
    layout.flops += 2 * macs;
    layout.weight_bytes += weights * static_cast<int64_t>(sizeof(float));
  }
}

class Compiler {
 public:
  Compiler(Graph g, const CompileOptions& opt, const kernels::KernelSet& ks)
      : g_(std::move(g)), opt_(opt) {
    L_.mode = opt.mode;
    L_.kernels = &ks;
  }

  void run(PackedWeights& pw) {
    pw_ = &pw;
    count_consumers();
    refs_.resize(g_.nodes.size());
    for (size_t i = 0; i < g_.nodes.size(); ++i) emit(static_cast<int>(i));
    for (int o : g_.outputs) {
      L_.outputs.push_back(refs_[o]);
      L_.output_shapes.push_back(g_.nodes[o].shape);
    }
    for (int in : g_.inputs) L_.input_shapes.push_back(stream_shape(g_.nodes[in].shape));
    count_cost(L_);
  }

  PlanLayout take() { return std::move(L_); }

 private:
  // In stream mode a sequence input [1, F] is fed one step at a time as [F].
  Shape stream_shape(const Shape& s) const {
    if (opt_.mode == RecurrentMode::Stream && s.size() == 2 && s[0] == 1) return {s[1]};
    return s;
  }

  void count_consumers() {
    consumers_.assign(g_.nodes.size(), 0);
    for (const Node& n : g_.nodes) {
      for (int in : n.inputs) ++consumers_[in];
    }
    for (int o : g_.outputs) ++consumers_[o];  // an output can never be folded away
  }

  uint32_t alloc(int64_t floats) {
    const uint32_t off = static_cast<uint32_t>(L_.arena_floats);
    L_.arena_floats += static_cast<size_t>((floats + 15) / 16 * 16);  // keep 64-byte alignment
    return off;
  }
  TensorRef new_tensor(const Node& n) { return TensorRef{0, alloc(shape_size(n.shape))}; }

  const Node& in_node(const Node& n, size_t i = 0) const { return g_.nodes[n.inputs[i]]; }
  TensorRef in_ref(const Node& n, size_t i = 0) const { return refs_[n.inputs[i]]; }

  // An activation of node n's shape from in to out (the same tensor: in place): softmax over the
  // last axis, anything else elementwise.
  void emit_activation(const Node& n, TensorRef in, TensorRef out) {
    const ActivationSpec& a = n.activation;
    Step s;
    s.label = n.name;
    s.in = in;
    s.out = out;
    s.act = a;
    if (a.kind == ActKind::Softmax) {
      s.kind = StepKind::Softmax;
      s.out_width = n.shape.back();
      s.rows = static_cast<int>(shape_size(n.shape) / s.out_width);
    } else {
      s.kind = StepKind::Activation;
      s.out_width = static_cast<int>(shape_size(n.shape));
    }
    L_.steps.push_back(std::move(s));
  }

  // BatchNorm as y = x * scale + shift, per channel.
  static void bn_affine(const Node& bn, std::vector<float>& scale, std::vector<float>& shift) {
    const auto& gamma = bn.weights[0].data;
    const auto& beta = bn.weights[1].data;
    const auto& mean = bn.weights[2].data;
    const auto& var = bn.weights[3].data;
    scale.resize(gamma.size());
    shift.resize(gamma.size());
    for (size_t c = 0; c < gamma.size(); ++c) {
      scale[c] = gamma[c] / std::sqrt(var[c] + bn.epsilon);
      shift[c] = beta[c] - mean[c] * scale[c];
    }
  }

  // A BatchNorm can fold into its producer when the producer is a Dense/Conv1D with a linear
  // activation whose only consumer is this BatchNorm.
  bool foldable(const Node& bn) const {
    const Node& p = in_node(bn);
    return (p.kind == OpKind::Dense || p.kind == OpKind::Conv1D) &&
           p.activation.kind == ActKind::Linear && consumers_[bn.inputs[0]] == 1;
  }

  void emit(int idx) {
    const Node& n = g_.nodes[idx];
    switch (n.kind) {
      case OpKind::Input: {
        const auto pos = std::find(g_.inputs.begin(), g_.inputs.end(), idx) - g_.inputs.begin();
        refs_[idx] = TensorRef{static_cast<uint32_t>(1 + pos), 0};
        return;
      }
      case OpKind::Identity:
      case OpKind::Flatten:
      case OpKind::Reshape:
        refs_[idx] = in_ref(n);  // same floats, new shape
        return;
      case OpKind::Activation:
        if (n.activation.kind == ActKind::Linear) {
          refs_[idx] = in_ref(n);
          return;
        }
        refs_[idx] = new_tensor(n);
        emit_activation(n, in_ref(n), refs_[idx]);
        return;
      case OpKind::Dense: return emit_dense(idx);
      case OpKind::BatchNorm: return emit_batchnorm(idx);
      case OpKind::LayerNorm: return emit_layer_norm(idx);
      case OpKind::LSTM: return emit_lstm(idx);
      case OpKind::GRU: return emit_gru(idx);
      case OpKind::Conv1D: return emit_conv(idx);
      case OpKind::MaxPool1D:
      case OpKind::AvgPool1D:
      case OpKind::GlobalAvgPool1D:
      case OpKind::GlobalMaxPool1D: return emit_pool(idx);
      case OpKind::Add:
      case OpKind::Subtract:
      case OpKind::Multiply: return emit_elementwise(idx);
      case OpKind::Concatenate: return emit_concat(idx);
    }
  }

  void emit_layer_norm(int idx) {
    const Node& n = g_.nodes[idx];
    refs_[idx] = new_tensor(n);
    Step s;
    s.kind = StepKind::LayerNorm;
    s.label = n.name;
    s.in = in_ref(n);
    s.out = refs_[idx];
    s.out_width = n.shape.back();
    s.rows = static_cast<int>(shape_size(n.shape) / s.out_width);
    s.scale = copy_vec(*pw_, n.weights[0].data);  // gamma
    s.shift = copy_vec(*pw_, n.weights[1].data);  // beta
    s.epsilon = n.epsilon;
    L_.steps.push_back(std::move(s));
  }

  // Add / Subtract / Multiply of equal shapes: in op rhs, then op each further input.
  void emit_elementwise(int idx) {
    const Node& n = g_.nodes[idx];
    refs_[idx] = new_tensor(n);
    Step s;
    s.kind = n.kind == OpKind::Add ? StepKind::Add : n.kind == OpKind::Subtract ? StepKind::Sub : StepKind::Mul;
    s.label = n.name;
    s.in = in_ref(n, 0);
    s.rhs = in_ref(n, 1);
    for (size_t i = 2; i < n.inputs.size(); ++i) s.extra_inputs.push_back(in_ref(n, i));
    s.out = refs_[idx];
    s.out_width = static_cast<int>(shape_size(n.shape));
    L_.steps.push_back(std::move(s));
  }

  void emit_concat(int idx) {
    const Node& n = g_.nodes[idx];
    refs_[idx] = new_tensor(n);
    const int axis = n.axis - 1;  // infer_shapes left the Keras (batched) convention
    Step s;
    s.kind = StepKind::Concat;
    s.label = n.name;
    s.out = refs_[idx];
    int64_t outer = 1;
    for (int d = 0; d < axis; ++d) outer *= n.shape[d];
    s.rows = static_cast<int>(outer);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      s.extra_inputs.push_back(in_ref(n, i));
      s.concat_widths.push_back(static_cast<int>(shape_size(in_node(n, i).shape) / outer));
    }
    L_.steps.push_back(std::move(s));
  }

  // The block-sparse form of a matrix when the options and a measurement say it pays (sparse_choice.hpp).
  const SparseWeights* sparse_form(const float* w, const float* packed, int K, int N, const char* what,
                                   std::string& note) {
    return choose_sparse_form(*pw_, *L_.kernels, opt_.sparse, w, packed, K, N, what, note);
  }

  // Appends a Dense/Conv1D step and its activation: a relu the gemv clamp expresses exactly is
  // fused into it (no step), any other non-linear activation follows in place.
  void emit_with_activation(const Node& n, Step s) {
    const TensorRef out = s.out;
    const bool fused = clamp_for(n.activation, s.clamp_lo, s.clamp_hi);
    if (!fused) s.clamp_lo = -kInf, s.clamp_hi = kInf;
    L_.steps.push_back(std::move(s));
    if (!fused) emit_activation(n, out, out);
  }

  // Finds the BatchNorm that will fold into node idx, if any.
  const Node* folded_bn(int idx) const {
    for (const Node& m : g_.nodes) {
      if (m.kind == OpKind::BatchNorm && m.inputs.size() == 1 && m.inputs[0] == idx && foldable(m)) {
        return &m;
      }
    }
    return nullptr;
  }

  // Kernel (K x N) and bias with a following BatchNorm folded in: W' = W * scale (per column),
  // b' = b * scale + shift.
  void fold(const Node* bn, std::vector<float>& w, std::vector<float>& b, int N) {
    if (!bn) return;
    std::vector<float> scale, shift;
    bn_affine(*bn, scale, shift);
    for (size_t i = 0; i < w.size(); ++i) w[i] *= scale[i % N];
    for (int j = 0; j < N; ++j) b[j] = b[j] * scale[j] + shift[j];
  }

  void emit_dense(int idx) {
    const Node& n = g_.nodes[idx];
    const int K = in_node(n).shape.back(), N = n.units;
    std::vector<float> w = n.weights[0].data, b = n.weights[1].data;
    fold(folded_bn(idx), w, b, N);
    refs_[idx] = new_tensor(n);
    Step s;
    s.kind = StepKind::Dense;
    s.label = n.name;
    s.in = in_ref(n);
    s.out = refs_[idx];
    s.in_width = K;
    s.out_width = N;
    s.rows = static_cast<int>(shape_size(n.shape) / N);
    s.kernel = pack(*pw_, w.data(), K, N);
    s.sparse_kernel = sparse_form(w.data(), s.kernel, K, N, "kernel", s.sparse_note);
    s.bias = copy_vec(*pw_, b);
    emit_with_activation(n, std::move(s));
  }

  void emit_batchnorm(int idx) {
    const Node& n = g_.nodes[idx];
    if (foldable(n)) {
      refs_[idx] = in_ref(n);  // the producer already applied it
      return;
    }
    std::vector<float> scale, shift;
    bn_affine(n, scale, shift);
    refs_[idx] = new_tensor(n);
    Step s;
    s.kind = StepKind::Affine;
    s.label = n.name;
    s.in = in_ref(n);
    s.out = refs_[idx];
    s.out_width = n.shape.back();
    s.rows = static_cast<int>(shape_size(n.shape) / s.out_width);
    s.scale = copy_vec(*pw_, scale);
    s.shift = copy_vec(*pw_, shift);
    L_.steps.push_back(std::move(s));
  }

  void recurrent_common(const Node& n, Step& s, int state_floats, int scratch_floats) {
    const Shape& in = in_node(n).shape;
    s.label = n.name;
    s.in = in_ref(n);
    s.out = refs_[&n - g_.nodes.data()];
    s.in_width = in[1];
    s.out_width = n.units;
    s.steps = in[0];
    s.return_sequences = n.return_sequences;
    s.act = n.activation;
    s.rec = n.recurrent_activation;
    s.state = alloc(state_floats);
    s.scratch = alloc(scratch_floats);
    s.zero_state = opt_.mode == RecurrentMode::Window;
    L_.state_ranges.emplace_back(s.state, static_cast<uint32_t>(state_floats));
  }

  void emit_lstm(int idx) {
    const Node& n = g_.nodes[idx];
    refs_[idx] = new_tensor(n);
    const int in = in_node(n).shape[1], u = n.units, T = in_node(n).shape[0];
    Step s;
    s.bias = copy_vec(*pw_, n.weights[2].data);
    // A clip that cannot act is dropped (the fused cell is faster): from a zero state with gates
    // in [0, 1] and tanh in [-1, 1], |c| grows by at most 1 per step (exactly so in float too),
    // so a window of T <= cell_clip steps never reaches it.
    const bool bounded = n.recurrent_activation.kind == ActKind::Sigmoid && n.activation.kind == ActKind::Tanh;
    const bool clip_inactive = opt_.mode == RecurrentMode::Window && bounded && T <= n.cell_clip;
    s.cell_clip = clip_inactive ? 0.0f : n.cell_clip;
    if (opt_.mode == RecurrentMode::Window) {
      // Window: x W + b for all T steps first (W is small and stays in cache), then only h U
      // per step, which is the serial part. State: h, c. Scratch: the T projected rows.
      s.kind = StepKind::LstmWindow;
      recurrent_common(n, s, 2 * u, T * 4 * u);
      s.kernel = pack(*pw_, n.weights[0].data.data(), in, 4 * u);
      s.recurrent_kernel = pack(*pw_, n.weights[1].data.data(), u, 4 * u);
      s.sparse_kernel = sparse_form(n.weights[0].data.data(), s.kernel, in, 4 * u, "kernel", s.sparse_note);
      s.sparse_recurrent =
          sparse_form(n.weights[1].data.data(), s.recurrent_kernel, u, 4 * u, "recurrent_kernel", s.sparse_note);
    } else {
      // Stream: [W; U] stacked so one gemv over [x | h] computes x W + h U.
      std::vector<float> wu(static_cast<size_t>(in + u) * 4 * u);
      std::copy(n.weights[0].data.begin(), n.weights[0].data.end(), wu.begin());
      std::copy(n.weights[1].data.begin(), n.weights[1].data.end(),
                wu.begin() + static_cast<ptrdiff_t>(n.weights[0].data.size()));
      s.kind = StepKind::Lstm;
      recurrent_common(n, s, in + 2 * u, 4 * u);
      s.kernel = pack(*pw_, wu.data(), in + u, 4 * u);
      s.sparse_kernel = sparse_form(wu.data(), s.kernel, in + u, 4 * u, "[kernel; recurrent_kernel]", s.sparse_note);
    }
    L_.steps.push_back(std::move(s));
  }

  void emit_gru(int idx) {
    const Node& n = g_.nodes[idx];
    refs_[idx] = new_tensor(n);
    const int in = in_node(n).shape[1], u = n.units;
    Step s;
    s.kernel = pack(*pw_, n.weights[0].data.data(), in, 3 * u);
    if (n.reset_after) {
      s.kind = StepKind::Gru;
      recurrent_common(n, s, u, 6 * u);
      const auto& bias = n.weights[2].data;  // (2, 3u): input bias, then recurrent bias
      s.bias = copy_vec(*pw_, std::vector<float>(bias.begin(), bias.begin() + 3 * u));
      s.recurrent_kernel = pack(*pw_, n.weights[1].data.data(), u, 3 * u);
      s.sparse_kernel = sparse_form(n.weights[0].data.data(), s.kernel, in, 3 * u, "kernel", s.sparse_note);
      s.sparse_recurrent =
          sparse_form(n.weights[1].data.data(), s.recurrent_kernel, u, 3 * u, "recurrent_kernel", s.sparse_note);
      s.recurrent_bias = copy_vec(*pw_, std::vector<float>(bias.begin() + 3 * u, bias.end()));
    } else {
      s.kind = StepKind::GruClassic;
      recurrent_common(n, s, u, 4 * u);
      s.bias = copy_vec(*pw_, n.weights[2].data);
      const std::vector<float> zr = columns(n.weights[1], 0, 2 * u);
      const std::vector<float> hcol = columns(n.weights[1], 2 * u, u);
      s.recurrent_kernel = pack(*pw_, zr.data(), u, 2 * u);
      s.recurrent_kernel_h = pack(*pw_, hcol.data(), u, u);
    }
    L_.steps.push_back(std::move(s));
  }

  void emit_conv(int idx) {
    const Node& n = g_.nodes[idx];
    const Shape& in = in_node(n).shape;
    const int k = n.kernel_size, C = in[1], F = n.units;
    std::vector<float> w = n.weights[0].data, b = n.weights[1].data;  // (k, C, F) == (k*C, F)
    fold(folded_bn(idx), w, b, F);
    refs_[idx] = new_tensor(n);
    Step s;
    s.kind = StepKind::Conv1D;
    s.label = n.name;
    s.in = in_ref(n);
    s.out = refs_[idx];
    s.in_len = in[0];
    s.in_ch = C;
    s.window = k;
    s.stride = n.stride;
    s.dilation = n.dilation;
    s.out_width = F;
    s.steps = n.shape[0];
    const int span = (k - 1) * n.dilation + 1;
    s.pad_left = pad_left(n.padding, s.in_len, s.steps, span, n.stride);
    // A block's input span with its padding (gemm_chain), or one position's gathered taps (gemv).
    const int64_t block_span = int64_t{kConvBlockRows - 1} * n.stride + span;
    s.scratch = alloc(std::max(block_span, int64_t{k}) * C);
    s.kernel = pack(*pw_, w.data(), k * C, F);
    s.bias = copy_vec(*pw_, b);
    emit_with_activation(n, std::move(s));
  }

  // Left padding as TensorFlow chooses it: SAME splits the total with the extra on the right;
  // causal pads the whole receptive field on the left.
  static int pad_left(Padding p, int len, int out_len, int span, int stride) {
    if (p == Padding::Causal) return span - 1;
    if (p == Padding::Same) return std::max((out_len - 1) * stride + span - len, 0) / 2;
    return 0;
  }

  void emit_pool(int idx) {
    const Node& n = g_.nodes[idx];
    const Shape& in = in_node(n).shape;
    refs_[idx] = new_tensor(n);
    Step s;
    s.label = n.name;
    s.in = in_ref(n);
    s.out = refs_[idx];
    s.in_len = in[0];
    s.in_ch = in[1];
    switch (n.kind) {
      case OpKind::MaxPool1D: s.kind = StepKind::MaxPool; break;
      case OpKind::AvgPool1D: s.kind = StepKind::AvgPool; break;
      case OpKind::GlobalAvgPool1D: s.kind = StepKind::GlobalAvgPool; break;
      default: s.kind = StepKind::GlobalMaxPool; break;
    }
    if (n.kind == OpKind::MaxPool1D || n.kind == OpKind::AvgPool1D) {
      s.window = n.pool_size;
      s.stride = n.pool_stride;
      s.steps = n.shape[0];
      s.pad_left = pad_left(n.padding, s.in_len, s.steps, n.pool_size, n.pool_stride);
    }
    L_.steps.push_back(std::move(s));
  }

  Graph g_;
  CompileOptions opt_;
  PlanLayout L_;
  PackedWeights* pw_ = nullptr;
  std::vector<TensorRef> refs_;
  std::vector<int> consumers_;
};

// Substitutes unknown sequence lengths and, in stream mode, makes every sequence input one
// step long.
Graph resolve_for_mode(const Graph& src, const CompileOptions& opt) {
  Graph g = src;
  for (int idx : g.inputs) {
    Node& in = g.nodes[idx];
    const bool sequence = in.shape.size() == 2;
    if (opt.mode == RecurrentMode::Stream && sequence) {
      in.shape[0] = 1;
    }
    if (sequence && in.shape[0] < 1 && opt.window_length > 0) in.shape[0] = opt.window_length;
    for (int& d : in.shape) {
      if (d < 1) {
        throw Error("input '" + in.name + "' has shape " + shape_str(in.shape) +
                    " with an unknown dimension; set a window length (CompileOptions::window_length, "
                    "--window) or use stream mode");
      }
    }
  }
  infer_shapes(g);
  if (opt.mode == RecurrentMode::Stream) check_streamable(g);
  return g;
}

}  // namespace

std::unique_ptr<GraphPlan> compile_graph(const Graph& graph, const CompileOptions& options) {
  Compiler c(resolve_for_mode(graph, options), options, kernels::kernel_set(kernels::resolve_isa(options.isa)));
  auto weights = std::make_shared<PackedWeights>();
  c.run(*weights);
  return std::make_unique<GraphPlan>(std::make_shared<const PlanLayout>(c.take()), std::move(weights));
}

}  // namespace tickinfer::engine
