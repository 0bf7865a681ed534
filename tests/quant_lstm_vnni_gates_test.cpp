// The VNNI gate matrix (sums requantized in registers) gives TFLite's gate arithmetic written out
// here from plain dot products: gx = sat16(MBQM(bias + W x)) for a chunk of inputs, gate =
// sat16(MBQM(bias + W h) + gx), double rounding, for every row group a used prefix covers. Odd row
// and column counts (partial groups and quads), weights and inputs at -128, whole-range biases.
// Skipped where the CPU has no AVX-512 VNNI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "tflite/fixed_point.hpp"
#include "tflite/kernels/gemv_s8.hpp"
#include "tflite/ops/lstm/lstm_vnni_gates.hpp"

namespace {

using namespace tickinfer::tfl;
using tickinfer::tfl::ops::lstm::VnniGates;

int32_t wrap_add(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b)); }
int16_t sat16(int32_t v) { return static_cast<int16_t>(std::min(32767, std::max(-32768, v))); }

struct Case {
  int rows, cols;
  std::vector<int8_t> w;
  std::vector<int32_t> bias, m, s;
  int32_t dot(int r, const int8_t* x) const {
    uint32_t acc = 0;
    for (int c = 0; c < cols; ++c) acc += static_cast<uint32_t>(int32_t{w[static_cast<size_t>(r * cols + c)]} * x[c]);
    return static_cast<int32_t>(acc);
  }
  int32_t term(int r, const int8_t* x) const {
    const size_t k = static_cast<size_t>(r);
    return multiply_by_quantized_multiplier<Rounding::Double>(wrap_add(bias[k], dot(r, x)), m[k], s[k]);
  }
};

Case random_case(std::mt19937& rng, int rows, int cols) {
  Case c{rows, cols, {}, {}, {}, {}};
  std::uniform_int_distribution<int> w8(-128, 127), any_w(0, 9);
  std::uniform_int_distribution<int32_t> any(INT32_MIN, INT32_MAX), small(-300000, 300000);
  std::uniform_real_distribution<double> scale(1e-6, 4.0);
  for (int i = 0; i < rows * cols; ++i) c.w.push_back(static_cast<int8_t>(any_w(rng) == 0 ? -128 : w8(rng)));
  // Per-row scales as the LSTM has them: one per gate of rows / 4 (at least 1) rows.
  const int per_gate = std::max(1, rows / 4);
  QuantizedMultiplier q{};
  for (int r = 0; r < rows; ++r) {
    if (r % per_gate == 0) q = quantize_multiplier(scale(rng), Rounding::Double);
    c.bias.push_back(r % 5 == 0 ? any(rng) : small(rng));
    c.m.push_back(q.multiplier);
    c.s.push_back(q.shift);
  }
  return c;
}

TEST(QuantLstmVnniGates, InputTermsAndRecurrentGatesEqualTheWrittenOutArithmetic) {
  if (!tickinfer::tfl::kernels::s8_vnni_supported()) GTEST_SKIP() << "no AVX-512 VNNI on this CPU";
  const uint32_t seed = 20261206;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> x8(-128, 127);
  const int shapes[][2] = {{16, 4}, {16, 1}, {40, 10}, {256, 64}, {100, 67}, {64, 3}, {200, 33}, {48, 128}};
  for (const auto& shape : shapes) {
    const Case c = random_case(rng, shape[0], shape[1]);
    VnniGates g;
    g.init(c.w.data(), c.rows, c.cols, c.bias.data(), c.m.data(), c.s.data());
    ASSERT_GE(g.padded_rows(), c.rows);
    const size_t padded = static_cast<size_t>(g.padded_rows());
    const size_t x_stride = static_cast<size_t>(g.x_bytes()) + 3;  // not a multiple of 4: any stride works
    for (int len : {1, 2, 5, 16}) {
      std::vector<int8_t> x(static_cast<size_t>(len) * static_cast<size_t>(c.cols));
      std::vector<uint8_t> xu8(static_cast<size_t>(len) * x_stride, 0x5A);  // padding: any byte
      for (int j = 0; j < len; ++j) {
        for (int k = 0; k < c.cols; ++k) {
          const int8_t v = static_cast<int8_t>(j == 0 && k == 0 ? -128 : x8(rng));
          x[static_cast<size_t>(j * c.cols + k)] = v;
          xu8[static_cast<size_t>(j) * x_stride + static_cast<size_t>(k)] = static_cast<uint8_t>(v) ^ 0x80u;
        }
      }
      // The packed weights beyond the columns are zero, so padding bytes of x add nothing.
      for (int used : {c.rows, std::max(1, c.rows - 16)}) {
        std::vector<int16_t> gx(static_cast<size_t>(len) * padded, 0x5A5A);
        g.input_terms(xu8.data(), x_stride, len, used, gx.data(), padded);
        for (int j = 0; j < len; ++j) {
          for (int r = 0; r < used; ++r) {
            ASSERT_EQ(gx[static_cast<size_t>(j) * padded + static_cast<size_t>(r)], sat16(c.term(r, x.data() + j * c.cols)))
                << "input term, shape " << c.rows << "x" << c.cols << " len " << len << " used " << used << " step " << j
                << " row " << r;
          }
        }
      }
    }
    for (int used : {c.rows, std::max(1, c.rows - 16), 1}) {
      std::vector<int8_t> h(static_cast<size_t>(c.cols));
      std::vector<uint8_t> hu8(static_cast<size_t>(g.x_bytes()), 0xA5);
      for (int k = 0; k < c.cols; ++k) {
        h[static_cast<size_t>(k)] = static_cast<int8_t>(k == 1 ? -128 : x8(rng));
        hu8[static_cast<size_t>(k)] = static_cast<uint8_t>(h[static_cast<size_t>(k)]) ^ 0x80u;
      }
      std::vector<int16_t> gx(padded), gate(padded + 8, 0x5A5A);
      for (auto& v : gx) v = static_cast<int16_t>(x8(rng) * 256);
      g.recurrent(hu8.data(), used, gx.data(), gate.data());
      for (int r = 0; r < used; ++r) {
        ASSERT_EQ(gate[static_cast<size_t>(r)], sat16(wrap_add(c.term(r, h.data()), gx[static_cast<size_t>(r)])))
            << "recurrent gate, shape " << c.rows << "x" << c.cols << " used " << used << " row " << r;
      }
      for (size_t r = padded; r < gate.size(); ++r) ASSERT_EQ(gate[r], 0x5A5A) << "wrote past the padded rows";
    }
  }
}

}  // namespace
