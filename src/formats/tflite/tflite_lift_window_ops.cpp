// Lift of the TFLite ops the converter writes for Keras' window layers: Conv1D as CONV_2D
// over [1, 1, steps, channels] (a causal Conv1D as PAD of the time axis, then a VALID CONV_2D),
// Conv2D as CONV_2D over [1, H, W, C] (the book models), MaxPooling1D / AveragePooling1D as
// MAX_POOL_2D / AVERAGE_POOL_2D with one unit spatial axis (and their 2-D forms), and
// GlobalAveragePooling1D as MEAN over the time axis.
#include <cstring>

#include "formats/tflite/tflite_lift_context.hpp"

namespace tickinfer::formats::lift {

std::vector<int32_t> int_constant(Lifter& l, int t, const char* what) {
  if (t < 0) l.refuse(std::string(what) + " is missing");
  const tfl::Tensor& x = l.tensor(t);
  if (!x.is_constant() || x.type != tfl::DType::I32) l.refuse(std::string(what) + " is not an int32 constant");
  std::vector<int32_t> v(x.data.size() / sizeof(int32_t));
  std::memcpy(v.data(), x.data.data(), v.size() * sizeof(int32_t));
  return v;
}

namespace {

int64_t product(const tfl::Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < s.size(); ++i) p *= s[i];
  return p;
}

}  // namespace

void lift_pad(Lifter& l) {
  const tfl::Op& o = l.op();
  if (o.inputs.size() != 2 || o.outputs.size() != 1) l.refuse("expects input, paddings and one output");
  const int in = o.inputs[0];
  const tfl::Shape& s = l.tensor(in).shape;
  const std::vector<int32_t> pads = int_constant(l, o.inputs[1], "paddings");
  if (pads.size() != 2 * s.size()) l.refuse("paddings are not [rank, 2]");
  Value v = l.value(in);
  if (v.padded()) l.refuse("pads a PAD result");
  int axis = -1;
  for (size_t d = 0; d < s.size(); ++d) {
    if (pads[2 * d] < 0 || pads[2 * d + 1] < 0) l.refuse("negative padding");
    if (pads[2 * d] == 0 && pads[2 * d + 1] == 0) continue;
    if (axis >= 0) l.refuse("pads more than one axis");
    axis = static_cast<int>(d);
  }
  v.pending_origin += (v.pending_origin.empty() ? "" : " + ") + l.op_origin();
  v.own_output = false;
  if (axis >= 0 && axis == static_cast<int>(s.size()) - 1 && s.size() >= 2) {
    // The channel axis (TransLOB's position channel): a Pad node.
    Node n;
    n.kind = OpKind::Pad;
    n.shape = unbatched(l.tensor(o.outputs[0]).shape);
    const Shape in_shape = unbatched(s);
    n.pads.assign(2 * in_shape.size(), 0);
    n.pads[2 * in_shape.size() - 2] = pads[2 * static_cast<size_t>(axis)];
    n.pads[2 * in_shape.size() - 1] = pads[2 * static_cast<size_t>(axis) + 1];
    n.inputs = {l.as_shape(in, in_shape)};
    n.name = l.node_name(o.outputs[0]);
    return l.set_value(o.outputs[0], own_value(l.add_node(std::move(n), {in})));
  }
  if (axis >= 0) {
    // Only the time axis of a [steps, channels] value: nothing but unit axes before it.
    const Shape& ns = l.node(v.node).shape;
    const auto a = static_cast<size_t>(axis);
    if (ns.size() != 2 || s[a] != ns[0] || product(s, 0, a) != 1 || product(s, a + 1, s.size()) != ns[1]) {
      l.refuse("pads an axis other than the time axis of a [steps, channels] tensor");
    }
    v.pad_before = pads[2 * a];
    v.pad_after = pads[2 * a + 1];
  }
  l.set_value(o.outputs[0], std::move(v));
}

namespace {

// The conv's activation: its fused one, or a LEAKY_RELU the interpreter's rewrite fused into it
// (OpOptions::fused_leaky_relu; the lift reads the program the interpreter runs).
ActivationSpec conv_activation(Lifter& l, const tfl::Op& o) {
  if (!o.options.fused_leaky_relu) return l.fused(o.options.activation);
  if (o.options.activation != tfl::FusedActivation::None) l.refuse("a fused activation before a fused LEAKY_RELU");
  ActivationSpec a;
  a.kind = ActKind::LeakyRelu;
  a.alpha = o.options.alpha;
  return a;
}

// A Keras Conv2D (the book models' convolutions) from a CONV_2D over [1, H, W, C]: filter
// [F, kh, kw, C] into Keras' (kh, kw, C, F); SAME / VALID padding, strides and dilations per axis.
void lift_conv2d_spatial(Lifter& l, std::vector<float> filter, std::vector<float> bias) {
  const tfl::Op& o = l.op();
  const int in = o.inputs[0];
  const tfl::Shape& s = l.tensor(in).shape;
  const tfl::Shape& fs = l.tensor(o.inputs[1]).shape;
  const tfl::Shape& os = l.tensor(o.outputs[0]).shape;
  if (l.value(in).padded()) l.refuse("a PAD before a 2-D convolution");
  const int F = fs[0], kh = fs[1], kw = fs[2], C = s[3];
  Node n;
  n.kind = OpKind::Conv2D;
  n.units = F;
  n.kernel_size = kh;
  n.kernel_w = kw;
  n.stride = o.options.stride_h;
  n.stride_w = o.options.stride_w;
  n.dilation = o.options.dilation_h;
  n.dilation_w = o.options.dilation_w;
  n.padding = o.options.padding == tfl::PaddingMode::Same ? Padding::Same : Padding::Valid;
  n.activation = conv_activation(l, o);
  n.inputs = {l.as_shape(in, {s[1], s[2], C})};
  const size_t taps = static_cast<size_t>(kh) * kw * C;  // one filter's [kh][kw][C], Keras' order too
  Weight kernel{{kh, kw, C, F}, std::vector<float>(filter.size())};
  for (int f = 0; f < F; ++f) {
    for (size_t t = 0; t < taps; ++t) kernel.data[t * F + f] = filter[f * taps + t];
  }
  n.weights = {std::move(kernel), Weight{{F}, std::move(bias)}};
  n.shape = {os[1], os[2], F};
  n.name = l.node_name(o.outputs[0]);
  const int idx = l.add_node(std::move(n), {in});
  l.set_value(o.outputs[0], own_value(idx));
}

}  // namespace

void lift_conv2d(Lifter& l) {
  const tfl::Op& o = l.op();
  if (o.inputs.size() < 2 || o.outputs.size() != 1) l.refuse("expects input, filter, optional bias and one output");
  const int in = o.inputs[0], ft = o.inputs[1], bt = o.inputs.size() > 2 ? o.inputs[2] : -1;
  const tfl::Shape& s = l.tensor(in).shape;
  const tfl::Shape& fs = l.tensor(ft).shape;
  const tfl::Shape& os = l.tensor(o.outputs[0]).shape;
  if (s.size() != 4 || s[0] != 1 || os.size() != 4) l.refuse("input is not [1, height, width, channels]");
  if (fs.size() != 4 || fs[3] != s[3]) l.refuse("filter is not [filters, height, width, channels]");
  const int F = fs[0], k = fs[2], C = s[3];
  std::vector<float> filter = l.constant_f32(ft, "filter");
  std::vector<float> bias = bt >= 0 ? l.constant_f32(bt, "bias") : std::vector<float>(static_cast<size_t>(F), 0.0f);
  if (static_cast<int>(bias.size()) != F) l.refuse("bias does not have one value per filter");
  if (s[1] != 1) return lift_conv2d_spatial(l, std::move(filter), std::move(bias));
  if (fs[1] != 1) l.refuse("filter is not [filters, 1, width, channels]");

  Node n;
  n.kind = OpKind::Conv1D;
  n.units = F;
  n.kernel_size = k;
  n.stride = o.options.stride_w;
  n.dilation = o.options.dilation_w;
  n.activation = conv_activation(l, o);
  const int span = (k - 1) * n.dilation + 1;
  const Value& v = l.value(in);
  if (v.padded()) {
    const int len = s[2] - v.pad_before - v.pad_after;
    if (o.options.padding != tfl::PaddingMode::Valid) l.refuse("a PAD before a SAME convolution");
    if (v.pad_after == 0 && v.pad_before == span - 1) {
      n.padding = Padding::Causal;
    } else if (n.stride == 1 && v.pad_before + v.pad_after == span - 1 && v.pad_before == (span - 1) / 2) {
      n.padding = Padding::Same;
    } else {
      l.refuse("PAD (" + std::to_string(v.pad_before) + ", " + std::to_string(v.pad_after) +
               ") is neither causal nor same padding for a window of " + std::to_string(span));
    }
    n.inputs = {l.node_as_shape(v.node, {len, C}, v.pending_origin)};
  } else {
    n.padding = o.options.padding == tfl::PaddingMode::Same ? Padding::Same : Padding::Valid;
    n.inputs = {l.as_shape(in, {s[2], C})};
  }
  // Keras layout (k, C, F) from TFLite's [F, 1, k, C].
  Weight kernel{{k, C, F}, std::vector<float>(filter.size())};
  for (int f = 0; f < F; ++f) {
    for (int kk = 0; kk < k; ++kk) {
      for (int c = 0; c < C; ++c) {
        kernel.data[(static_cast<size_t>(kk) * C + c) * F + f] = filter[(static_cast<size_t>(f) * k + kk) * C + c];
      }
    }
  }
  n.weights = {std::move(kernel), Weight{{F}, std::move(bias)}};
  n.shape = {os[1] * os[2], F};
  n.name = l.node_name(o.outputs[0]);
  const int idx = l.add_node(std::move(n), {in});
  l.set_value(o.outputs[0], own_value(idx));
}

void lift_pool2d(Lifter& l) {
  const tfl::Op& o = l.op();
  if (o.inputs.size() != 1 || o.outputs.size() != 1) l.refuse("expects one input and one output");
  const int in = o.inputs[0];
  const tfl::Shape& s = l.tensor(in).shape;
  const tfl::Shape& os = l.tensor(o.outputs[0]).shape;
  if (s.size() != 4 || s[0] != 1 || os.size() != 4) l.refuse("input is not [1, height, width, channels]");
  const tfl::OpOptions& opt = l.op().options;
  Node n;
  const bool is_max = o.code == tfl::OpCode::MaxPool2D;
  n.kind = is_max ? OpKind::MaxPool1D : OpKind::AvgPool1D;
  int len = 0;
  if (s[1] == 1 && opt.filter_h == 1) {
    len = s[2], n.pool_size = opt.filter_w, n.pool_stride = opt.stride_w;
  } else if (s[2] == 1 && opt.filter_w == 1) {
    len = s[1], n.pool_size = opt.filter_h, n.pool_stride = opt.stride_h;
  }
  n.padding = opt.padding == tfl::PaddingMode::Same ? Padding::Same : Padding::Valid;
  if (len > 0) {
    n.inputs = {l.as_shape(in, {len, s[3]})};
    n.shape = {os[1] * os[2], s[3]};
  } else {  // over both spatial axes: MaxPooling2D / AveragePooling2D
    n.kind = is_max ? OpKind::MaxPool2D : OpKind::AvgPool2D;
    n.pool_size = opt.filter_h, n.pool_w = opt.filter_w;
    n.pool_stride = opt.stride_h, n.pool_stride_w = opt.stride_w;
    n.inputs = {l.as_shape(in, {s[1], s[2], s[3]})};
    n.shape = {os[1], os[2], s[3]};
  }
  n.name = l.node_name(o.outputs[0]);
  const ActivationSpec act = l.fused(opt.activation);
  const int idx = l.add_node(std::move(n), {in});
  l.set_value(o.outputs[0], node_value(l.apply_activation(idx, act)));
}

void lift_mean(Lifter& l) {
  const tfl::Op& o = l.op();
  if (o.inputs.size() != 2 || o.outputs.size() != 1) l.refuse("expects input, axes and one output");
  if (lift_layer_norm(l)) return;
  const int in = o.inputs[0];
  const tfl::Shape& s = l.tensor(in).shape;
  const int rank = static_cast<int>(s.size());
  std::vector<bool> reduced(s.size(), false);
  for (int32_t a : int_constant(l, o.inputs[1], "axes")) {
    const int axis = a < 0 ? a + rank : a;
    if (axis < 0 || axis >= rank) l.refuse("axis " + std::to_string(a) + " is out of range");
    reduced[static_cast<size_t>(axis)] = true;
  }
  // Among the axes longer than 1: the reduced ones first and together (the time axis), then the
  // kept ones (the channels); a kept axis before them would be a batch of sequences.
  int64_t steps = 1, channels = 1;
  for (size_t d = 0; d < s.size(); ++d) {
    if (s[d] == 1) continue;
    if (reduced[d]) {
      if (channels != 1) l.refuse("reduces an axis after a kept one (only the mean over time has a graph form)");
      steps *= s[d];
    } else {
      channels *= s[d];
    }
  }
  Value v = l.value(in);
  if (steps == 1) {  // only unit axes: a copy
    v.pending_origin += (v.pending_origin.empty() ? "" : " + ") + l.op_origin();
    v.own_output = false;
    return l.set_value(o.outputs[0], std::move(v));
  }
  Node n;
  n.kind = OpKind::GlobalAvgPool1D;
  n.inputs = {l.as_shape(in, {static_cast<int>(steps), static_cast<int>(channels)})};
  n.shape = {static_cast<int>(channels)};
  n.name = l.node_name(o.outputs[0]);
  l.set_value(o.outputs[0], node_value(l.add_node(std::move(n), {in})));
}

}  // namespace tickinfer::formats::lift
