// Conv2D (channels last, valid / same padding, strides, dilation): one gemv per output pixel over
// its patch, gathered into scratch in the kernel's order ([i][j][c], Keras' layout, packed as
// (kh * kw * C) x F). A patch row inside the input and undilated along the width is one memcpy;
// otherwise it is gathered tap by tap, with zeros where the padding is.
#include <algorithm>
#include <cstring>
#include <ostream>

#include "engine/steps/step_ops.hpp"

namespace tickinfer::engine {
namespace {

void run(const StepCtx& c, const Step& s) noexcept {
  const float* x = c.at(s.in);
  float* y = c.at(s.out);
  float* patch = c.arena(s.scratch);
  const int C = s.in_ch, W = s.in_w, kh = s.window, kw = s.window_w;
  const size_t row_floats = static_cast<size_t>(kw) * C;  // one kernel row of the patch
  const int taps = kh * kw * C;
  for (int oh = 0; oh < s.steps; ++oh) {
    const int top = oh * s.stride - s.pad_left;
    for (int ow = 0; ow < s.out_w; ++ow) {
      const int left = ow * s.stride_w - s.pad_w;
      const bool inside_w = left >= 0 && left + (kw - 1) * s.dilation_w < W;
      for (int i = 0; i < kh; ++i) {
        const int h = top + i * s.dilation;
        float* dst = patch + static_cast<size_t>(i) * row_floats;
        if (h < 0 || h >= s.in_len) {
          std::memset(dst, 0, sizeof(float) * row_floats);
          continue;
        }
        const float* src_row = x + static_cast<size_t>(h) * W * C;
        if (inside_w && s.dilation_w == 1) {
          std::memcpy(dst, src_row + static_cast<size_t>(left) * C, sizeof(float) * row_floats);
          continue;
        }
        for (int j = 0; j < kw; ++j) {
          const int w = left + j * s.dilation_w;
          float* d = dst + static_cast<size_t>(j) * C;
          if (w < 0 || w >= W) {
            std::memset(d, 0, sizeof(float) * C);
          } else {
            std::memcpy(d, src_row + static_cast<size_t>(w) * C, sizeof(float) * C);
          }
        }
      }
      float* out = y + (static_cast<size_t>(oh) * s.out_w + ow) * s.out_width;
      c.ks.gemv(patch, taps, s.kernel, s.out_width, s.bias, out, s.clamp_lo, s.clamp_hi);
    }
  }
}

int64_t patch_floats(const OpParams& p) { return int64_t{p.window} * p.window_w * p.in_ch; }

// The filters are reused across output pixels: counted once.
StepCost cost(const Step& s) {
  const int64_t n = s.out_width, taps = patch_floats(s);
  return {int64_t{s.steps} * s.out_w * taps * n, taps * n + n};
}

void describe(std::ostream& os, const Step& s) {
  os << "  out=" << s.steps << "x" << s.out_w << " taps=" << s.window << "x" << s.window_w << "x" << s.in_ch
     << " filters=" << s.out_width << " stride=" << s.stride << "x" << s.stride_w << " dilation=" << s.dilation << "x"
     << s.dilation_w;
  if (s.clamp_lo == 0.0f) os << " +relu";
}

}  // namespace

extern const StepOps kConv2DStep = {"conv2d", "Conv2D", run, nullptr, no_floats, patch_floats, cost, describe};

}  // namespace tickinfer::engine
