// Pooling over time (channels last): MaxPool / AvgPool with windows, strides and padding, and the
// global forms over every step.
#include <algorithm>
#include <cstring>

#include "engine/steps/step_ops.hpp"

namespace tickinfer::engine {
namespace {

// Pooling windows clipped to the input: padded positions are ignored by max and not counted by
// average, as TensorFlow's SAME pooling does.
void run_pool(const StepCtx& c, const Step& s, bool is_max) noexcept {
  const float* x = c.at(s.in);
  float* y = c.at(s.out);
  const int ch = s.in_ch;
  for (int o = 0; o < s.steps; ++o) {
    const int start = o * s.stride - s.pad_left;
    const int lo = std::max(start, 0), hi = std::min(start + s.window, s.in_len);
    float* dst = y + static_cast<size_t>(o) * ch;
    const float* first = x + static_cast<size_t>(lo) * ch;
    std::memcpy(dst, first, sizeof(float) * ch);
    for (int t = lo + 1; t < hi; ++t) {
      const float* row = x + static_cast<size_t>(t) * ch;
      if (is_max) {
        for (int j = 0; j < ch; ++j) dst[j] = std::max(dst[j], row[j]);
      } else {
        for (int j = 0; j < ch; ++j) dst[j] += row[j];
      }
    }
    if (!is_max) {
      const float inv = 1.0f / static_cast<float>(hi - lo);
      for (int j = 0; j < ch; ++j) dst[j] *= inv;
    }
  }
}

void run_global_pool(const StepCtx& c, const Step& s, bool is_max) noexcept {
  const float* x = c.at(s.in);
  float* y = c.at(s.out);
  const int ch = s.in_ch;
  std::memcpy(y, x, sizeof(float) * ch);
  for (int t = 1; t < s.in_len; ++t) {
    const float* row = x + static_cast<size_t>(t) * ch;
    if (is_max) {
      for (int j = 0; j < ch; ++j) y[j] = std::max(y[j], row[j]);
    } else {
      for (int j = 0; j < ch; ++j) y[j] += row[j];
    }
  }
  if (!is_max) {
    // Keras divides the sum by the step count (ops.mean), not multiplies by its reciprocal.
    const float len = static_cast<float>(s.in_len);
    for (int j = 0; j < ch; ++j) y[j] /= len;
  }
}

void run_max_pool(const StepCtx& c, const Step& s) noexcept { run_pool(c, s, true); }
void run_avg_pool(const StepCtx& c, const Step& s) noexcept { run_pool(c, s, false); }
void run_global_avg(const StepCtx& c, const Step& s) noexcept { run_global_pool(c, s, false); }
void run_global_max(const StepCtx& c, const Step& s) noexcept { run_global_pool(c, s, true); }

}  // namespace

extern const StepOps kMaxPoolStep = {"max_pool", "pooling", run_max_pool, nullptr, no_floats, no_floats, no_cost, no_operands};
extern const StepOps kAvgPoolStep = {"avg_pool", "pooling", run_avg_pool, nullptr, no_floats, no_floats, no_cost, no_operands};
extern const StepOps kGlobalAvgPoolStep = {"global_avg_pool", "pooling", run_global_avg, nullptr,
                                    no_floats,         no_floats, no_cost,        no_operands};
extern const StepOps kGlobalMaxPoolStep = {"global_max_pool", "pooling", run_global_max, nullptr,
                                    no_floats,         no_floats, no_cost,        no_operands};

}  // namespace tickinfer::engine
