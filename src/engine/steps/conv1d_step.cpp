// Conv1D (channels last, valid / same / causal padding, stride, dilation) as a small GEMM.
#include <algorithm>
#include <cstring>
#include <ostream>

#include "engine/steps/step_ops.hpp"

namespace tickinfer::engine {
namespace {

// Conv1D as a small GEMM: kConvBlockRows output positions at a time through the kernel set's
// gemm_chain, which reuses each weight load across the positions; row r's tap j is read in
// place at (first + r stride + j dilation) ch. A block that reaches into the padding reads the
// same way from a copy of its input span in scratch, zero rows where the padding is (one
// memcpy and memsets, not one per tap). Sets without gemm_chain (portable), and layers whose
// filters use the dot form, run one gemv per position over its taps, gathered when they are not
// contiguous.
void run_conv1d(const StepCtx& c, const Step& s) noexcept {
  const float* x = c.at(s.in);
  float* y = c.at(s.out);
  float* scratch = c.arena(s.scratch);
  const int ch = s.in_ch, taps = s.window;
  const size_t row_bytes = sizeof(float) * ch;
  const bool blocked = c.ks.gemm_chain != nullptr && !kernels::is_dot_form(s.out_width);
  const int block = blocked ? kConvBlockRows : 1;
  for (int o0 = 0; o0 < s.steps; o0 += block) {
    const int rows = std::min(block, s.steps - o0);
    const int first = o0 * s.stride - s.pad_left;
    const int last = (o0 + rows - 1) * s.stride - s.pad_left + (taps - 1) * s.dilation;  // inclusive
    const bool inside = first >= 0 && last < s.in_len;
    float* out = y + static_cast<size_t>(o0) * s.out_width;
    if (blocked) {
      const float* src = inside ? x + static_cast<size_t>(first) * ch : scratch;
      if (!inside) {  // the span [first, last]: rows before and after the input are zeros
        const int span_rows = last - first + 1;
        const int pre = std::clamp(-first, 0, span_rows);
        const int post = std::clamp(last - (s.in_len - 1), 0, span_rows - pre);
        const int mid = span_rows - pre - post;
        std::memset(scratch, 0, row_bytes * static_cast<size_t>(pre));
        if (mid > 0) {
          std::memcpy(scratch + static_cast<size_t>(pre) * ch, x + static_cast<size_t>(first + pre) * ch,
                      row_bytes * static_cast<size_t>(mid));
        }
        std::memset(scratch + static_cast<size_t>(pre + mid) * ch, 0, row_bytes * static_cast<size_t>(post));
      }
      c.ks.gemm_chain(src, rows, static_cast<size_t>(s.stride) * ch, taps, static_cast<size_t>(s.dilation) * ch, ch,
                      s.kernel, s.out_width, s.bias, out, s.out_width, s.clamp_lo, s.clamp_hi);
      continue;
    }
    const bool contiguous = inside && s.dilation == 1;
    const float* src = contiguous ? x + static_cast<size_t>(first) * ch : scratch;
    if (!contiguous) {
      for (int j = 0; j < taps; ++j) {
        const int t = first + j * s.dilation;
        float* dst = scratch + static_cast<size_t>(j) * ch;
        if (t >= 0 && t < s.in_len) {
          std::memcpy(dst, x + static_cast<size_t>(t) * ch, row_bytes);
        } else {
          std::memset(dst, 0, row_bytes);
        }
      }
    }
    c.ks.gemv(src, taps * ch, s.kernel, s.out_width, s.bias, out, s.clamp_lo, s.clamp_hi);
  }
}

// A block's input span with its padding (gemm_chain), or one position's gathered taps (gemv).
int64_t conv_scratch(const OpParams& p) {
  const int64_t span = int64_t{p.window - 1} * p.dilation + 1;
  const int64_t block_span = int64_t{kConvBlockRows - 1} * p.stride + span;
  return std::max(block_span, int64_t{p.window}) * p.in_ch;
}

// The filters are reused across output positions: counted once.
StepCost conv_cost(const Step& s) {
  const int64_t n = s.out_width, taps = int64_t{s.window} * s.in_ch;
  return {s.steps * taps * n, taps * n + n};
}

void describe_conv(std::ostream& os, const Step& s) {
  os << "  out_len=" << s.steps << " taps=" << s.window << "x" << s.in_ch << " filters=" << s.out_width
     << " stride=" << s.stride << " dilation=" << s.dilation;
}

}  // namespace

extern const StepOps kConv1DStep = {"conv1d", "Conv1D", run_conv1d, nullptr, no_floats, conv_scratch, conv_cost, describe_conv};

}  // namespace tickinfer::engine
