#pragma once
// Sliding-window geometry of CONV_2D, DEPTHWISE_CONV_2D and the 2-D pools on NHWC tensors, as
// TFLite computes it (kernel_util ComputeOutSize / ComputePaddingHeightWidth): SAME gives
// ceil(in / stride) outputs and pads the total shortfall, the odd pixel at the end; VALID gives
// (in - effective_filter) / stride + 1 and no padding.
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

}  // namespace tickinfer::tfl::ops
