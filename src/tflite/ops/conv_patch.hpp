#pragma once
// What the CONV_2D kernels share (conv2d.cpp, conv2d_implicit_gemm.cpp): the op's geometry and
// the gathering of output positions' receptive fields into patches.
#include <algorithm>
#include <cstring>

#include "tflite/ops/window.hpp"

namespace tickinfer::tfl::ops {

struct ConvShape {
  Window w;
  int input = -1, output = -1;
  int patch = 0;  // kh * kw * in_c: one filter row
  // A float LEAKY_RELU the interpreter fused after this op (OpOptions::fused_leaky_relu): the
  // outputs, after the clamp, go through the LEAKY_RELU op's own kernel (kernels/leaky_relu.hpp).
  bool leaky = false;
  float alpha = 0.0f;
};

// What describe() adds for a fused LEAKY_RELU.
inline const char* fused_note(const ConvShape& s) noexcept { return s.leaky ? ", then LEAKY_RELU (fused)" : ""; }

// n bytes, n > 0, in 16-byte moves the compiler keeps inline (the last one overlapping): a tap
// is a few dozen bytes, where a call to memcpy with a run-time size costs more than the copy.
inline void copy_tap(void* dst, const void* src, size_t n) noexcept {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  if (n < 16) {  // two overlapping moves of the largest power of two that fits (a byte loop cost more)
    if (n >= 8) {
      std::memcpy(d, s, 8);
      std::memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
      std::memcpy(d, s, 4);
      std::memcpy(d + n - 4, s + n - 4, 4);
    } else {
      for (size_t i = 0; i < n; ++i) d[i] = s[i];
    }
    return;
  }
  size_t i = 0;
  for (; i + 16 < n; i += 16) std::memcpy(d + i, s + i, 16);
  std::memcpy(d + n - 16, s + n - 16, 16);
}

// Copies the receptive field of output pixel (b, oy, ox) into `patch` (ky, kx, ic order, the
// filter's own layout); taps outside the input get `fill`.
template <class T>
inline void gather_patch(const Window& w, const T* x, int b, int oy, int ox, T fill, T* patch) noexcept {
  const int y0 = oy * w.stride_h - w.pad_h, x0 = ox * w.stride_w - w.pad_w;
  const size_t tap_bytes = sizeof(T) * static_cast<size_t>(w.in_c);
  if (y0 >= 0 && x0 >= 0 && y0 + (w.filter_h - 1) * w.dil_h < w.in_h && x0 + (w.filter_w - 1) * w.dil_w < w.in_w) {
    // Every tap inside (the usual case, and every case after an explicit PAD): no test per tap.
    const T* origin = x + ((static_cast<int64_t>(b) * w.in_h + y0) * w.in_w + x0) * w.in_c;
    for (int ky = 0; ky < w.filter_h; ++ky) {
      const T* row = origin + static_cast<int64_t>(ky) * w.dil_h * w.in_w * w.in_c;
      for (int kx = 0; kx < w.filter_w; ++kx, patch += w.in_c) {
        copy_tap(patch, row + static_cast<int64_t>(kx) * w.dil_w * w.in_c, tap_bytes);
      }
    }
    return;
  }
  for (int ky = 0; ky < w.filter_h; ++ky) {
    const int iy = y0 + ky * w.dil_h;
    for (int kx = 0; kx < w.filter_w; ++kx) {
      const int ix = x0 + kx * w.dil_w;
      T* dst = patch + (ky * w.filter_w + kx) * w.in_c;
      if (iy < 0 || iy >= w.in_h || ix < 0 || ix >= w.in_w) {
        std::fill(dst, dst + w.in_c, fill);
      } else {
        copy_tap(dst, x + ((static_cast<int64_t>(b) * w.in_h + iy) * w.in_w + ix) * w.in_c, tap_bytes);
      }
    }
  }
}

inline int64_t out_offset(const Window& w, int b, int oy, int ox) {
  return ((static_cast<int64_t>(b) * w.out_h + oy) * w.out_w + ox) * w.out_c;
}

// The integer kernels multiply this many output pixels' patches per call (S8Kernels::gemm), so
// each weight load serves several positions.
inline constexpr int kConvPositions = 4;

// Gathers the patches of output pixels [first, first + n) of batch b (pixels numbered row-major
// over out_h x out_w) into patches, `stride` bytes apart.
// (One division per call: the next pixel's row and column follow by counting.)
template <class T>
inline void gather_patches(const Window& w, const T* x, int b, int first, int n, T fill, int stride, T* patches) noexcept {
  int oy = first / w.out_w, ox = first % w.out_w;
  for (int j = 0; j < n; ++j) {
    gather_patch(w, x, b, oy, ox, fill, patches + static_cast<size_t>(j) * stride);
    if (++ox == w.out_w) {
      ox = 0;
      ++oy;
    }
  }
}

}  // namespace tickinfer::tfl::ops
