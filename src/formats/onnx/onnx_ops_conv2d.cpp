// 2-D Conv (plain and depthwise), MaxPool and AveragePool over NCHW views of the engine's
// channels-last [H, W, C] tensors: the form tf2onnx writes for Keras Conv2D stacks (DeepLOB's),
// where the Transposes (or a Reshape when C = 1) around each op only rewrite the view's axes.
#include <algorithm>
#include <array>

#include "formats/onnx/onnx_lower.hpp"

namespace tickinfer::formats::onnx_import {

namespace {

// The two spatial values of attribute `name` ([h, w]), `def` for both when absent.
std::array<int, 2> pair_attr(Lowerer& L, const onnx::NodeProto& n, const char* name, int def) {
  const std::vector<int64_t> v = L.attr_ints(n, name);
  if (v.empty()) return {def, def};
  if (v.size() != 2 || v[0] < 1 || v[1] < 1 || v[0] > 4096 || v[1] > 4096) {
    L.fail(n, std::string(name) + " must be two values in [1, 4096]");
  }
  return {static_cast<int>(v[0]), static_cast<int>(v[1])};
}

// TensorFlow's 'same' split of one axis: total = max((ceil(len/stride) - 1) * stride + span - len, 0),
// the odd one at the end.
std::array<int, 2> tf_same(int len, int span, int stride) {
  const int out = (len + stride - 1) / stride;
  const int total = std::max((out - 1) * stride + span - len, 0);
  return {total / 2, total - total / 2};
}

struct Window {
  std::array<int, 2> kernel{1, 1}, stride{1, 1}, dilation{1, 1};
  std::array<int, 4> pads{0, 0, 0, 0};  // top, left, bottom, right (ONNX order)
};

// Valid or Same when the pads are none or TensorFlow's 'same' on both axes; otherwise (when
// `explicit_pads`) the pads are left in `w.pads` for a Pad node, else refused.
Padding window_padding(Lowerer& L, const onnx::NodeProto& n, const Shape& in, Window& w, bool explicit_pads) {
  const std::string ap = L.attr_s(n, "auto_pad", "NOTSET");
  if (ap == "VALID") return Padding::Valid;
  if (ap == "SAME_UPPER") return Padding::Same;
  std::array<std::array<int, 2>, 2> same{};
  for (int a = 0; a < 2; ++a) same[a] = tf_same(in[a], (w.kernel[a] - 1) * w.dilation[a] + 1, w.stride[a]);
  if (ap == "SAME_LOWER") {
    if (same[0][0] == same[0][1] && same[1][0] == same[1][1]) return Padding::Same;
    L.fail(n, "auto_pad SAME_LOWER puts the odd padding first, which the engine does not do");
  }
  if (ap != "NOTSET") L.fail(n, "auto_pad '" + ap + "' is not supported");
  const std::vector<int64_t> pads = L.attr_ints(n, "pads");
  if (!pads.empty()) {
    if (pads.size() != 4) L.fail(n, "pads must have four values (top, left, bottom, right)");
    for (int k = 0; k < 4; ++k) {
      if (pads[k] < 0 || pads[k] > 4096) L.fail(n, "pads must be in [0, 4096]");
      w.pads[k] = static_cast<int>(pads[k]);
    }
  }
  const std::array<int, 4>& p = w.pads;
  if (p == std::array<int, 4>{0, 0, 0, 0}) return Padding::Valid;
  if (p == std::array<int, 4>{same[0][0], same[1][0], same[0][1], same[1][1]}) {
    w.pads = {0, 0, 0, 0};
    return Padding::Same;
  }
  if (!explicit_pads) {
    L.fail(n, "pads [" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + ", " + std::to_string(p[2]) + ", " +
                  std::to_string(p[3]) + "] are neither none nor TensorFlow's 'same'");
  }
  return Padding::Valid;
}

// The engine [H, W, C] node under an NCHW view, given a channel axis when the view left it out
// (C = 1 reshaped in, as tf2onnx writes a one-channel input) or put it first (a PyTorch model's
// one-channel [N, 1, H, W] input, the same values as [H, W, 1]).
int channels_last_node(Lowerer& L, const onnx::NodeProto& n, const Value& x) {
  L.require_unpadded(n, x);
  const Shape& s = L.eshape(x.node);
  const std::vector<int>& a = x.axes;
  if (a.size() == 4 && a[0] == kUnit && a[2] == 0 && a[3] == 1) {
    if (s.size() == 3 && (a[1] == 2 || (a[1] == kUnit && s[2] == 1))) return x.node;
    if (s.size() == 2 && a[1] == kUnit) return L.reshape(n, x, Shape{s[0], s[1], 1});
  }
  if (a == std::vector<int>{kUnit, 0, 1, 2} && s.size() == 3 && s[0] == 1) return L.reshape(n, x, Shape{s[1], s[2], 1});
  L.fail(n, "the input [N, C, H, W] is not a channels-last [H, W, C] tensor seen through transposes: the engine "
            "runs 2-D convolutions on channels-last data (a model input fed as [batch, channels, height, width] "
            "cannot be convolved; keep [batch, height, width, channels] at the model's boundary, as tf2onnx exports do)");
}

Value nchw_output(int node) {
  Value v;
  v.node = node;
  v.axes = {kUnit, 2, 0, 1};
  return v;
}

// A Pad node holding `w.pads` in front of `x` (ONNX's explicit convolution padding that is not
// TensorFlow's 'same'); `x` itself when there is none.
int pad_node(Lowerer& L, const onnx::NodeProto& n, int x, const Window& w) {
  if (w.pads == std::array<int, 4>{0, 0, 0, 0}) return x;
  Node p;
  p.kind = OpKind::Pad;
  p.pads = {w.pads[0], w.pads[2], w.pads[1], w.pads[3], 0, 0};
  return L.add(std::move(p), n, {x});
}

Value lower_conv2d(Lowerer& L, const onnx::NodeProto& n, int x) {
  const Shape in = L.eshape(x);
  const int C = in[2];
  const Tensor& wt = L.constant(n, 1);
  const int64_t group = L.attr_i(n, "group", 1);
  if (!wt.is_float || wt.dims.size() != 4) L.fail(n, "W must be a float [filters, channels / group, kh, kw] tensor");
  const int M = static_cast<int>(wt.dims[0]), kh = static_cast<int>(wt.dims[2]), kw = static_cast<int>(wt.dims[3]);
  const bool depthwise = group == C && C > 1 && wt.dims[1] == 1 && M % C == 0;
  if (group != 1 && !depthwise) {
    L.fail(n, "group " + std::to_string(group) + " is neither 1 nor the channel count (depthwise) " + std::to_string(C));
  }
  if (group == 1 && wt.dims[1] != C) L.fail(n, "W's input channels " + std::to_string(wt.dims[1]) + " are not the input's " + std::to_string(C));
  if (L.has_attr(n, "kernel_shape") && pair_attr(L, n, "kernel_shape", 1) != std::array<int, 2>{kh, kw}) {
    L.fail(n, "kernel_shape does not match W");
  }
  Window w;
  w.kernel = {kh, kw};
  w.stride = pair_attr(L, n, "strides", 1);
  w.dilation = pair_attr(L, n, "dilations", 1);
  Node c;
  c.padding = window_padding(L, n, in, w, /*explicit_pads=*/true);
  c.kind = depthwise ? OpKind::DepthwiseConv2D : OpKind::Conv2D;
  c.kernel_size = kh, c.kernel_w = kw;
  c.stride = w.stride[0], c.stride_w = w.stride[1];
  c.dilation = w.dilation[0], c.dilation_w = w.dilation[1];
  // Keras layouts: Conv2D (kh, kw, C, M); DepthwiseConv2D (kh, kw, C, m), output c * m + j,
  // which is ONNX's output channel of group c.
  const int per = depthwise ? M / C : M;
  const int cin = depthwise ? 1 : C;
  std::vector<float> kernel(static_cast<size_t>(kh) * kw * C * per);
  for (int m = 0; m < M; ++m) {
    for (int ch = 0; ch < cin; ++ch) {
      for (int i = 0; i < kh; ++i) {
        for (int j = 0; j < kw; ++j) {
          const float v = wt.f[((static_cast<size_t>(m) * cin + ch) * kh + i) * kw + j];
          const size_t tap = static_cast<size_t>(i) * kw + j;
          if (depthwise) kernel[(tap * C + m / per) * per + m % per] = v;
          else kernel[(tap * C + ch) * M + m] = v;
        }
      }
    }
  }
  std::vector<float> bias(static_cast<size_t>(M), 0.0f);
  if (L.has_input(n, 2)) {
    const Tensor& b = L.constant(n, 2);
    if (!b.is_float || b.size() != M) L.fail(n, "B must hold " + std::to_string(M) + " floats");
    bias = b.f;
  }
  if (depthwise) {
    c.depth_multiplier = per;
    c.weights = {{{kh, kw, C, per}, std::move(kernel)}, {{M}, std::move(bias)}};
  } else {
    c.units = M;
    c.weights = {{{kh, kw, C, M}, std::move(kernel)}, {{M}, std::move(bias)}};
  }
  return nchw_output(L.add(std::move(c), n, {pad_node(L, n, x, w)}));
}

Value lower_pool2d(Lowerer& L, const onnx::NodeProto& n, int x) {
  const bool is_max = n.op_type() == "MaxPool";
  if (L.attr_i(n, "ceil_mode", 0) != 0) L.fail(n, "ceil_mode=1 is not supported");
  if (is_max && L.attr_i(n, "storage_order", 0) != 0) L.fail(n, "storage_order=1 is not supported");
  if (!is_max && L.attr_i(n, "count_include_pad", 0) != 0) L.fail(n, "count_include_pad=1 is not supported");
  if (!L.has_attr(n, "kernel_shape")) L.fail(n, "kernel_shape is missing");
  Window w;
  w.kernel = pair_attr(L, n, "kernel_shape", 1);
  w.stride = pair_attr(L, n, "strides", 1);
  if (pair_attr(L, n, "dilations", 1) != std::array<int, 2>{1, 1}) L.fail(n, "dilations are not supported");
  Node p;
  // Padded cells are left out of the max and the mean (ONNX's -inf padding, count_include_pad 0),
  // which is what TensorFlow's 'same' pooling does; other pads would need another rule.
  p.padding = window_padding(L, n, L.eshape(x), w, /*explicit_pads=*/false);
  p.kind = is_max ? OpKind::MaxPool2D : OpKind::AvgPool2D;
  p.pool_size = w.kernel[0], p.pool_w = w.kernel[1];
  p.pool_stride = w.stride[0], p.pool_stride_w = w.stride[1];
  return nchw_output(L.add(std::move(p), n, {x}));
}

}  // namespace

bool is_nchw_view(Lowerer& L, const Value& x) {
  const Shape& s = L.eshape(x.node);
  return x.axes.size() == 4 && (s.size() == 3 || (x.axes[1] == kUnit && x.axes[2] == 0 && x.axes[3] == 1));
}

Value pad_nchw_view(Lowerer& L, const onnx::NodeProto& n, const Value& x, const std::vector<int64_t>& pads) {
  const int node = channels_last_node(L, n, x);
  if (pads.size() != 8 || pads[0] || pads[4] || pads[1] || pads[5]) {
    L.fail(n, "only zero padding of the height and width of an [N, C, H, W] tensor is supported");
  }
  Node p;
  p.kind = OpKind::Pad;
  for (int k : {2, 3}) {
    if (pads[k] < 0 || pads[k + 4] < 0 || pads[k] > 4096 || pads[k + 4] > 4096) L.fail(n, "pads must be in [0, 4096]");
    p.pads.push_back(static_cast<int>(pads[k])), p.pads.push_back(static_cast<int>(pads[k + 4]));
  }
  p.pads.push_back(0), p.pads.push_back(0);
  return nchw_output(L.add(std::move(p), n, {node}));
}

Value lower_conv2d_op(Lowerer& L, const onnx::NodeProto& n, const Value& x) {
  const int node = channels_last_node(L, n, x);
  return n.op_type() == "Conv" ? lower_conv2d(L, n, node) : lower_pool2d(L, n, node);
}

}  // namespace tickinfer::formats::onnx_import
