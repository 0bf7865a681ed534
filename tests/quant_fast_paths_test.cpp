// The fast FULLY_CONNECTED / CONV_2D paths of the interpreter against their plain reference
// loops (isa "scalar"), through the ops, over seeded random data (seed in every message):
//  * hybrid FC and hybrid conv: only the integer dot products differ (exact), so the outputs
//    must be equal bit for bit;
//  * int8 conv on the implicit GEMMs: exact integer sums and the same requantization, so equal
//    to TFLite's reference loop bit for bit;
//  * float conv with more than 4 output channels (the 4-pixel AVX2 blocks): same roundings as the
//    reference loop, so equal bit for bit;
//  * bf16-filter FC and float conv through the gemv: fp32 summation order differs, so
//    |fast - ref| must stay within 1e-5 of max |ref| (the TFLite reference test's tolerance).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel_set.hpp"
#include "support/quant_program_builder.hpp"

using namespace tickinfer::tfl;
using tickinfer::tfl::testing::ProgramBuilder;

namespace {

bool have_avx2() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

std::vector<float> random_floats(std::mt19937& rng, size_t n, float scale = 1.0f) {
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}
std::vector<int8_t> random_s8(std::mt19937& rng, size_t n) {
  std::uniform_int_distribution<int> d(-127, 127);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(d(rng));
  return v;
}
std::vector<uint16_t> random_bf16(std::mt19937& rng, size_t n) {
  std::vector<uint16_t> v(n);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (auto& b : v) {
    const float f = d(rng);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    b = static_cast<uint16_t>(bits >> 16);
  }
  return v;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& ref, const std::string& what) {
  ASSERT_EQ(got.size(), ref.size());
  float mx = 0.0f;
  for (float v : ref) mx = std::max(mx, std::fabs(v));
  for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(got[i], ref[i], 1e-5f * std::max(mx, 1e-6f)) << what << " i=" << i;
}

enum class FcKind { Bf16, HybridSym, HybridAsym };

std::vector<float> run_fc(FcKind kind, unsigned seed, int batch, int depth, int units, bool per_channel,
                          const char* isa) {
  std::mt19937 rng(seed);
  ProgramBuilder b;
  const int in = b.tensor("x", DType::F32, {batch, depth});
  int f;
  if (kind == FcKind::Bf16) {
    f = b.constant("w", DType::BF16, {units, depth}, random_bf16(rng, static_cast<size_t>(units) * depth));
  } else {
    std::vector<float> scales(per_channel ? static_cast<size_t>(units) : 1u);
    for (auto& s : scales) s = 0.001f + 0.01f * std::uniform_real_distribution<float>(0, 1)(rng);
    f = b.constant("w", DType::I8, {units, depth}, random_s8(rng, static_cast<size_t>(units) * depth), scales,
                   std::vector<int64_t>(scales.size(), 0), 0);
  }
  const int bias = b.constant("b", DType::F32, {units}, random_floats(rng, static_cast<size_t>(units)));
  const int out = b.tensor("y", DType::F32, {batch, units});
  Op& o = b.op(OpCode::FullyConnected, {in, f, bias}, {out});
  o.options.asymmetric_quantize_inputs = kind == FcKind::HybridAsym;
  o.options.activation = (seed % 3 == 0) ? FusedActivation::Relu : FusedActivation::None;
  auto op = b.prepare(0, isa);
  if (std::string(isa) == "avx2") {
    EXPECT_NE(op->describe().find(kind == FcKind::Bf16 ? "gemv avx2" : "quad blocks"), std::string::npos) << op->describe();
  }
  std::vector<float> x = random_floats(rng, static_cast<size_t>(batch) * depth, 3.0f), y(static_cast<size_t>(batch) * units);
  TensorMemory m = b.memory();
  m.addr[in] = x.data();
  m.addr[out] = y.data();
  op->eval(m);
  return y;
}

const int kFcShapes[][3] = {{1, 1, 1},  {1, 3, 2},  {1, 10, 4},  {1, 10, 5},   {1, 17, 16}, {2, 31, 17},
                            {1, 32, 64}, {3, 33, 65}, {1, 64, 96}, {1, 100, 129}, {2, 7, 3},   {1, 256, 33}};

TEST(QuantFastPaths, HybridFcEqualsReferenceBitForBit) {
  if (!have_avx2()) GTEST_SKIP() << "CPU lacks AVX2";
  unsigned seed = 100;
  for (const auto& s : kFcShapes)
    for (FcKind k : {FcKind::HybridSym, FcKind::HybridAsym})
      for (bool pc : {false, true}) {
        ++seed;
        const auto ref = run_fc(k, seed, s[0], s[1], s[2], pc, "scalar");
        const auto got = run_fc(k, seed, s[0], s[1], s[2], pc, "avx2");
        ASSERT_EQ(0, std::memcmp(got.data(), ref.data(), ref.size() * sizeof(float)))
            << "seed " << seed << " shape " << s[0] << "x" << s[1] << "->" << s[2];
      }
}

TEST(QuantFastPaths, Bf16FcMatchesReferenceUpToSummationOrder) {
  unsigned seed = 200;
  for (const char* isa : {"avx2", "portable"}) {
    if (std::string(isa) == "avx2" && !have_avx2()) continue;
    for (const auto& s : kFcShapes) {
      ++seed;
      const auto ref = run_fc(FcKind::Bf16, seed, s[0], s[1], s[2], false, "scalar");
      const auto got = run_fc(FcKind::Bf16, seed, s[0], s[1], s[2], false, isa);
      expect_close(got, ref, std::string(isa) + " seed " + std::to_string(seed));
    }
  }
}

// CONV_2D over an NHWC input; float or hybrid (int8 filter).
std::vector<float> run_conv(bool hybrid, unsigned seed, int h, int w, int ic, int oc, int kh, int kw, int stride,
                            int dil, PaddingMode pad, bool per_channel, const char* isa) {
  std::mt19937 rng(seed);
  ProgramBuilder b;
  auto out_dim = [&](int n, int k) {
    const int eff = (k - 1) * dil + 1;
    return pad == PaddingMode::Same ? (n + stride - 1) / stride : (n - eff) / stride + 1;
  };
  const int oh = out_dim(h, kh), ow = out_dim(w, kw);
  const int in = b.tensor("x", DType::F32, {1, h, w, ic});
  const size_t nf = static_cast<size_t>(oc) * kh * kw * ic;
  int f;
  if (hybrid) {
    std::vector<float> scales(per_channel ? static_cast<size_t>(oc) : 1u);
    for (auto& s : scales) s = 0.001f + 0.01f * std::uniform_real_distribution<float>(0, 1)(rng);
    f = b.constant("w", DType::I8, {oc, kh, kw, ic}, random_s8(rng, nf), scales, std::vector<int64_t>(scales.size(), 0), 0);
  } else {
    f = b.constant("w", DType::F32, {oc, kh, kw, ic}, random_floats(rng, nf));
  }
  const int bias = b.constant("b", DType::F32, {oc}, random_floats(rng, static_cast<size_t>(oc)));
  const int out = b.tensor("y", DType::F32, {1, oh, ow, oc});
  Op& o = b.op(OpCode::Conv2D, {in, f, bias}, {out});
  o.options.padding = pad;
  o.options.stride_h = o.options.stride_w = stride;
  o.options.dilation_h = o.options.dilation_w = dil;
  o.options.activation = (seed % 2 == 0) ? FusedActivation::Relu6 : FusedActivation::None;
  auto op = b.prepare(0, isa);
  // The fast path under test is the one prepared (the reference says "reference" or "s8 rows").
  if (std::string(isa) == "avx2") {
    // The 4-pixel sequential kernel serves float convs of more than 4 channels (a last, partial
    // group of pixels padded); 4 or fewer run the reference loop, so every float conv sums as it.
    const bool blocks = !hybrid && oc > 4;
    EXPECT_NE(op->describe().find(hybrid ? "implicit gemm avx2" : blocks ? "4-pixel avx2" : "reference"), std::string::npos)
        << op->describe();
  }
  std::vector<float> x = random_floats(rng, static_cast<size_t>(h) * w * ic, 2.0f);
  std::vector<float> y(static_cast<size_t>(oh) * ow * oc);
  TensorMemory m = b.memory();
  m.addr[in] = x.data();
  m.addr[out] = y.data();
  op->eval(m);
  return y;
}

// {h, w, ic, oc, kh, kw, stride, dilation, same?}
const int kConvShapes[][9] = {{64, 1, 10, 32, 3, 1, 1, 2, 0}, {64, 1, 32, 32, 3, 1, 1, 4, 1}, {5, 5, 3, 4, 3, 3, 1, 1, 1},
                              {7, 6, 2, 17, 2, 3, 2, 1, 0},   {9, 9, 5, 1, 3, 3, 2, 1, 1},    {6, 6, 16, 33, 1, 1, 1, 1, 0},
                              {8, 3, 7, 65, 3, 2, 1, 2, 1}};

TEST(QuantFastPaths, FloatConvEqualsTheReferenceLoopBitForBit) {
  unsigned seed = 300;
  for (const char* isa : {"avx2", "portable"}) {
    if (std::string(isa) == "avx2" && !have_avx2()) continue;
    for (const auto& s : kConvShapes) {
      ++seed;
      const PaddingMode pad = s[8] ? PaddingMode::Same : PaddingMode::Valid;
      const auto ref = run_conv(false, seed, s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], pad, false, "scalar");
      const auto got = run_conv(false, seed, s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], pad, false, isa);
      expect_close(got, ref, std::string(isa) + " seed " + std::to_string(seed));
      // TFLite's reference order on every kernel set: bit for bit, not only close.
      ASSERT_EQ(0, std::memcmp(got.data(), ref.data(), ref.size() * sizeof(float))) << isa << " seed " << seed;
    }
  }
}

TEST(QuantFastPaths, HybridConvEqualsS8PathBitForBit) {
  if (!have_avx2()) GTEST_SKIP() << "CPU lacks AVX2";
  unsigned seed = 400;
  for (const auto& s : kConvShapes)
    for (bool pc : {false, true}) {
      ++seed;
      const PaddingMode pad = s[8] ? PaddingMode::Same : PaddingMode::Valid;
      const auto ref = run_conv(true, seed, s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], pad, pc, "scalar");
      const auto got = run_conv(true, seed, s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], pad, pc, "avx2");
      ASSERT_EQ(0, std::memcmp(got.data(), ref.data(), ref.size() * sizeof(float))) << "seed " << seed;
    }
}

// An int8 CONV_2D (per-channel filter scales, int32 bias, input and output zero points anywhere
// in int8, ReLU or none) over seeded random data; the prepared op's describe() in *kind.
std::vector<int8_t> run_int8_conv(unsigned seed, int batch, int h, int w, int ic, int oc, int kh, int kw, int stride,
                                  int dil, PaddingMode pad, const char* isa, Rounding rounding, std::string* kind) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(-128, 127);
  auto out_dim = [&](int n, int k) {
    const int eff = (k - 1) * dil + 1;
    return pad == PaddingMode::Same ? (n + stride - 1) / stride : (n - eff) / stride + 1;
  };
  const int oh = out_dim(h, kh), ow = out_dim(w, kw);
  ProgramBuilder b;
  const int in = b.tensor("x", DType::I8, {batch, h, w, ic}, {0.05f}, {byte(rng)});
  std::vector<int8_t> filter(static_cast<size_t>(oc) * kh * kw * ic);
  for (int8_t& v : filter) v = static_cast<int8_t>(byte(rng));
  std::vector<float> scales(static_cast<size_t>(oc));
  for (float& v : scales) v = 0.001f + 0.01f * std::uniform_real_distribution<float>(0, 1)(rng);
  const int f = b.constant("w", DType::I8, {oc, kh, kw, ic}, filter, scales, std::vector<int64_t>(scales.size(), 0), 0);
  std::vector<int32_t> bias(static_cast<size_t>(oc));
  for (int32_t& v : bias) v = std::uniform_int_distribution<int32_t>(-20000, 20000)(rng);
  const int bi = b.constant("b", DType::I32, {oc}, bias);
  const float out_scale = 0.02f * (1.0f + std::uniform_real_distribution<float>(0, 8)(rng));
  const int out = b.tensor("y", DType::I8, {batch, oh, ow, oc}, {out_scale}, {byte(rng)});
  Op& o = b.op(OpCode::Conv2D, {in, f, bi}, {out});
  o.options.padding = pad;
  o.options.stride_h = o.options.stride_w = stride;
  o.options.dilation_h = o.options.dilation_w = dil;
  o.options.activation = seed % 3 == 0 ? FusedActivation::Relu : FusedActivation::None;
  auto op = b.prepare(0, isa, rounding);
  *kind = op->describe();
  std::vector<int8_t> x(static_cast<size_t>(batch) * h * w * ic);
  for (int8_t& v : x) v = static_cast<int8_t>(byte(rng));
  std::vector<int8_t> y(static_cast<size_t>(batch) * oh * ow * oc);
  TensorMemory m = b.memory();
  m.addr[in] = x.data();
  m.addr[out] = y.data();
  op->eval(m);
  return y;
}

// The int8 implicit GEMMs (AVX2; VNNI where the CPU has it) against TFLite's reference loop
// (isa "scalar", Int8ConvReference), both roundings: patches in place and gathered, channels
// that are and are not a whole number of quads, 1 to 70 output channels, batches of 2.
TEST(QuantFastPaths, Int8ConvEqualsTheReferenceLoopBitForBit) {
  if (!have_avx2()) GTEST_SKIP() << "CPU lacks AVX2";
  std::vector<const char*> isas{"avx2"};
  if (::tickinfer::kernels::isa_supported(::tickinfer::kernels::Isa::Avx512)) isas.push_back("avx512");
  std::mt19937 shapes(17);
  int in_place = 0, gathered = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int batch = 1 + static_cast<int>(shapes() % 2), h = 1 + static_cast<int>(shapes() % 9);
    const int w = 1 + static_cast<int>(shapes() % 9), oc = 1 + static_cast<int>(shapes() % 70);
    const int ic = shapes() % 3 == 0 ? 4 * (1 + static_cast<int>(shapes() % 4)) : 1 + static_cast<int>(shapes() % 13);
    int kh = 1 + static_cast<int>(shapes() % 3);
    const int kw = 1 + static_cast<int>(shapes() % 3), stride = 1 + static_cast<int>(shapes() % 2);
    int dil = 1 + static_cast<int>(shapes() % 2);
    if (shapes() % 3 == 0) kh = 1, dil = 1;  // one filter row: the contiguous form
    const PaddingMode pad = shapes() % 2 ? PaddingMode::Same : PaddingMode::Valid;
    if (pad == PaddingMode::Valid && (h < (kh - 1) * dil + 1 || w < (kw - 1) * dil + 1)) continue;
    for (Rounding r : {Rounding::Double, Rounding::Single}) {
      const unsigned seed = 500 + static_cast<unsigned>(trial);
      std::string ref_kind, kind;
      const auto ref = run_int8_conv(seed, batch, h, w, ic, oc, kh, kw, stride, dil, pad, "scalar", r, &ref_kind);
      ASSERT_NE(ref_kind.find("reference"), std::string::npos) << ref_kind;
      for (const char* isa : isas) {
        const auto got = run_int8_conv(seed, batch, h, w, ic, oc, kh, kw, stride, dil, pad, isa, r, &kind);
        ASSERT_NE(kind.find("implicit gemm"), std::string::npos) << kind;
        if (std::string(isa) == "avx2") ++(kind.find("gathered") != std::string::npos ? gathered : in_place);
        ASSERT_EQ(got, ref) << isa << " trial " << trial << " " << kind;
      }
    }
  }
  EXPECT_GT(in_place, 100);
  EXPECT_GT(gathered, 100);
}

}  // namespace
