// Keras Conv2D, DepthwiseConv2D and 2-D pooling as a SavedModel writes them: Conv2D /
// DepthwiseConv2dNative / MaxPool / AvgPool on a [batch, H, W, C] (NHWC) tensor, padding SAME or
// VALID, then BiasAdd and the activation (folded into the node by apply_activation and
// add_channel_affine). TensorFlow's filter layouts are Keras' (HWIO; depthwise [kh, kw, C, m]),
// and its SAME is the engine's Same. The Conv1D forms ([batch, 1, time, channels]) stay in
// tf_lower_conv.cpp.
#include <algorithm>
#include <array>

#include "formats/savedmodel/tf_attr.hpp"
#include "formats/savedmodel/tf_frame.hpp"
#include "formats/savedmodel/tf_lowering.hpp"
#include "tensorflow/core/framework/node_def.pb.h"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

// The [h, w] entries of an NHWC attr ([1, h, w, 1]); batch and channel entries must be 1.
std::array<int, 2> spatial_entries(const std::vector<int64_t>& attr, const std::string& where, const char* what) {
  if (attr.empty()) return {1, 1};
  if (attr.size() != 4 || attr[0] != 1 || attr[3] != 1) throw Error(where + ": " + what + " other than [1, h, w, 1] is not supported");
  for (int k : {1, 2}) {
    if (attr[k] < 1 || attr[k] > 4096) throw Error(where + ": " + what + " " + std::to_string(attr[k]) + " is out of range");
  }
  return {static_cast<int>(attr[1]), static_cast<int>(attr[2])};
}

int64_t window_out(int64_t len, int64_t span, int64_t stride, bool same) {
  return same ? (len + stride - 1) / stride : (len - span) / stride + 1;
}

bool same_padding(const tensorflow::NodeDef& def, const std::string& where) {
  if (attr_string(def, "data_format", "NHWC") != "NHWC") throw Error(where + ": data_format other than NHWC is not supported");
  const std::string padding = attr_string(def, "padding", "VALID");
  if (padding != "VALID" && padding != "SAME") throw Error(where + ": padding " + padding + " is not supported");
  return padding == "SAME";
}

}  // namespace

bool TfLowering::is_conv2d_form(const Op& op) const {
  if (op.in.empty() || op.in[0].kind != TfValue::Kind::Node) return false;
  const TfValue& x = op.in[0];
  if (x.shape.size() != 4 || x.block != 1 || x.pad_left || x.pad_right) return false;
  if (x.block2 != std::array<int64_t, 2>{1, 1}) return true;
  if (op.def.op() == "DepthwiseConv2dNative") return true;
  if (op.def.op() == "Conv2D") {
    // The Conv1D form is [batch, 1, time, channels] with a [1, k, in, out] filter.
    return x.shape[1] != 1 || (op.in.size() > 1 && op.in[1].tensor.shape.size() == 4 && op.in[1].tensor.shape[0] != 1);
  }
  return x.shape[1] != 1 && x.shape[2] != 1;  // pooling: both spatial axes real
}

std::vector<TfValue> TfLowering::lower_conv2d_nhwc(Op& op) {
  if (op.in.size() != 2 || op.in[1].kind != TfValue::Kind::Const) {
    throw Error(op.where + ": only a tensor convolved with a constant filter is supported");
  }
  const TfValue& x = op.in[0];
  const TfTensor& f = op.in[1].tensor;
  const bool depthwise = op.def.op() == "DepthwiseConv2dNative";
  if (f.shape.size() != 4 || f.shape[2] != x.shape[3]) {
    throw Error(op.where + ": filter " + tf_shape_str(f.shape) + " does not match the input " + tf_shape_str(x.shape));
  }
  const bool same = same_padding(op.def, op.where);
  const std::array<int, 2> stride = spatial_entries(attr_ints(op.def, "strides"), op.where, "strides");
  std::array<int, 2> dil = spatial_entries(attr_ints(op.def, "dilations"), op.where, "dilations");
  const bool blocked = x.block2 != std::array<int64_t, 2>{1, 1};
  if (blocked) {  // TensorFlow's dilated conv: dilation 1 over the space-to-batch blocks
    if (same || stride != std::array<int, 2>{1, 1} || dil != std::array<int, 2>{1, 1}) {
      throw Error(op.where + ": a space-to-batch input must be convolved VALID, with stride and dilation 1");
    }
    dil = {static_cast<int>(x.block2[0]), static_cast<int>(x.block2[1])};
  }
  const int kh = static_cast<int>(f.shape[0]), kw = static_cast<int>(f.shape[1]);
  const int cin = static_cast<int>(f.shape[2]), per = static_cast<int>(f.shape[3]);
  const int cout = depthwise ? cin * per : per;
  Node n;
  n.name = op.def.name();
  n.keras_class = depthwise ? "DepthwiseConv2D" : "Conv2D";
  n.kind = depthwise ? OpKind::DepthwiseConv2D : OpKind::Conv2D;
  n.origin = op.def.op() + " '" + op.def.name() + "'";
  n.kernel_size = kh, n.kernel_w = kw;
  n.stride = stride[0], n.stride_w = stride[1];
  n.dilation = dil[0], n.dilation_w = dil[1];
  n.padding = same ? Padding::Same : Padding::Valid;
  if (depthwise) n.depth_multiplier = per;
  else n.units = cout;
  n.weights = {Weight{{kh, kw, cin, per}, std::vector<float>(f.values.begin(), f.values.end())},
               Weight{{cout}, std::vector<float>(static_cast<size_t>(cout), 0.0f)}};
  TfValue plain = x;
  if (blocked) {
    plain.block2 = {1, 1}, plain.pad2 = {0, 0, 0, 0};
    plain.shape = {1, x.h, x.w, x.shape[3]};
  }
  n.inputs = {materialize(plain, op.where)};
  const int64_t h = window_out(plain.shape[1], (kh - 1) * dil[0] + 1, stride[0], same);
  const int64_t w = window_out(plain.shape[2], (kw - 1) * dil[1] + 1, stride[1], same);
  if (h < 1 || w < 1) throw Error(op.where + ": the filter is larger than the input " + tf_shape_str(plain.shape));
  n.shape = {static_cast<int>(h), static_cast<int>(w), cout};
  const int idx = add_node(std::move(n));
  if (!blocked) return {node_value(idx, {1, h, w, cout}, "")};
  // Provisionally valid; BatchToSpaceND's crops decide (lower_batch_to_space2d).
  convs2_.push_back({idx, x.h, x.w, x.pad2});
  TfValue out = node_value(idx, {x.shape[0], x.shape[1] - (kh - 1), x.shape[2] - (kw - 1), cout}, "");
  out.block2 = x.block2;
  out.conv2 = static_cast<int>(convs2_.size()) - 1;
  return {out};
}

std::vector<TfValue> TfLowering::lower_space_to_batch2d(Op& op) {
  TfValue v = op.in.at(0);
  const std::vector<int64_t> block = const_ints(op.in.at(1), op.where, "block_shape");
  const std::vector<int64_t> p = const_ints(op.in.at(2), op.where, "paddings");
  if (v.kind != TfValue::Kind::Node || v.shape[0] != 1 || v.block != 1 || v.pad_left || v.pad_right || v.conv2 >= 0 ||
      v.block2 != std::array<int64_t, 2>{1, 1}) {
    throw Error(op.where + ": only space-to-batch of a [batch, H, W, C] tensor (a dilated Conv2D's input) is supported");
  }
  if (block.size() != 2 || p.size() != 4) throw Error(op.where + ": block_shape must have 2 entries and paddings 2 x 2");
  std::array<int64_t, 2> len{};
  for (int a = 0; a < 2; ++a) {
    if (block[a] < 1 || block[a] > 4096 || p[2 * a] < 0 || p[2 * a + 1] < 0 || p[2 * a] > 4096 || p[2 * a + 1] > 4096) {
      throw Error(op.where + ": block_shape or paddings out of range");
    }
    len[a] = v.shape[1 + a] + p[2 * a] + p[2 * a + 1];
    if (len[a] % block[a] != 0) throw Error(op.where + ": a padded length is not a multiple of the block");
  }
  v.h = v.shape[1], v.w = v.shape[2];
  v.block2 = {block[0], block[1]};
  v.pad2 = {p[0], p[1], p[2], p[3]};
  v.shape = {block[0] * block[1], len[0] / block[0], len[1] / block[1], v.shape[3]};
  v.fresh = false;
  return {v};
}

std::vector<TfValue> TfLowering::lower_batch_to_space2d(Op& op) {
  const TfValue& x = op.in.at(0);
  const std::vector<int64_t> block = const_ints(op.in.at(1), op.where, "block_shape");
  const std::vector<int64_t> crops = const_ints(op.in.at(2), op.where, "crops");
  if (block.size() != 2 || block[0] != x.block2[0] || block[1] != x.block2[1] || crops.size() != 4 || crops[0] != 0 ||
      crops[2] != 0 || crops[1] < 0 || crops[3] < 0) {
    throw Error(op.where + ": block or crops do not undo the SpaceToBatchND");
  }
  const Conv2dRecord& rec = convs2_[static_cast<size_t>(x.conv2)];
  Node& n = graph_.nodes[static_cast<size_t>(rec.node)];
  // The zero padding the whole sequence amounts to, per axis: SpaceToBatchND's less the crops.
  const std::array<int64_t, 4> pad{rec.pads[0], rec.pads[1] - crops[1], rec.pads[2], rec.pads[3] - crops[3]};
  const int64_t span_h = (n.kernel_size - 1) * n.dilation + 1, span_w = (n.kernel_w - 1) * n.dilation_w + 1;
  const int64_t th = std::max<int64_t>(span_h - 1, 0), tw = std::max<int64_t>(span_w - 1, 0);
  if (pad == std::array<int64_t, 4>{0, 0, 0, 0}) {
    n.padding = Padding::Valid;
  } else if (pad == std::array<int64_t, 4>{th / 2, th - th / 2, tw / 2, tw - tw / 2}) {
    n.padding = Padding::Same;
  } else {
    throw Error(op.where + ": the zero padding of the dilated convolution is neither valid nor same");
  }
  const int64_t h = window_out(rec.h, span_h, 1, n.padding == Padding::Same);
  const int64_t w = window_out(rec.w, span_w, 1, n.padding == Padding::Same);
  if (x.shape[1] * block[0] - crops[1] != h || x.shape[2] * block[1] - crops[3] != w) {
    throw Error(op.where + ": the cropped size does not match the convolution's output");
  }
  const int cout = n.shape[2];
  n.shape = {static_cast<int>(h), static_cast<int>(w), cout};
  return {node_value(rec.node, {1, h, w, cout}, "")};
}

std::vector<TfValue> TfLowering::lower_pool2d_nhwc(Op& op) {
  const TfValue& x = op.in.at(0);
  const bool same = same_padding(op.def, op.where);
  const std::array<int, 2> k = spatial_entries(attr_ints(op.def, "ksize"), op.where, "ksize");
  const std::array<int, 2> s = spatial_entries(attr_ints(op.def, "strides"), op.where, "strides");
  Node n;
  n.name = op.def.name();
  n.kind = op.def.op() == "MaxPool" ? OpKind::MaxPool2D : OpKind::AvgPool2D;
  n.keras_class = n.kind == OpKind::MaxPool2D ? "MaxPooling2D" : "AveragePooling2D";
  n.origin = op.def.op() + " '" + op.def.name() + "'";
  n.pool_size = k[0], n.pool_w = k[1];
  n.pool_stride = s[0], n.pool_stride_w = s[1];
  n.padding = same ? Padding::Same : Padding::Valid;
  n.inputs = {materialize(x, op.where)};
  const int64_t h = window_out(x.shape[1], k[0], s[0], same), w = window_out(x.shape[2], k[1], s[1], same);
  if (h < 1 || w < 1) throw Error(op.where + ": pool window larger than the input " + tf_shape_str(x.shape));
  n.shape = {static_cast<int>(h), static_cast<int>(w), static_cast<int>(x.shape[3])};
  return {node_value(add_node(std::move(n)), {1, h, w, x.shape[3]}, "")};
}

}  // namespace tickinfer::formats
