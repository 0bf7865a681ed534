// Conv (1-D, and tf2onnx's 2-D form with a unit height; true 2-D ones in onnx_ops_conv2d.cpp),
// MaxPool / AveragePool, the global pools
// and ReduceMean / ReduceMax over the time axis, onto the engine's channels-last [time, channels].
#include "formats/onnx/onnx_lower.hpp"

namespace tickinfer::formats::onnx_import {

namespace {

// An [N, C, W] (rank 3) or [N, C, 1, W] (rank 4) input over an engine [W, C] tensor. Returns
// the rank; the spatial attributes then carry a leading 1 for the unit height when rank is 4.
int spatial_input(Lowerer& L, const onnx::NodeProto& n, const Value& x) {
  const size_t r = x.axes.size();
  const bool ok3 = r == 3 && x.axes[0] == kUnit && x.axes[1] == 1 && x.axes[2] == 0;
  const bool ok4 = r == 4 && x.axes[0] == kUnit && x.axes[1] == 1 && x.axes[2] == kUnit && x.axes[3] == 0;
  if ((!ok3 && !ok4) || L.eshape(x.node).size() != 2) {
    L.fail(n, "the input [N, C, W] (or [N, C, 1, W]) is not stored channels-last: the engine runs 1-D convolutions "
              "on [time, channels] data and has no transpose (a model input fed as [batch, channels, time] cannot be "
              "convolved; transpose [batch, time, channels] inside the model instead, as tf2onnx exports do)");
  }
  return static_cast<int>(r);
}

// The width component of a spatial attribute ([w] for rank 3, [1, w] for rank 4), `def` if absent.
int64_t width_attr(Lowerer& L, const onnx::NodeProto& n, const char* name, int rank, int64_t def) {
  const std::vector<int64_t> v = L.attr_ints(n, name);
  if (v.empty()) return def;
  if (rank == 3 && v.size() == 1) return v[0];
  if (rank == 4 && v.size() == 2 && v[0] == 1) return v[1];
  L.fail(n, std::string(name) + " must have one value (or [1, w] for a height-1 2-D op)");
}

// The engine padding that equals the ONNX pads (or auto_pad) for input length `len` (-1: any).
Padding padding_for(Lowerer& L, const onnx::NodeProto& n, int rank, int len, int span, int stride, bool allow_causal,
                    int extra_begin = 0, int extra_end = 0) {
  const std::string ap = L.attr_s(n, "auto_pad", "NOTSET");
  int64_t b = extra_begin, e = extra_end;
  if ((b || e) && ap != "NOTSET") L.fail(n, "a padded input with auto_pad is not supported");
  const std::vector<int64_t> pads = L.attr_ints(n, "pads");
  if (!pads.empty()) {
    if (rank == 3 && pads.size() == 2) b += pads[0], e += pads[1];
    else if (rank == 4 && pads.size() == 4 && pads[0] == 0 && pads[2] == 0) b += pads[1], e += pads[3];
    else L.fail(n, "pads must pad the width only");
  }
  if (ap == "VALID" || (ap == "NOTSET" && b == 0 && e == 0)) return Padding::Valid;
  // TensorFlow's SAME: total = max((ceil(len/stride) - 1) * stride + span - len, 0), extra at the end.
  int64_t tb = -1, te = -1;
  if (len > 0) {
    const int64_t out = (len + stride - 1) / stride;
    const int64_t total = std::max<int64_t>((out - 1) * stride + span - len, 0);
    tb = total / 2, te = total - tb;
  } else if (stride == 1) {
    tb = (span - 1) / 2, te = span - 1 - tb;
  }
  if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
    if (tb < 0) L.fail(n, "auto_pad SAME with a stride over a variable length is not supported");
    if (ap == "SAME_UPPER" || tb == te) return Padding::Same;
    L.fail(n, "auto_pad SAME_LOWER puts the odd padding first, which the engine does not do");
  }
  if (ap != "NOTSET") L.fail(n, "auto_pad '" + ap + "' is not supported");
  if (b == tb && e == te) return Padding::Same;
  if (allow_causal && b == span - 1 && e == 0) return Padding::Causal;
  L.fail(n, "pads [" + std::to_string(b) + ", " + std::to_string(e) + "] are neither none, TensorFlow's 'same' nor causal");
}

Value spatial_output(Lowerer& L, int node, int rank) {
  Value v;
  v.node = node;
  v.axes = rank == 3 ? std::vector<int>{kUnit, 1, 0} : std::vector<int>{kUnit, 1, kUnit, 0};
  (void)L;
  return v;
}

Value lower_conv(Lowerer& L, const onnx::NodeProto& n) {
  const Value& x = L.runtime(n, 0);
  const int rank = spatial_input(L, n, x);
  if (L.attr_i(n, "group", 1) != 1) L.fail(n, "grouped (depthwise) convolution is not supported");
  const Tensor& w = L.constant(n, 1);
  const int C = L.eshape(x.node)[1];
  if (!w.is_float || static_cast<int>(w.dims.size()) != rank || w.dims[1] != C || (rank == 4 && w.dims[2] != 1)) {
    L.fail(n, "W must be a float [filters, " + std::to_string(C) + ", (1,) kernel] tensor");
  }
  const int M = static_cast<int>(w.dims[0]), k = static_cast<int>(w.dims.back());
  if (width_attr(L, n, "kernel_shape", rank, k) != k) L.fail(n, "kernel_shape does not match W");
  Node c;
  c.kind = OpKind::Conv1D;
  c.units = M;
  c.kernel_size = k;
  c.stride = static_cast<int>(width_attr(L, n, "strides", rank, 1));
  c.dilation = static_cast<int>(width_attr(L, n, "dilations", rank, 1));
  if (c.stride < 1 || c.dilation < 1 || c.stride > 4096 || c.dilation > 4096) L.fail(n, "strides and dilations must be in [1, 4096]");
  // A Pad before the conv (tf2onnx's causal padding) adds to the conv's own pads.
  c.padding = padding_for(L, n, rank, L.eshape(x.node)[0], (k - 1) * c.dilation + 1, c.stride, true, x.pad_begin, x.pad_end);
  std::vector<float> kernel(static_cast<size_t>(k) * C * M);
  for (int m = 0; m < M; ++m) {
    for (int ch = 0; ch < C; ++ch) {
      for (int t = 0; t < k; ++t) kernel[(static_cast<size_t>(t) * C + ch) * M + m] = w.f[(static_cast<size_t>(m) * C + ch) * k + t];
    }
  }
  std::vector<float> bias(static_cast<size_t>(M), 0.0f);
  if (L.has_input(n, 2)) {
    const Tensor& b = L.constant(n, 2);
    if (!b.is_float || b.size() != M) L.fail(n, "B must hold " + std::to_string(M) + " floats");
    bias = b.f;
  }
  c.weights = {{{k, C, M}, std::move(kernel)}, {{M}, std::move(bias)}};
  return spatial_output(L, L.add(std::move(c), n, {x.node}), rank);
}

Value lower_pool(Lowerer& L, const onnx::NodeProto& n) {
  const Value& x = L.runtime(n, 0);
  const int rank = spatial_input(L, n, x);
  const bool is_max = n.op_type() == "MaxPool";
  if (L.attr_i(n, "ceil_mode", 0) != 0) L.fail(n, "ceil_mode=1 is not supported");
  if (is_max && (L.attr_i(n, "storage_order", 0) != 0 || width_attr(L, n, "dilations", rank, 1) != 1)) {
    L.fail(n, "dilations and storage_order are not supported");
  }
  if (!is_max && L.attr_i(n, "count_include_pad", 0) != 0) L.fail(n, "count_include_pad=1 is not supported");
  if (!L.has_attr(n, "kernel_shape")) L.fail(n, "kernel_shape is missing");
  Node p;
  p.kind = is_max ? OpKind::MaxPool1D : OpKind::AvgPool1D;
  p.pool_size = static_cast<int>(width_attr(L, n, "kernel_shape", rank, 1));
  p.pool_stride = static_cast<int>(width_attr(L, n, "strides", rank, 1));
  if (p.pool_size < 1 || p.pool_stride < 1 || p.pool_size > 4096 || p.pool_stride > 4096) L.fail(n, "kernel_shape and strides must be in [1, 4096]");
  p.padding = padding_for(L, n, rank, L.eshape(x.node)[0], p.pool_size, p.pool_stride, false);
  return spatial_output(L, L.add(std::move(p), n, {x.node}), rank);
}

Value global_pool(Lowerer& L, const onnx::NodeProto& n, const Value& x, bool is_max) {
  Node p;
  p.kind = is_max ? OpKind::GlobalMaxPool1D : OpKind::GlobalAvgPool1D;
  p.keepdims = false;
  Value v;
  v.node = L.add(std::move(p), n, {x.node});
  return v;
}

Value lower_global_pool(Lowerer& L, const onnx::NodeProto& n) {
  const Value& x = L.runtime(n, 0);
  const int rank = spatial_input(L, n, x);
  Value v = global_pool(L, n, x, n.op_type() == "GlobalMaxPool");
  v.axes.assign(static_cast<size_t>(rank), kUnit);
  v.axes[1] = 0;
  return v;
}

// ReduceMean / ReduceMax over the time axis of a [time, channels] tensor: a global pool.
Value lower_reduce(Lowerer& L, const onnx::NodeProto& n) {
  const Value& x = L.runtime(n, 0);
  std::vector<int64_t> axes = L.attr_ints(n, "axes");
  if (axes.empty() && L.has_input(n, 1)) {
    const Tensor& t = L.constant(n, 1);
    if (t.is_float) L.fail(n, "axes must be integers");
    axes = t.i;
  }
  const bool keep = L.attr_i(n, "keepdims", 1) != 0;
  if (axes.size() != 1 || L.eshape(x.node).size() != 2) {
    L.fail(n, "only a reduction over the time axis of a [time, channels] tensor (global pooling) is supported");
  }
  const int a = L.norm_axis(n, axes[0], x.axes.size());
  if (x.axes[a] != 0) L.fail(n, "only a reduction over the time axis (global pooling) is supported");
  Value v = global_pool(L, n, x, n.op_type() == "ReduceMax");
  for (size_t k = 0; k < x.axes.size(); ++k) {
    if (static_cast<int>(k) == a) {
      if (keep) v.axes.push_back(kUnit);
    } else {
      v.axes.push_back(x.axes[k] == 1 ? 0 : kUnit);
    }
  }
  return v;
}

}  // namespace

bool lower_conv_op(Lowerer& L, const onnx::NodeProto& n, int out, Value& result) {
  const std::string& op = n.op_type();
  const bool windowed = op == "Conv" || op == "MaxPool" || op == "AveragePool";
  if (windowed && is_nchw_view(L, L.runtime(n, 0))) result = lower_conv2d_op(L, n, L.runtime(n, 0));
  else if (op == "Conv") result = lower_conv(L, n);
  else if (op == "MaxPool" || op == "AveragePool") result = lower_pool(L, n);
  else if (op == "GlobalAveragePool" || op == "GlobalMaxPool") result = lower_global_pool(L, n);
  else if (op == "ReduceMean" || op == "ReduceMax") result = lower_reduce(L, n);
  else return false;
  if (out != 0) L.fail(n, "only output 0 is supported");
  return true;
}

}  // namespace tickinfer::formats::onnx_import
