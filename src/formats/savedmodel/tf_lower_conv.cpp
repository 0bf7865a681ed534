// Conv1D and pooling as Keras writes them for TensorFlow: ExpandDims -> Conv2D / MaxPool /
// AvgPool on a [batch, 1, time, channels] view -> Squeeze; a dilated conv as Pad (causal) ->
// SpaceToBatchND -> Conv2D -> BatchToSpaceND. The explicit zero padding is matched to the Keras
// padding mode (valid, causal, same) the engine's Conv1D implements. Zero padding of any other
// axis (keras.ops.pad of the channels) is a Pad node of its own.
#include "formats/savedmodel/tf_attr.hpp"
#include "formats/savedmodel/tf_frame.hpp"
#include "formats/savedmodel/tf_lowering.hpp"
#include "tensorflow/core/framework/node_def.pb.h"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

// The time-axis entry of an NHWC attr ([1, 1, s, 1]); other entries must be 1.
int64_t time_entry(const std::vector<int64_t>& attr, const std::string& where, const char* what) {
  if (attr.empty()) return 1;
  if (attr.size() != 4 || attr[0] != 1 || attr[1] != 1 || attr[3] != 1) throw Error(where + ": " + what + " other than [1, 1, n, 1] is not supported");
  if (attr[2] < 1 || attr[2] > (int64_t{1} << 20)) throw Error(where + ": " + what + " " + std::to_string(attr[2]) + " is out of range");
  return attr[2];
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::vector<int64_t> const_ints(const TfValue& v, const std::string& where, const char* what) {
  if (v.kind != TfValue::Kind::Const) throw Error(where + ": " + what + " is not a constant");
  std::vector<int64_t> out;
  for (double d : v.tensor.values) out.push_back(tf_to_int(d));
  return out;
}

std::vector<TfValue> TfLowering::lower_conv_input(Op& op) {
  TfValue v = op.in.at(0);
  if (op.def.op() == "Pad" && v.kind == TfValue::Kind::Node && v.block == 1 && v.pad_left == 0 && v.pad_right == 0) {
    // Only padding of the time axis alone waits for a Conv2D (a Conv1D's causal or same
    // padding); any other zero padding (keras.ops.pad of the channels) is a Pad node.
    const std::vector<int64_t> p = const_ints(op.in.at(1), op.where, "paddings");
    const bool time_only = v.shape.size() == 3 && p.size() == 6 && !p[0] && !p[1] && !p[4] && !p[5];
    if (!time_only) return {add_pad(op, v, p)};
  }
  if (v.kind != TfValue::Kind::Node || v.shape.size() != 3 || v.block != 1) {
    throw Error(op.where + ": only padding / space-to-batch of a [batch, time, channels] tensor is supported");
  }
  if (op.def.op() == "Pad") {
    const std::vector<int64_t> p = const_ints(op.in.at(1), op.where, "paddings");
    if (p.size() != 6 || p[0] || p[1] || p[4] || p[5] || p[2] < 0 || p[3] < 0) throw Error(op.where + ": only zero padding of the time axis is supported");
    v.pad_left += p[2];
    v.pad_right += p[3];
    v.shape[1] += p[2] + p[3];
  } else {
    const std::vector<int64_t> block = const_ints(op.in.at(1), op.where, "block_shape");
    const std::vector<int64_t> p = const_ints(op.in.at(2), op.where, "paddings");
    if (block.size() != 1 || block[0] < 1 || p.size() != 2 || p[0] < 0 || p[1] < 0) throw Error(op.where + ": unsupported block shape or paddings");
    const int64_t len = v.shape[1] + p[0] + p[1];
    if (len % block[0] != 0) throw Error(op.where + ": padded length is not a multiple of the block");
    v.pad_left += p[0];
    v.pad_right += p[1];
    v.block = block[0];
    v.shape = {block[0], len / block[0], v.shape[2]};
  }
  v.fresh = false;
  return {v};
}

TfValue TfLowering::add_pad(const Op& op, const TfValue& x, const std::vector<int64_t>& p) {
  const size_t rank = x.shape.size();
  if (p.size() != 2 * rank) throw Error(op.where + ": paddings " + std::to_string(p.size() / 2) + " x 2 for a tensor of rank " + std::to_string(rank));
  if (p[0] != 0 || p[1] != 0) throw Error(op.where + ": padding of the batch axis is not supported");
  Node n;
  n.name = op.def.name();
  n.keras_class = "Pad";
  n.kind = OpKind::Pad;
  n.origin = "Pad '" + op.def.name() + "'";
  std::vector<int64_t> shape = x.shape;
  for (size_t a = 1; a < rank; ++a) {
    const int64_t before = p[2 * a], after = p[2 * a + 1];
    if (before < 0 || after < 0 || before > (int64_t{1} << 20) || after > (int64_t{1} << 20)) {
      throw Error(op.where + ": padding (" + std::to_string(before) + ", " + std::to_string(after) + ") is out of range");
    }
    if ((before || after) && x.shape[a] == kUnknownDim) throw Error(op.where + ": padding of a variable-length axis is not supported");
    n.pads.push_back(static_cast<int>(before));
    n.pads.push_back(static_cast<int>(after));
    shape[a] += before + after;
    n.shape.push_back(graph_dim(shape[a]));
  }
  n.inputs = {materialize(x, op.where)};
  return node_value(add_node(std::move(n)), shape, "");
}

void TfLowering::resolve_conv_padding(ConvRecord& rec, const std::string& where) {
  Node& n = graph_.nodes[static_cast<size_t>(rec.node)];
  const int64_t span = rec.dilation * (rec.kernel - 1);
  const int64_t total = std::max<int64_t>((ceil_div(rec.length, rec.stride) - 1) * rec.stride + span + 1 - rec.length, 0);
  if (rec.pad_left == 0 && rec.pad_right == 0) {
    n.padding = Padding::Valid;
  } else if (rec.pad_left == span && rec.pad_right == 0) {
    n.padding = Padding::Causal;
  } else if (rec.pad_left == total / 2 && rec.pad_right == total - total / 2) {
    n.padding = Padding::Same;
  } else {
    throw Error(where + ": zero padding (" + std::to_string(rec.pad_left) + ", " + std::to_string(rec.pad_right) +
                ") is none of valid, causal or same for kernel " + std::to_string(rec.kernel) + " dilation " + std::to_string(rec.dilation));
  }
  const int64_t out = (rec.length + rec.pad_left + rec.pad_right - span - 1) / rec.stride + 1;
  n.shape = {static_cast<int>(out), n.units};
}

std::vector<TfValue> TfLowering::lower_conv2d(Op& op) {
  if (op.in.size() != 2 || op.in[0].kind != TfValue::Kind::Node || op.in[1].kind != TfValue::Kind::Const) {
    throw Error(op.where + ": only a tensor convolved with a constant filter is supported");
  }
  const TfValue& x = op.in[0];
  const TfTensor& f = op.in[1].tensor;
  if (x.shape.size() != 4 || x.shape[1] != 1 || f.shape.size() != 4 || f.shape[0] != 1) {
    throw Error(op.where + ": only the [batch, 1, time, channels] form of a Conv1D is supported (input " + tf_shape_str(x.shape) +
                ", filter " + tf_shape_str(f.shape) + ")");
  }
  if (attr_string(op.def, "data_format", "NHWC") != "NHWC") throw Error(op.where + ": data_format other than NHWC is not supported");
  const std::string padding = attr_string(op.def, "padding", "VALID");
  if (padding != "VALID" && padding != "SAME") throw Error(op.where + ": padding " + padding + " is not supported");
  const int64_t k = f.shape[1], cin = f.shape[2], cout = f.shape[3];
  if (k < 1 || cin < 1 || cout < 1) throw Error(op.where + ": empty filter " + tf_shape_str(f.shape));
  if (x.shape[3] != cin) throw Error(op.where + ": filter expects " + std::to_string(cin) + " channels, input has " + std::to_string(x.shape[3]));
  const int64_t stride = time_entry(attr_ints(op.def, "strides"), op.where, "strides");
  const int64_t dil = time_entry(attr_ints(op.def, "dilations"), op.where, "dilations");
  const int64_t length = x.shape[0] * x.shape[2] - x.pad_left - x.pad_right;  // before Pad / SpaceToBatchND
  if (padding == "SAME" && (x.pad_left || x.pad_right || x.block != 1)) throw Error(op.where + ": SAME padding after explicit padding is not supported");
  if (x.block != 1 && stride != 1) throw Error(op.where + ": strided convolution of a space-to-batch tensor is not supported");

  TfValue plain = x;
  plain.pad_left = plain.pad_right = 0;
  plain.block = 1;
  plain.shape = {1, length, cin};
  Node n;
  n.name = op.def.name();
  n.keras_class = "Conv1D";
  n.kind = OpKind::Conv1D;
  n.units = static_cast<int>(cout);
  n.kernel_size = static_cast<int>(k);
  n.stride = static_cast<int>(stride);
  n.dilation = static_cast<int>(dil * x.block);
  n.origin = std::string(x.block != 1 ? "SpaceToBatchND+" : "") + "Conv2D '" + op.def.name() + "'";
  n.weights = {Weight{{static_cast<int>(k), static_cast<int>(cin), static_cast<int>(cout)}, std::vector<float>(f.values.begin(), f.values.end())},
               Weight{{static_cast<int>(cout)}, std::vector<float>(static_cast<size_t>(cout), 0.0f)}};
  n.inputs = {materialize(plain, op.where)};
  n.padding = Padding::Same;
  const int64_t same_len = (length + stride - 1) / stride;
  n.shape = {static_cast<int>(same_len), static_cast<int>(cout)};
  const int idx = add_node(std::move(n));
  ConvRecord rec{idx, length, k, stride, dil * x.block, x.pad_left, x.pad_right};
  TfValue out = node_value(idx, {1, 1, same_len, cout}, "");
  if (padding == "SAME") return {out};
  if (x.block != 1) {
    convs_.push_back(rec);
    out.conv = static_cast<int>(convs_.size()) - 1;
    out.block = x.block;
    out.shape = {x.block, 1, x.shape[2] - dil * (k - 1), cout};
    return {out};
  }
  resolve_conv_padding(rec, op.where);
  out.shape = {1, 1, graph_.nodes[static_cast<size_t>(idx)].shape[0], cout};
  return {out};
}

std::vector<TfValue> TfLowering::lower_batch_to_space(Op& op) {
  const TfValue& x = op.in.at(0);
  if (x.kind != TfValue::Kind::Node || x.conv < 0 || x.shape.size() != 3) {
    throw Error(op.where + ": BatchToSpaceND is supported only right after a space-to-batch Conv2D");
  }
  const std::vector<int64_t> block = const_ints(op.in.at(1), op.where, "block_shape");
  const std::vector<int64_t> crops = const_ints(op.in.at(2), op.where, "crops");
  if (block.size() != 1 || block[0] != x.block || crops.size() != 2 || crops[0] != 0 || crops[1] < 0) {
    throw Error(op.where + ": block or crops do not undo the SpaceToBatchND");
  }
  ConvRecord& rec = convs_[static_cast<size_t>(x.conv)];
  rec.pad_right -= crops[1];
  resolve_conv_padding(rec, op.where);
  const Node& n = graph_.nodes[static_cast<size_t>(rec.node)];
  if (x.shape[0] * x.shape[1] - crops[1] != n.shape[0]) throw Error(op.where + ": cropped length does not match the convolution's output");
  return {node_value(rec.node, {1, n.shape[0], n.units}, "")};
}

std::vector<TfValue> TfLowering::lower_pool(Op& op) {
  const TfValue& x = op.in.at(0);
  // Keras 3 expands to [batch, 1, time, channels], tf_keras to [batch, time, 1, channels].
  const bool time_at_2 = x.shape.size() == 4 && x.shape[1] == 1;
  if (x.kind != TfValue::Kind::Node || x.shape.size() != 4 || (x.shape[1] != 1 && x.shape[2] != 1) || x.block != 1 || x.pad_left || x.pad_right) {
    throw Error(op.where + ": only the [batch, 1, time, channels] / [batch, time, 1, channels] forms of 1-D pooling are supported");
  }
  if (attr_string(op.def, "data_format", "NHWC") != "NHWC") throw Error(op.where + ": data_format other than NHWC is not supported");
  auto entry = [&](const char* name) {
    std::vector<int64_t> a = attr_ints(op.def, name);
    if (!time_at_2 && a.size() == 4) std::swap(a[1], a[2]);
    return time_entry(a, op.where, name);
  };
  const int64_t p = entry("ksize");
  const int64_t s = entry("strides");
  const std::string padding = attr_string(op.def, "padding", "VALID");
  if (padding != "VALID" && padding != "SAME") throw Error(op.where + ": padding " + padding + " is not supported");
  const int64_t len = time_at_2 ? x.shape[2] : x.shape[1];
  const int64_t out = padding == "SAME" ? ceil_div(len, s) : (len - p) / s + 1;
  if (out < 1) throw Error(op.where + ": pool window longer than the input");
  TfValue plain = x;
  plain.shape = {1, len, x.shape[3]};
  Node n;
  n.name = op.def.name();
  n.kind = op.def.op() == "MaxPool" ? OpKind::MaxPool1D : OpKind::AvgPool1D;
  n.keras_class = n.kind == OpKind::MaxPool1D ? "MaxPooling1D" : "AveragePooling1D";
  n.pool_size = static_cast<int>(p);
  n.pool_stride = static_cast<int>(s);
  n.padding = padding == "SAME" ? Padding::Same : Padding::Valid;
  n.origin = op.def.op() + " '" + op.def.name() + "'";
  n.inputs = {materialize(plain, op.where)};
  n.shape = {static_cast<int>(out), static_cast<int>(x.shape[3])};
  const std::vector<int64_t> shape = time_at_2 ? std::vector<int64_t>{1, 1, out, x.shape[3]} : std::vector<int64_t>{1, out, 1, x.shape[3]};
  return {node_value(add_node(std::move(n)), shape, "")};
}

}  // namespace tickinfer::formats
