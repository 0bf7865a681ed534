// Conv2D (channels last, valid / same padding, strides, dilation) as small GEMMs: output pixels
// in blocks of kConvBlockRows through the kernel set's gemm_chain, each weight load feeding every
// pixel of the block. A pixel's patch is kh taps of one kernel row each (kw x C floats, Keras'
// [i][j][c] order, packed as (kh * kw * C) x F); with dilation_w = 1 a tap is contiguous in the
// input, tap i at (top + i dilation) W C, so a block inside the input is read in place. A block
// runs along the output row, or down the column when the output is one pixel wide (after
// DeepLOB's 1 x levels merge). A block that reaches into the padding, or a width-dilated kernel,
// gathers its patches into scratch, zeros where the padding is. Sets without gemm_chain
// (portable) and filters in the dot form run one gemv per pixel over its gathered patch.
#include <algorithm>
#include <cstring>
#include <ostream>
#include <utility>

#include "engine/steps/step_ops.hpp"

namespace tickinfer::engine {
namespace {

// Pixel (oh, ow)'s patch into dst (kh * kw * C floats), zeros where it leaves the input.
void gather_patch(const float* x, const Step& s, int oh, int ow, float* dst) noexcept {
  const int C = s.in_ch, W = s.in_w, kh = s.window, kw = s.window_w;
  const size_t row_floats = static_cast<size_t>(kw) * C;
  const int top = oh * s.stride - s.pad_left, left = ow * s.stride_w - s.pad_w;
  const bool inside_w = left >= 0 && left + (kw - 1) * s.dilation_w < W;
  for (int i = 0; i < kh; ++i) {
    const int h = top + i * s.dilation;
    float* d = dst + static_cast<size_t>(i) * row_floats;
    if (h < 0 || h >= s.in_len) {
      std::memset(d, 0, sizeof(float) * row_floats);
      continue;
    }
    const float* src_row = x + static_cast<size_t>(h) * W * C;
    if (inside_w && s.dilation_w == 1) {
      std::memcpy(d, src_row + static_cast<size_t>(left) * C, sizeof(float) * row_floats);
      continue;
    }
    for (int j = 0; j < kw; ++j) {
      const int w = left + j * s.dilation_w;
      float* dj = d + static_cast<size_t>(j) * C;
      if (w < 0 || w >= W) {
        std::memset(dj, 0, sizeof(float) * C);
      } else {
        std::memcpy(dj, src_row + static_cast<size_t>(w) * C, sizeof(float) * C);
      }
    }
  }
}

// Along a line of pixels, the first and one past the last whose patch lies inside the input.
struct InsideRange {
  int lo, hi;
};
InsideRange inside_range(int out_len, int in_len, int stride, int pad, int span) {
  // pixel p is inside when p stride - pad >= 0 and p stride - pad + span - 1 < in_len.
  // A negative pad (a row range of an incremental update starting past the top) starts inside.
  const int lo = std::min(out_len, std::max(0, (pad + stride - 1) / stride));
  const int last = in_len - span + pad;  // p stride <= last
  const int hi = last < 0 ? 0 : std::min(out_len, last / stride + 1);
  return {lo, std::max(lo, hi)};
}

void run_blocked(const StepCtx& c, const Step& s) noexcept {
  const float* x = c.at(s.in);
  float* y = c.at(s.out);
  float* scratch = c.arena(s.scratch);
  const int C = s.in_ch, W = s.in_w, kh = s.window, kw = s.window_w, F = s.out_width;
  const int row_floats = kw * C, taps = kh * row_floats;
  const bool along_w = s.out_w > 1;
  // Input floats between consecutive pixels of a line.
  const size_t ldx = along_w ? static_cast<size_t>(s.stride_w) * C : static_cast<size_t>(s.stride) * W * C;
  const int lines = along_w ? s.steps : 1, per_line = along_w ? s.out_w : s.steps;
  const InsideRange rows_in = inside_range(s.steps, s.in_len, s.stride, s.pad_left, (kh - 1) * s.dilation + 1);
  const InsideRange cols_in = inside_range(s.out_w, W, s.stride_w, s.pad_w, (kw - 1) * s.dilation_w + 1);
  const InsideRange in_line = along_w ? cols_in : rows_in;
  auto pixel = [&](int line, int p) { return along_w ? std::pair{line, p} : std::pair{p, 0}; };
  // Pixels [p0, p0 + rows) of a line, gathered into scratch kConvBlockRows at a time.
  auto gathered = [&](int line, int p0, int rows) {
    for (int b = 0; b < rows; b += kConvBlockRows) {
      const int n = std::min(kConvBlockRows, rows - b);
      for (int r = 0; r < n; ++r) {
        const auto [oh, ow] = pixel(line, p0 + b + r);
        gather_patch(x, s, oh, ow, scratch + static_cast<size_t>(r) * taps);
      }
      const auto [oh, ow] = pixel(line, p0 + b);
      c.ks.gemm_chain(scratch, n, static_cast<size_t>(taps), 1, 0, taps, s.kernel, F, s.bias,
                      y + (static_cast<size_t>(oh) * s.out_w + ow) * F, F, s.clamp_lo, s.clamp_hi);
    }
  };
  for (int line = 0; line < lines; ++line) {
    // The line's pixels whose patches lie inside the input: read in place, in one call (the
    // kernel blocks them by its register rows); the others are gathered.
    const bool line_inside = !along_w || (line >= rows_in.lo && line < rows_in.hi);
    const InsideRange r = s.dilation_w == 1 && line_inside && (along_w || (cols_in.lo == 0 && cols_in.hi == 1))
                              ? in_line
                              : InsideRange{per_line, per_line};
    gathered(line, 0, r.lo);  // lo <= hi <= per_line
    if (r.hi > r.lo) {
      const auto [oh, ow] = pixel(line, r.lo);
      const int top = oh * s.stride - s.pad_left, left = ow * s.stride_w - s.pad_w;
      c.ks.gemm_chain(x + (static_cast<size_t>(top) * W + left) * C, r.hi - r.lo, ldx, kh,
                      static_cast<size_t>(s.dilation) * W * C, row_floats, s.kernel, F, s.bias,
                      y + (static_cast<size_t>(oh) * s.out_w + ow) * F, F, s.clamp_lo, s.clamp_hi);
    }
    gathered(line, r.hi, per_line - r.hi);
  }
}

void run(const StepCtx& c, const Step& s) noexcept {
  if (c.ks.gemm_chain != nullptr && !kernels::is_dot_form(s.out_width)) return run_blocked(c, s);
  const float* x = c.at(s.in);
  float* y = c.at(s.out);
  float* patch = c.arena(s.scratch);
  const int taps = s.window * s.window_w * s.in_ch;
  for (int oh = 0; oh < s.steps; ++oh) {
    for (int ow = 0; ow < s.out_w; ++ow) {
      gather_patch(x, s, oh, ow, patch);
      float* out = y + (static_cast<size_t>(oh) * s.out_w + ow) * s.out_width;
      c.ks.gemv(patch, taps, s.kernel, s.out_width, s.bias, out, s.clamp_lo, s.clamp_hi);
    }
  }
}

int64_t patch_floats(const OpParams& p) { return int64_t{p.window} * p.window_w * p.in_ch; }

// A block's gathered patches (gemm_chain), or one pixel's (gemv).
int64_t scratch_floats(const OpParams& p) { return kConvBlockRows * patch_floats(p); }

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

extern const StepOps kConv2DStep = {"conv2d", "Conv2D", run, nullptr, no_floats, scratch_floats, cost, describe};

}  // namespace tickinfer::engine
