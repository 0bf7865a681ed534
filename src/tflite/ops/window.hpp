#pragma once
// Sliding-window geometry of CONV_2D, DEPTHWISE_CONV_2D and the 2-D pools on NHWC tensors, as
// TFLite computes it (kernel_util ComputeOutSize / ComputePaddingHeightWidth): SAME gives
// ceil(in / stride) outputs and pads the total shortfall, the odd pixel at the end; VALID gives
// (in - effective_filter) / stride + 1 and no padding.
#include "tflite/integer_form.hpp"
#include "tflite/ops/op_support.hpp"

namespace tickinfer::tfl::ops {

struct Window {
  int batch = 0, in_h = 0, in_w = 0, in_c = 0;
  int out_h = 0, out_w = 0, out_c = 0;
  int filter_h = 1, filter_w = 1;
  int stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int pad_h = 0, pad_w = 0;  // rows/columns of padding before the first input row/column
};

inline int window_out_size(PaddingMode p, int in, int filter, int stride, int dilation) {
  const int effective = (filter - 1) * dilation + 1;
  return p == PaddingMode::Same ? (in + stride - 1) / stride : (in + stride - effective) / stride;
}

inline int window_padding(int stride, int dilation, int in, int filter, int out) {
  const int effective = (filter - 1) * dilation + 1;
  const int total = (out - 1) * stride + effective - in;
  return total > 0 ? total / 2 : 0;
}

// Fills the geometry from a 4-D NHWC input and output, the filter size and the op's options;
// fails naming the op when a size is invalid or the output shape is not the one TFLite computes.
inline Window make_window(const PrepareContext& ctx, const Tensor& in, const Tensor& out, int filter_h,
                          int filter_w, bool dilated) {
  if (in.shape.size() != 4) ctx.fail("input '" + in.name + "' must be 4-D NHWC, got " + shape_str(in.shape));
  if (out.shape.size() != 4) ctx.fail("output '" + out.name + "' must be 4-D NHWC, got " + shape_str(out.shape));
  require_static(ctx, in);
  require_static(ctx, out);
  const OpOptions& o = ctx.op.options;
  Window w;
  w.batch = in.shape[0];
  w.in_h = in.shape[1];
  w.in_w = in.shape[2];
  w.in_c = in.shape[3];
  w.out_h = out.shape[1];
  w.out_w = out.shape[2];
  w.out_c = out.shape[3];
  w.filter_h = filter_h;
  w.filter_w = filter_w;
  w.stride_h = o.stride_h;
  w.stride_w = o.stride_w;
  w.dil_h = dilated ? o.dilation_h : 1;
  w.dil_w = dilated ? o.dilation_w : 1;
  if (w.filter_h < 1 || w.filter_w < 1 || w.stride_h < 1 || w.stride_w < 1 || w.dil_h < 1 || w.dil_w < 1 ||
      w.filter_h > 4096 || w.filter_w > 4096 || w.stride_h > 4096 || w.stride_w > 4096 || w.dil_h > 4096 ||
      w.dil_w > 4096) {
    ctx.fail("filter " + std::to_string(w.filter_h) + "x" + std::to_string(w.filter_w) + ", stride " +
             std::to_string(w.stride_h) + "x" + std::to_string(w.stride_w) + " or dilation " + std::to_string(w.dil_h) +
             "x" + std::to_string(w.dil_w) + " is out of range");
  }
  const int want_h = window_out_size(o.padding, w.in_h, w.filter_h, w.stride_h, w.dil_h);
  const int want_w = window_out_size(o.padding, w.in_w, w.filter_w, w.stride_w, w.dil_w);
  if (out.shape[0] != w.batch || w.out_h != want_h || w.out_w != want_w) {
    ctx.fail("output '" + out.name + "' " + shape_str(out.shape) + " does not match the window over input " +
             shape_str(in.shape) + " (expected height " + std::to_string(want_h) + ", width " + std::to_string(want_w) +
             ")");
  }
  w.pad_h = window_padding(w.stride_h, w.dil_h, w.in_h, w.filter_h, w.out_h);
  w.pad_w = window_padding(w.stride_w, w.dil_w, w.in_w, w.filter_w, w.out_w);
  return w;
}

// The window's geometry into an op's integer form (PreparedOp::integer_form).
inline void window_form(const Window& w, IntegerForm* f) {
  f->batch = w.batch;
  f->in_h = w.in_h, f->in_w = w.in_w, f->in_c = w.in_c;
  f->out_h = w.out_h, f->out_w = w.out_w, f->out_c = w.out_c;
  f->filter_h = w.filter_h, f->filter_w = w.filter_w;
  f->stride_h = w.stride_h, f->stride_w = w.stride_w, f->dil_h = w.dil_h, f->dil_w = w.dil_w;
  f->pad_h = w.pad_h, f->pad_w = w.pad_w;
}

// A convolution (CONV_2D, DEPTHWISE_CONV_2D) into its integer form: the window, the constant
// filter and bias, the per-channel fixed-point requantization.
inline IntegerForm& conv_integer_form(IntegerKind kind, const Window& w, int in, int out, Rounding r,
                                      const std::vector<int32_t>& mult, const std::vector<int32_t>& shift,
                                      int32_t in_offset, int32_t out_zp, int32_t lo, int32_t hi, const int8_t* filter,
                                      int64_t weight_count, const int32_t* bias, std::vector<IntegerForm>* forms) {
  IntegerForm& f = forms->emplace_back();
  f.kind = kind;
  f.inputs = {in};
  f.output = out;
  f.count = int64_t{w.batch} * w.out_h * w.out_w * w.out_c;
  window_form(w, &f);
  requant_form(r == Rounding::Double ? RequantForm::Double : RequantForm::Single, mult, shift, in_offset, out_zp, lo, hi, &f);
  f.weights = filter;
  f.weight_count = weight_count;
  f.bias = bias;
  return f;
}

}  // namespace tickinfer::tfl::ops
