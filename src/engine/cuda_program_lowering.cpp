#include "engine/cuda_program_lowering.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "tickinfer/error.hpp"

namespace tickinfer::engine {
namespace {

cuda::DevKind dev_kind(StepKind k) {
  switch (k) {
    case StepKind::Dense: return cuda::DevKind::Dense;
    case StepKind::Activation: return cuda::DevKind::Activation;
    case StepKind::Softmax: return cuda::DevKind::Softmax;
    case StepKind::Affine: return cuda::DevKind::Affine;
    case StepKind::LayerNorm: return cuda::DevKind::LayerNorm;
    case StepKind::Lstm: return cuda::DevKind::Lstm;
    case StepKind::LstmWindow: return cuda::DevKind::LstmWindow;
    case StepKind::Gru: return cuda::DevKind::Gru;
    case StepKind::GruClassic: return cuda::DevKind::GruClassic;
    case StepKind::Conv1D: return cuda::DevKind::Conv1D;
    case StepKind::Conv2D: return cuda::DevKind::Conv2D;
    case StepKind::MaxPool: return cuda::DevKind::MaxPool;
    case StepKind::AvgPool: return cuda::DevKind::AvgPool;
    case StepKind::GlobalAvgPool: return cuda::DevKind::GlobalAvgPool;
    case StepKind::GlobalMaxPool: return cuda::DevKind::GlobalMaxPool;
    case StepKind::MaxPool2D: return cuda::DevKind::MaxPool2D;
    case StepKind::AvgPool2D: return cuda::DevKind::AvgPool2D;
    case StepKind::Add: return cuda::DevKind::Add;
    case StepKind::Sub: return cuda::DevKind::Sub;
    case StepKind::Mul: return cuda::DevKind::Mul;
    case StepKind::Concat: return cuda::DevKind::Concat;
    case StepKind::Attention: return cuda::DevKind::Attention;
    case StepKind::Pad: return cuda::DevKind::Pad;
    case StepKind::Transpose: return cuda::DevKind::Transpose;
    case StepKind::DepthwiseConv2D: return cuda::DevKind::DepthwiseConv2D;
    case StepKind::Slice: return cuda::DevKind::Slice;
    case StepKind::MatMul: return cuda::DevKind::MatMul;
    case StepKind::ReverseRows: return cuda::DevKind::ReverseRows;
  }
  return cuda::DevKind::Count;
}

cuda::DevAct dev_act(const ActivationSpec& a) {
  return {static_cast<int32_t>(a.kind), a.alpha, a.beta, a.max_value, a.threshold};
}

// Kept state and scratch floats per op, as the CPU steps size them (engine/steps/).
struct Room {
  int64_t state = 0, scratch = 0;
};
Room room(const LoweredOp& op) {
  const int64_t u = op.out_width;
  switch (op.kind) {
    case StepKind::Lstm: return {op.in_width + 2 * u, 4 * u};
    case StepKind::LstmWindow: return {2 * u, (op.projected ? 1 : int64_t{op.steps}) * 4 * u};
    case StepKind::Gru: return {u, 6 * u};
    case StepKind::GruClassic: return {u, 4 * u};
    case StepKind::Attention: {
      const AttentionParams& a = op.attention;
      return {a.stream ? int64_t{a.span} * a.heads * (a.key_dim + a.value_dim) + 2 : 0, 0};
    }
    default: return {};
  }
}

class Builder {
 public:
  Builder(const LoweredGraph& g, const StorageFormats& formats)
      : g_(g), formats_(formats), at_(g.tensors.size(), -1), readers_(g.tensors.size(), 0) {
    for (size_t t = 0; t < g.tensors.size(); ++t) {
      at_[t] = take(std::max<int64_t>(g.tensors[t].floats, 1));
      floats_.push_back(g.tensors[t].floats);
      writer_.emplace_back();
      fp32_only_.push_back(g.tensors[t].input >= 0);
    }
    for (int o : g.outputs) fp32_only_[size_t(o)] = true;
    auto read = [&](int t) {
      if (t >= 0) ++readers_[size_t(t)];
    };
    for (const LoweredOp& op : g.ops) {
      if (op.in != op.out) read(op.in);  // an in-place op rewrites its tensor, it is no second reader
      read(op.rhs);
      for (int e : op.extra_inputs) read(e);
    }
    for (int o : g.outputs) read(o);  // the caller reads an output
  }

  cuda::DeviceProgram build(const std::string& name) {
    p_.name = name;
    for (size_t t = 0; t < g_.tensors.size(); ++t) {
      const LoweredTensor& T = g_.tensors[t];
      if (T.input < 0) continue;
      if (p_.inputs.size() <= size_t(T.input)) p_.inputs.resize(size_t(T.input) + 1);
      p_.inputs[size_t(T.input)] = {at_[t], T.floats};
    }
    for (int o : g_.outputs) p_.outputs.push_back({at_[size_t(o)], g_.tensors[size_t(o)].floats});
    for (const LoweredOp& op : g_.ops) {
      if (wants_projection(op)) {
        add_projected(op);
      } else {
        add(op);
      }
    }
    place_tensors();
    for (const auto& named : formats_.by_layer) {
      const std::string& layer = named.first;
      if (std::none_of(g_.ops.begin(), g_.ops.end(), [&](const LoweredOp& op) { return op.label == layer; }))
        throw Error("--cuda-precision: the model has no layer '" + layer + "'");
    }
    p_.arena_floats = arena_;
    return std::move(p_);
  }

 private:
  int64_t take(int64_t floats) {
    const int64_t at = arena_;
    arena_ += (floats + 31) / 32 * 32;  // 128-byte aligned regions
    return at;
  }
  int64_t tensor(int id) const { return id < 0 ? -1 : at_[size_t(id)]; }
  int64_t weights(const float* data, size_t n) {
    if (n == 0) return -1;
    const int64_t at = int64_t(p_.weights.size());
    p_.weights.insert(p_.weights.end(), data, data + n);
    return at;
  }
  int64_t weights(const std::vector<float>& v) { return weights(v.data(), v.size()); }
  // A matrix in `format`: fp32 as weights(), or packed 16-bit values (two per float of the
  // buffer) at an offset counted in 16-bit units.
  int64_t matrix(const std::vector<float>& v, int32_t format) {
    if (format == cuda::kWeightsFp32 || v.empty()) return weights(v);
    const int64_t at = 2 * int64_t(p_.weights.size());
    std::vector<uint16_t> h(v.size() + v.size() % 2, 0);
    for (size_t i = 0; i < v.size(); ++i) h[i] = format == cuda::kWeightsBf16 ? cuda::float_to_bf16(v[i]) : cuda::float_to_fp16(v[i]);
    const size_t first = p_.weights.size();
    p_.weights.resize(first + h.size() / 2);
    std::memcpy(p_.weights.data() + first, h.data(), h.size() * sizeof(uint16_t));
    return at;
  }

  // A recurrent layer over a window computes every step's x W + b before its serial part: as a
  // Dense step over the whole grid instead of inside the recurrent step's one block.
  static bool wants_projection(const LoweredOp& op) {
    const bool window_rnn = op.kind == StepKind::LstmWindow || op.kind == StepKind::Gru || op.kind == StepKind::GruClassic;
    return window_rnn && !op.projected && op.steps > 1 && !op.kernel.empty();
  }

  void add_projected(const LoweredOp& op) {
    const int gates = op.kind == StepKind::LstmWindow ? 4 : 3;
    LoweredOp dense;
    dense.kind = StepKind::Dense;
    dense.label = op.label + std::string(kProjection);
    dense.rows = op.steps;
    dense.in_width = op.in_width;
    dense.out_width = gates * op.out_width;
    dense.in = op.in;
    dense.kernel = op.kernel;
    dense.bias = op.bias;
    const int64_t floats = int64_t{op.steps} * dense.out_width;
    const int projections = int(at_.size());
    at_.push_back(take(floats));
    floats_.push_back(floats);
    writer_.emplace_back();
    fp32_only_.push_back(false);
    readers_.push_back(1);  // the recurrent step
    dense.out = projections;
    add(dense);
    LoweredOp rnn = op;
    rnn.in = projections;
    rnn.projected = true;
    rnn.kernel = {};
    rnn.bias.clear();
    add(rnn);
  }

  // An activation of a Dense or convolution output becomes that step's epilogue, one kernel
  // fewer: in place (in == out: no step reads the tensor between the two, or it would read a
  // value the activation overwrites), or into its own tensor when it is the only reader of the
  // product's (the product then writes the activation's tensor).
  bool folded_into_producer(const LoweredOp& op) {
    if (op.kind != StepKind::Activation || op.act.kind == ActKind::Softmax) return false;
    if (op.in != op.out && readers_[size_t(op.in)] != 1) return false;
    const int64_t t = tensor(op.in);
    for (size_t i = p_.steps.size(); i-- > 0;) {
      cuda::DeviceStep& s = p_.steps[i];
      if (s.out != t) continue;
      const bool product = s.kind == cuda::DevKind::Dense || s.kind == cuda::DevKind::Conv1D ||
                           s.kind == cuda::DevKind::Conv2D || s.kind == cuda::DevKind::DepthwiseConv2D;
      if (!product || s.epilogue.kind != int32_t(ActKind::Linear)) return false;
      s.epilogue = dev_act(op.act);
      s.out = tensor(op.out);
      writer_[size_t(op.in)].clear();  // no step writes the product's own tensor any more
      writer_[size_t(op.out)] = op.label;
      p_.labels[i] += " + " + op.label;
      return true;
    }
    return false;
  }

  void add(const LoweredOp& op) {
    if (folded_into_producer(op)) return;
    const cuda::DevKind kind = dev_kind(op.kind);
    if (kind == cuda::DevKind::Count) throw Error("--device cuda: layer '" + op.label + "' has no CUDA step");
    cuda::DeviceStep s;
    s.kind = kind;
    s.in = tensor(op.in);
    s.out = tensor(op.out);
    s.rhs = tensor(op.rhs);
    if (op.extra_inputs.size() > size_t(cuda::kDevMaxInputs))
      throw Error("--device cuda: layer '" + op.label + "' has " + std::to_string(op.extra_inputs.size()) +
                  " inputs; the CUDA graph form takes at most " + std::to_string(cuda::kDevMaxInputs));
    s.n_extra = int32_t(op.extra_inputs.size());
    for (size_t e = 0; e < op.extra_inputs.size(); ++e) {
      s.extra[e] = tensor(op.extra_inputs[e]);
      if (e < op.concat_widths.size()) s.concat_widths[e] = op.concat_widths[e];
    }
    const Room r = room(op);
    if (r.state > 0) {
      s.state = take(r.state);
      p_.state.push_back({s.state, r.state});
    }
    if (r.scratch > 0) s.scratch = take(r.scratch);
    // A recurrent layer's input projection (add_projected) stores its matrix as its layer does.
    std::string layer = op.label;
    if (const size_t cut = layer.rfind(kProjection); cut != std::string::npos && cut + kProjection.size() == layer.size())
      layer.resize(cut);
    const bool has_matrix = !op.kernel.data.empty() || !op.recurrent_kernel.data.empty() ||
                            !op.recurrent_kernel_h.data.empty() || !op.depthwise.empty();
    s.weight_format = has_matrix ? formats_.of(layer).weights : cuda::kWeightsFp32;
    if (op.out >= 0) {
      writer_[size_t(op.out)] = layer;
      if (op.kind == StepKind::Attention) fp32_only_[size_t(op.out)] = true;
    }
    s.kernel = matrix(op.kernel.data, s.weight_format);
    s.recurrent = matrix(op.recurrent_kernel.data, s.weight_format);
    s.recurrent_h = matrix(op.recurrent_kernel_h.data, s.weight_format);
    s.bias = weights(op.bias);
    s.recurrent_bias = weights(op.recurrent_bias);
    s.scale = weights(op.scale);
    s.shift = weights(op.shift);
    s.depthwise = matrix(op.depthwise, s.weight_format);
    copy_params(op, s);
    p_.steps.push_back(s);
    p_.labels.push_back(s.weight_format == cuda::kWeightsFp32
                            ? op.label
                            : op.label + " [" + storage_format_name(s.weight_format) + " weights]");
  }

  // Every tensor's storage (its last writer's layer decides), then each step's tensor fields in
  // it: a 16-bit tensor's offset becomes its region's start in 16-bit units.
  void place_tensors() {
    std::map<int64_t, size_t> at_offset;
    for (size_t t = 0; t < at_.size(); ++t) {
      cuda::DeviceTensor T;
      T.offset = at_[t], T.floats = floats_[t], T.fp32_only = fp32_only_[t], T.layer = writer_[t];
      if (!T.fp32_only && !T.layer.empty()) T.format = formats_.of(T.layer).activations;
      at_offset[T.offset] = p_.tensors.size();
      p_.tensors.push_back(std::move(T));
    }
    const auto place = [&](int64_t& offset, auto& format) {
      const auto it = offset < 0 ? at_offset.end() : at_offset.find(offset);
      if (it == at_offset.end()) return;
      format = std::remove_reference_t<decltype(format)>(p_.tensors[it->second].format);
      if (format != cuda::kWeightsFp32) offset *= 2;
    };
    for (size_t i = 0; i < p_.steps.size(); ++i) {
      cuda::DeviceStep& s = p_.steps[i];
      place(s.in, s.in_format);
      place(s.rhs, s.rhs_format);
      place(s.out, s.out_format);
      for (int e = 0; e < s.n_extra; ++e) place(s.extra[e], s.extra_format[e]);
      if (s.out_format != cuda::kWeightsFp32)
        p_.labels[i] += std::string(" [") + storage_format_name(s.out_format) + " out]";
    }
  }

  static void copy_params(const LoweredOp& op, cuda::DeviceStep& s) {
    s.rows = op.rows, s.in_width = op.in_width, s.out_width = op.out_width, s.steps = op.steps;
    s.in_len = op.in_len, s.in_ch = op.in_ch, s.window = op.window, s.stride = op.stride;
    s.dilation = op.dilation, s.pad_left = op.pad_left, s.in_w = op.in_w, s.window_w = op.window_w;
    s.stride_w = op.stride_w, s.dilation_w = op.dilation_w, s.pad_w = op.pad_w, s.out_w = op.out_w;
    s.clamp_lo = op.clamp_lo, s.clamp_hi = op.clamp_hi, s.epsilon = op.epsilon, s.cell_clip = op.cell_clip;
    s.return_sequences = op.return_sequences, s.zero_state = op.zero_state, s.projected = op.projected;
    s.initial_state = op.initial_state, s.return_state = op.return_state, s.slice_offset = op.slice_offset;
    s.act = dev_act(op.act);
    s.rec = dev_act(op.rec);
    const AttentionParams& a = op.attention;
    s.heads = a.heads, s.key_dim = a.key_dim, s.value_dim = a.value_dim, s.keys = a.keys, s.span = a.span;
    s.causal = a.causal, s.attention_stream = a.stream;
    s.q = {a.q.col, a.q.ld}, s.k = {a.k.col, a.k.ld}, s.v = {a.v.col, a.v.ld};
    if (op.in_shape.size() > size_t(cuda::kDevMaxRank))
      throw Error("--device cuda: layer '" + op.label + "' reads a rank-" + std::to_string(op.in_shape.size()) +
                  " tensor; the CUDA graph form takes rank " + std::to_string(cuda::kDevMaxRank) + " at most");
    s.rank = int32_t(op.in_shape.size());
    for (size_t i = 0; i < op.in_shape.size(); ++i) s.in_shape[i] = int32_t(op.in_shape[i]);
    for (size_t i = 0; i < op.pads.size() && i < size_t(2 * cuda::kDevMaxRank); ++i) s.pads[i] = op.pads[i];
    for (size_t i = 0; i < op.permutation.size() && i < size_t(cuda::kDevMaxRank); ++i) s.permutation[i] = op.permutation[i];
  }

  static constexpr std::string_view kProjection = " (input projection)";
  const LoweredGraph& g_;
  const StorageFormats& formats_;
  std::vector<int64_t> at_;
  // Per tensor: its floats, the layer that last writes it, whether it must stay fp32.
  std::vector<int64_t> floats_;
  std::vector<std::string> writer_;
  std::vector<bool> fp32_only_;
  std::vector<int> readers_;  // per tensor: the ops (and the caller, for an output) that read it
  int64_t arena_ = 0;
  cuda::DeviceProgram p_;
};

int64_t step_macs(const cuda::DeviceStep& s) {
  using cuda::DevKind;
  const int64_t n = s.out_width, k = s.in_width, T = s.steps;
  switch (s.kind) {
    case DevKind::Dense: return s.rows * k * n;
    case DevKind::Conv1D: return T * s.window * s.in_ch * n;
    case DevKind::Conv2D: return T * s.out_w * s.window * s.window_w * s.in_ch * n;
    case DevKind::DepthwiseConv2D: return T * s.out_w * s.window * s.window_w * n;
    case DevKind::MatMul: return T * s.rows * k * n;
    case DevKind::Lstm: return T * (k + n) * 4 * n;
    case DevKind::LstmWindow: return T * (s.projected ? 0 : k) * 4 * n + (s.initial_state ? T : T - 1) * n * 4 * n;
    case DevKind::Gru:
    case DevKind::GruClassic: return T * ((s.projected ? 0 : k) + n) * 3 * n;
    case DevKind::Attention: {
      int64_t pairs = 0;  // the (query, key) pairs each head scores: attention_window's ranges
      for (int i = 0; i < (s.attention_stream ? 1 : s.steps); ++i) {
        const int first = std::max(0, s.span > 0 ? i - s.span + 1 : 0);
        const int end = std::min(s.keys, s.causal ? i + 1 : (s.span > 0 ? i + s.span : s.keys));
        pairs += s.attention_stream ? s.span : std::max(0, end - first);
      }
      return pairs * s.heads * (s.key_dim + s.value_dim);
    }
    default: return 0;
  }
}

}  // namespace

cuda::DeviceProgram device_program_from(const LoweredGraph& g, const std::string& model_name,
                                        const StorageFormats& formats) {
  return Builder(g, formats).build(model_name);
}

int64_t device_program_macs(const cuda::DeviceProgram& p) {
  int64_t macs = 0;
  for (const cuda::DeviceStep& s : p.steps) macs += step_macs(s);
  return macs;
}

}  // namespace tickinfer::engine
