// Pooling over height and width (channels last, [H, W, C]): MaxPool2D / AvgPool2D with windows,
// strides and valid / same padding. The window is clipped to the input: padded cells never win a
// max and are not counted by an average, as TensorFlow's SAME pooling does. Height uses the
// 1-D fields (in_len, window, stride, pad_left, steps), width the *_w ones, as Conv2D does.
#include <algorithm>
#include <cstring>
#include <ostream>

#include "engine/steps/step_ops.hpp"

namespace tickinfer::engine {
namespace {

void run_pool2d(const StepCtx& c, const Step& s, bool is_max) noexcept {
  const float* x = c.at(s.in);
  float* y = c.at(s.out);
  const int C = s.in_ch, W = s.in_w;
  for (int oh = 0; oh < s.steps; ++oh) {
    const int top = oh * s.stride - s.pad_left;
    const int h_lo = std::max(top, 0), h_hi = std::min(top + s.window, s.in_len);
    for (int ow = 0; ow < s.out_w; ++ow) {
      const int left = ow * s.stride_w - s.pad_w;
      const int w_lo = std::max(left, 0), w_hi = std::min(left + s.window_w, W);
      float* dst = y + (static_cast<size_t>(oh) * s.out_w + ow) * C;
      std::memcpy(dst, x + (static_cast<size_t>(h_lo) * W + w_lo) * C, sizeof(float) * C);
      for (int h = h_lo; h < h_hi; ++h) {
        for (int w = (h == h_lo ? w_lo + 1 : w_lo); w < w_hi; ++w) {
          const float* cell = x + (static_cast<size_t>(h) * W + w) * C;
          if (is_max) {
            for (int j = 0; j < C; ++j) dst[j] = std::max(dst[j], cell[j]);
          } else {
            for (int j = 0; j < C; ++j) dst[j] += cell[j];
          }
        }
      }
      if (!is_max) {
        // TensorFlow's AvgPool divides the sum by the count of real cells.
        const float count = static_cast<float>((h_hi - h_lo) * (w_hi - w_lo));
        for (int j = 0; j < C; ++j) dst[j] /= count;
      }
    }
  }
}

void run_max_pool2d(const StepCtx& c, const Step& s) noexcept { run_pool2d(c, s, true); }
void run_avg_pool2d(const StepCtx& c, const Step& s) noexcept { run_pool2d(c, s, false); }

void describe(std::ostream& os, const Step& s) {
  os << "  out=" << s.steps << "x" << s.out_w << "x" << s.in_ch << " window=" << s.window << "x" << s.window_w
     << " stride=" << s.stride << "x" << s.stride_w;
}

}  // namespace

extern const StepOps kMaxPool2DStep = {"max_pool2d", "pooling", run_max_pool2d, nullptr, no_floats, no_floats,
                                       no_cost,      describe};
extern const StepOps kAvgPool2DStep = {"avg_pool2d", "pooling", run_avg_pool2d, nullptr, no_floats, no_floats,
                                       no_cost,      describe};

}  // namespace tickinfer::engine
