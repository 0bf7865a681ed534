// DepthwiseConv2D: each output pixel's C * m channels, channel c * m + j the window of input
// channel c times its taps (kh x kw, Conv2D's strides, dilation and padding; padded cells add
// nothing) plus the bias, clamped. Taps are summed in window order, one multiply-add per tap and
// channel: a few channels per pixel leave no GEMM to block, so the loop runs over the channels
// (contiguous in the input and the taps). Not row-wise.
#include <algorithm>
#include <cstring>
#include <ostream>

#include "engine/steps/step_ops.hpp"

namespace tickinfer::engine {
namespace {

void run(const StepCtx& c, const Step& s) noexcept {
  const int C = s.in_ch, cm = s.out_width, m = cm / C;
  const float* x = c.at(s.in);
  float* y = c.at(s.out);
  for (int oy = 0; oy < s.steps; ++oy) {
    for (int ox = 0; ox < s.out_w; ++ox) {
      float* out = y + (static_cast<size_t>(oy) * s.out_w + ox) * cm;
      std::memcpy(out, s.bias, sizeof(float) * cm);
      for (int dh = 0; dh < s.window; ++dh) {
        const int iy = oy * s.stride + dh * s.dilation - s.pad_left;
        if (iy < 0 || iy >= s.in_len) continue;
        for (int dw = 0; dw < s.window_w; ++dw) {
          const int ix = ox * s.stride_w + dw * s.dilation_w - s.pad_w;
          if (ix < 0 || ix >= s.in_w) continue;
          const float* px = x + (static_cast<size_t>(iy) * s.in_w + ix) * C;
          const float* taps = s.depthwise + static_cast<size_t>(dh * s.window_w + dw) * cm;
          for (int ch = 0; ch < C; ++ch) {
            for (int j = 0; j < m; ++j) out[ch * m + j] += px[ch] * taps[ch * m + j];
          }
        }
      }
      for (int k = 0; k < cm; ++k) out[k] = std::min(std::max(out[k], s.clamp_lo), s.clamp_hi);
    }
  }
}

StepCost cost(const Step& s) {
  const int64_t taps = int64_t{s.window} * s.window_w * s.out_width;
  return {int64_t{s.steps} * s.out_w * taps, taps + s.out_width};
}

void describe(std::ostream& os, const Step& s) {
  os << "  out=" << s.steps << "x" << s.out_w << "x" << s.out_width << " window=" << s.window << "x" << s.window_w
     << " channels=" << s.in_ch << " multiplier=" << s.out_width / s.in_ch;
  if (s.clamp_lo == 0.0f) os << " +relu";
}

}  // namespace

extern const StepOps kDepthwiseConv2DStep = {"depthwise_conv2d", "a convolution", run, nullptr, no_floats, no_floats,
                                             cost, describe};

}  // namespace tickinfer::engine
