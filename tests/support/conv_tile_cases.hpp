#pragma once
// The implicit-GEMM convolution tiles' test cases (quant_conv_vnni_test, quant_conv_avx2_test):
// seeded random channels, positions and taps, and the scalar reference: each channel's sum
// init[r] + sum_i x[p][i] * w[r][i] (int32 wrap-around, as the accumulator's) requantized by
// TFLite's MultiplyByQuantizedMultiplier (tflite/fixed_point.hpp, checked against TFLite's outputs
// by the fidelity suites), plus the zero point (wrapping, as TFLite's int32 arithmetic and every
// kernel's vector add do), clamped.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

#include "tflite/fixed_point.hpp"

namespace tickinfer::tfl::testing {

// X: the tile's input element, uint8_t (VNNI's x + 128) or int8_t (AVX2's, widened by the kernel).
template <class X>
struct ConvTileCase {
  int rows = 0, cols = 0, n = 0, taps = 1;
  std::vector<int8_t> w;  // [rows][cols]
  std::vector<X> x;       // each position's origin at p * stride; taps at tap * tap_elements
  int stride = 0, tap_elements = 0;
  std::vector<int32_t> init, multiplier, shift;
  int32_t zp = 0, lo = -128, hi = 127;
};

template <class X>
int32_t conv_tile_sum(const ConvTileCase<X>& c, int p, int r) {
  const int per_tap = c.cols / c.taps;
  uint32_t sum = static_cast<uint32_t>(c.init[static_cast<size_t>(r)]);
  for (int i = 0; i < c.cols; ++i) {
    const X xv = c.x[static_cast<size_t>(p) * c.stride + static_cast<size_t>(i / per_tap) * c.tap_elements + i % per_tap];
    sum += static_cast<uint32_t>(xv * c.w[static_cast<size_t>(r) * c.cols + i]);
  }
  return static_cast<int32_t>(sum);
}

struct ConvTileDraw {
  int max_rows = 40;
  // Data whose sums are tens, so the shifts that bring them near the int8 range are positive (a
  // multiplier above 1, as where the output scale is finer than input times weight scale).
  bool small = false;
  bool right_only = false;  // every shift at most 0 (the tiles' form without the left shift)
  // Starting sums anywhere in int32 (its ends, around +-32768 and +-2^31 among them) and
  // multipliers near 1 with shift 0 or -1, so the requantized values reach every range a
  // narrowing meets, and the zero point's addition wraps where the reference's does.
  bool extreme = false;
};

template <class X>
ConvTileCase<X> random_conv_tile_case(std::mt19937& rng, const ConvTileDraw& d) {
  std::uniform_int_distribution<int> byte(0, 255), rows(1, d.max_rows), npos(1, 8), taps(1, 3), quads(1, 6), jitter(-1, 1);
  ConvTileCase<X> c;
  c.rows = rows(rng);
  c.n = npos(rng);
  c.taps = taps(rng);
  const int per_tap = 4 * quads(rng);  // a tap is a whole number of quads when read tap by tap
  c.cols = c.taps * per_tap;
  c.tap_elements = per_tap + 4 * (byte(rng) % 3);  // taps apart in memory, as a dilated conv's are
  c.stride = per_tap + byte(rng) % 9;
  c.x.resize(static_cast<size_t>(c.stride) * c.n + static_cast<size_t>(c.tap_elements) * c.taps + 64);
  for (X& v : c.x) {
    const int b = byte(rng);
    if constexpr (std::is_signed_v<X>) {
      v = static_cast<X>(d.small || d.extreme ? b % 5 - 2 : b - 128);
    } else {
      v = static_cast<X>(d.small || d.extreme ? b % 3 : b);
    }
  }
  c.w.resize(static_cast<size_t>(c.rows) * c.cols);
  for (int8_t& v : c.w) v = static_cast<int8_t>(d.small ? byte(rng) % 5 - 2 : byte(rng) - 128);
  std::uniform_int_distribution<int32_t> init(d.small ? -20 : -5'000'000, d.small ? 20 : 5'000'000), mult(1 << 30, INT32_MAX);
  for (int r = 0; r < c.rows; ++r) {
    c.init.push_back(init(rng));
    c.multiplier.push_back(mult(rng));
  }
  if (d.extreme) {
    std::uniform_int_distribution<int32_t> any(INT32_MIN, INT32_MAX), near(-300, 300);
    const int32_t ends[] = {INT32_MIN, INT32_MAX, 32768, -32768, 65536, -65536, INT32_MIN + 128, INT32_MAX - 128};
    for (int r = 0; r < c.rows; ++r) {
      c.init[static_cast<size_t>(r)] = byte(rng) % 3 == 0 ? any(rng)
                                                           : static_cast<int32_t>(static_cast<uint32_t>(ends[byte(rng) % 8]) +
                                                                                  static_cast<uint32_t>(near(rng)));
      // Half the channels at the largest multiplier with shift 0: a sum at an end of int32 stays
      // within a few units of it, where adding the zero point wraps.
      const bool at_end = byte(rng) % 2 == 0;
      c.multiplier[static_cast<size_t>(r)] = at_end ? INT32_MAX : INT32_MAX - byte(rng) * 4096;
      c.shift.push_back(at_end ? 0 : -(byte(rng) % 2));
    }
  } else {
    // Each channel's shift brings its largest sum to a few hundred: most outputs inside the
    // range, some clamped; a few channels far right (-31 to -13).
    for (int r = 0; r < c.rows; ++r) {
      double largest = 1.0;
      for (int p = 0; p < c.n; ++p) largest = std::max(largest, std::fabs(static_cast<double>(conv_tile_sum(c, p, r))));
      int shift = static_cast<int>(std::floor(std::log2(300.0 / largest))) + jitter(rng);
      if (byte(rng) % 8 == 0) shift = -13 - byte(rng) % 19;
      c.shift.push_back(std::clamp(shift, -31, d.right_only ? 0 : 8));
    }
  }
  c.zp = byte(rng) - 128;
  c.lo = std::max(-128, c.zp - byte(rng) % 64);  // a fused ReLU's range starts at the zero point
  c.hi = 127 - byte(rng) % 4;
  return c;
}

template <Rounding R, class X>
std::vector<int8_t> conv_tile_reference(const ConvTileCase<X>& c) {
  std::vector<int8_t> y(static_cast<size_t>(c.n) * c.rows);
  for (int p = 0; p < c.n; ++p)
    for (int r = 0; r < c.rows; ++r) {
      const int32_t q = multiply_by_quantized_multiplier<R>(conv_tile_sum(c, p, r), c.multiplier[static_cast<size_t>(r)],
                                                            c.shift[static_cast<size_t>(r)]);
      const int32_t v = static_cast<int32_t>(static_cast<uint32_t>(q) + static_cast<uint32_t>(c.zp));
      y[static_cast<size_t>(p) * c.rows + r] = static_cast<int8_t>(std::clamp(v, c.lo, c.hi));
    }
  return y;
}

}  // namespace tickinfer::tfl::testing
