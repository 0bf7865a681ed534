// The Keras layers of sequence and book models that move or mix time steps: MultiHeadAttention,
// DepthwiseConv2D and SeparableConv2D, ZeroPadding1D/2D, Permute, and keras.ops.pad saved as an
// operation node (keras_layer_parts.hpp).
#include <string>
#include <vector>

#include "formats/keras/keras_activation.hpp"
#include "formats/keras/keras_json.hpp"
#include "formats/keras/keras_layer_parts.hpp"
#include "formats/keras/keras_layers.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats::layer_parts {

using nlohmann::json;

namespace {

// A padding width as Keras writes it: an int (both sides) or [before, after].
void padding_pair(const json& v, int& before, int& after, const std::string& ctx) {
  if (v.is_array()) {
    if (v.size() != 2) throw Error(ctx + ": padding " + json_brief(v) + " must be an int or [before, after]");
    before = json_value_int(v[0], 0, kMaxKerasDim, ctx + ": padding");
    after = json_value_int(v[1], 0, kMaxKerasDim, ctx + ": padding");
  } else {
    before = after = json_value_int(v, 0, kMaxKerasDim, ctx + ": padding");
  }
}

}  // namespace

// MultiHeadAttention over rank-3 inputs ([batch, timesteps, features]): the config's heads and
// widths, the call's use_causal_mask, and the four projections' kernels and biases (query, key,
// value, output; biases of zeros when use_bias is false). The output width is the output
// kernel's last axis (the query width unless output_shape sets it).
Node multi_head_attention(const KerasLayerRef& ref, const json& c, const std::vector<int>& ranks, WeightSource& ws,
                          KerasDialect, const std::string& ctx) {
  Node n;
  n.kind = OpKind::MultiHeadAttention;
  for (int r : ranks) {
    if (r != 2) throw Error(ctx + ": only [batch, timesteps, features] inputs are supported (got rank " +
                            std::to_string(r + 1) + ")");
  }
  n.num_heads = required_positive(c, "num_heads", ctx);
  n.key_dim = required_positive(c, "key_dim", ctx);
  n.value_dim = config_value(c, "value_dim").is_null() ? n.key_dim : required_positive(c, "value_dim", ctx);
  const json& axes = config_value(c, "attention_axes");
  const bool time_axis = axes.is_null() || axes == json(1) || axes == json::array({1}) || axes == json(-2) ||
                         axes == json::array({-2});
  if (!time_axis) throw Error(ctx + ": attention_axes=" + json_brief(axes) + " is not supported (only the time axis)");
  reject_if_true(c, "use_gate", ctx);
  if (!config_value(c, "sliding_window").is_null()) n.attention_span = required_positive(c, "sliding_window", ctx);
  if (const json* kw = ref.call_kwargs) {
    n.causal_mask = json_bool(*kw, "use_causal_mask", false, ctx + ": call");
    if (json_bool(*kw, "return_attention_scores", false, ctx + ": call")) {
      throw Error(ctx + ": return_attention_scores=true is not supported (a second output)");
    }
    for (const char* mask : {"attention_mask", "query_mask", "value_mask", "key_mask"}) {
      if (!config_value(*kw, mask).is_null()) throw Error(ctx + ": the call's " + std::string(mask) + " is not supported");
    }
  }
  const bool use_bias = json_bool(c, "use_bias", true, ctx);
  std::vector<Weight> w = fetch_weights(ref, ws, use_bias ? 8 : 4,
                                        use_bias ? "query, key, value and output kernels and biases"
                                                 : "query, key, value and output kernels",
                                        ctx);
  const int h = n.num_heads, k = n.key_dim, v = n.value_dim;
  const Shape kernels[] = {{-1, h, k}, {-1, h, k}, {-1, h, v}, {h, v, -1}};
  const char* names[] = {"query kernel", "key kernel", "value kernel", "output kernel"};
  for (size_t i = 0; i < 4; ++i) {
    Weight& kernel = w[use_bias ? 2 * i : i];
    expect_shape(kernel, kernels[i], names[i], ctx);
    const Shape bias_shape = i < 3 ? Shape{h, kernels[i][2]} : Shape{kernel.shape[2]};
    n.weights.push_back(std::move(kernel));
    if (use_bias) {
      expect_shape(w[2 * i + 1], bias_shape, "bias", ctx);
      n.weights.push_back(std::move(w[2 * i + 1]));
    } else {
      n.weights.push_back(filled(bias_shape, 0.0f));
    }
  }
  n.units = n.weights[6].shape[2];
  const json& out_shape = config_value(c, "output_shape");
  if (!out_shape.is_null()) {
    const json& width = out_shape.is_array() && out_shape.size() == 1 ? out_shape[0] : out_shape;
    if (!width.is_number_integer() || width.get<int64_t>() != n.units) {
      throw Error(ctx + ": output_shape=" + json_brief(out_shape) + " is not supported (only one width, the output "
                        "kernel's " + std::to_string(n.units) + ")");
    }
  }
  return n;
}

// DepthwiseConv2D (kernel (kh, kw, C, m), bias (C * m)) and SeparableConv2D (depthwise kernel,
// pointwise kernel (1, 1, C * m, filters), bias (filters)); channels last, valid / same, strides
// or dilation; a missing bias becomes zeros.
Node depthwise_conv2d(const KerasLayerRef& ref, const json& c, const std::vector<int>& ranks, WeightSource& ws,
                      KerasDialect dialect, bool separable, const std::string& ctx) {
  Node n;
  n.kind = separable ? OpKind::SeparableConv2D : OpKind::DepthwiseConv2D;
  if (ranks[0] != 3) throw Error(ctx + ": expects a [batch, height, width, channels] input");
  if (separable) n.units = required_positive(c, "filters", ctx);
  n.depth_multiplier = json_int(c, "depth_multiplier", 1, 1, kMaxKerasDim, ctx);
  read_window2d(c, n, ctx);
  require_channels_last(c, ctx);
  n.padding = parse_padding(c, /*allow_causal=*/false, ctx);
  n.activation = activation_from_keras(config_value(c, "activation"), dialect, ranks[0], ctx);
  const bool use_bias = json_bool(c, "use_bias", true, ctx);
  const size_t kernels = separable ? 2 : 1;
  n.weights = fetch_weights(ref, ws, kernels + (use_bias ? 1 : 0),
                            separable ? "depthwise and pointwise kernels, bias" : "kernel, bias", ctx);
  expect_shape(n.weights[0], {n.kernel_size, n.kernel_w, -1, n.depth_multiplier}, "depthwise kernel", ctx);
  const int cm = n.weights[0].shape[2] * n.depth_multiplier;
  if (separable) expect_shape(n.weights[1], {1, 1, cm, n.units}, "pointwise kernel", ctx);
  const int out_c = separable ? n.units : cm;
  if (use_bias) {
    expect_shape(n.weights[kernels], {out_c}, "bias", ctx);
  } else {
    n.weights.push_back(filled({out_c}, 0.0f));
  }
  return n;
}

// ZeroPadding1D on [T, C] (padding int or [before, after] on the time axis) and ZeroPadding2D on
// [H, W, C] (an int, [h, w] for both sides of each, or [[top, bottom], [left, right]]).
Node zero_padding(const json& c, const std::vector<int>& ranks, int spatial, const std::string& ctx) {
  Node n;
  n.kind = OpKind::Pad;
  require_channels_last(c, ctx);
  if (ranks[0] != spatial + 1) {
    throw Error(ctx + ": expects an input of rank " + std::to_string(spatial + 2) + " with the batch, got " +
                std::to_string(ranks[0] + 1));
  }
  const json& p = config_value(c, "padding");
  n.pads.assign(2 * static_cast<size_t>(ranks[0]), 0);
  if (spatial == 1 || !p.is_array()) {
    int before = 1, after = 1;
    if (!p.is_null()) padding_pair(p, before, after, ctx);
    for (int a = 0; a < spatial; ++a) n.pads[2 * a] = before, n.pads[2 * a + 1] = after;
  } else {
    if (p.size() != 2) throw Error(ctx + ": padding " + json_brief(p) + " must have one entry per spatial axis");
    for (int a = 0; a < 2; ++a) {
      if (p[a].is_array()) {
        padding_pair(p[a], n.pads[2 * a], n.pads[2 * a + 1], ctx);
      } else {
        n.pads[2 * a] = n.pads[2 * a + 1] = json_value_int(p[a], 0, kMaxKerasDim, ctx + ": padding");
      }
    }
  }
  return n;
}

// Permute: dims, 1-based over the un-batched axes.
Node permute(const json& c, const std::vector<int>& ranks, const std::string& ctx) {
  Node n;
  n.kind = OpKind::Permute;
  const json& dims = config_value(c, "dims");
  if (!dims.is_array() || static_cast<int>(dims.size()) != ranks[0]) {
    throw Error(ctx + ": dims " + json_brief(dims) + " must list each of the input's " + std::to_string(ranks[0]) +
                " axes");
  }
  std::vector<bool> seen(static_cast<size_t>(ranks[0]), false);
  for (const json& d : dims) {
    const int axis = json_value_int(d, 1, ranks[0], ctx + ": dims") - 1;
    if (seen[static_cast<size_t>(axis)]) throw Error(ctx + ": dims " + json_brief(dims) + " is not a permutation of the input's axes");
    seen[static_cast<size_t>(axis)] = true;
    n.permutation.push_back(axis);
  }
  return n;
}

// keras.ops.pad on a functional tensor (saved as an operation node): pad_width per axis with the
// batch's, constant mode, zeros.
Node ops_pad(const KerasLayerRef& ref, const json& c, const std::vector<int>& ranks, const std::string& ctx) {
  Node n;
  n.kind = OpKind::Pad;
  const std::string mode = json_string(c, "mode", "constant", ctx);
  if (mode != "constant") throw Error(ctx + ": mode='" + mode + "' is not supported (only constant)");
  if (ref.call_kwargs) {
    const json& value = config_value(*ref.call_kwargs, "constant_values");
    if (!value.is_null() && !(value.is_number() && value.get<double>() == 0.0)) {
      throw Error(ctx + ": constant_values=" + json_brief(value) + " is not supported (only zeros)");
    }
  }
  const json& width = config_value(c, "pad_width");
  if (!width.is_array() || static_cast<int>(width.size()) != ranks[0] + 1) {
    throw Error(ctx + ": pad_width " + json_brief(width) + " must have one [before, after] per axis, the batch's first");
  }
  for (size_t a = 0; a < width.size(); ++a) {
    int before = 0, after = 0;
    padding_pair(width[a], before, after, ctx);
    if (a == 0) {
      if (before || after) throw Error(ctx + ": padding the batch axis is not supported");
      continue;
    }
    n.pads.push_back(before);
    n.pads.push_back(after);
  }
  return n;
}

}  // namespace tickinfer::formats::layer_parts
