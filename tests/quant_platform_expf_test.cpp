// The vector std::exp (tflite/kernels/platform_expf.hpp) against std::exp itself, bit for bit:
// every float from the most negative to the overflow point in steps of 61 bit patterns (all of
// them with TICKINFER_EXHAUSTIVE=1: about 2.2e9 values, a minute), the specials, in place and
// not, every tail length. Then the float SOFTMAX that uses it against TFLite's reference loop
// (max, exp((x - max) * beta) by std::exp, a sum in element order, a division), for row counts
// that leave every tail of its four-row groups and rows holding NaN, infinities and masked -1e9s;
// and the float LOGISTIC that uses it against TFLite's reference formula.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "support/quant_program_builder.hpp"
#include "tflite/kernels/logistic_f32.hpp"
#include "tflite/kernels/platform_expf.hpp"
#include "tflite/kernels/platform_tanhf.hpp"

namespace tickinfer::tfl {
namespace {

namespace tk = ::tickinfer::tfl::kernels;
using testing::ProgramBuilder;

bool same_bits(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// The forms this CPU runs: the scalar loop, and the vector form where the CPU has AVX2 (the
// check on first use must have accepted it: on glibc's x86-64 libm it reproduces std::exp).
std::vector<tk::ExpfArrayFn> forms() {
  std::vector<tk::ExpfArrayFn> f = {tk::expf_array_scalar};
  if (tk::ExpfArrayFn v = tk::expf_array_vector_unchecked()) {
    EXPECT_EQ(tk::expf_array(::tickinfer::kernels::Isa::Avx2), v)
        << "the vector form did not reproduce this libm's expf: the scalar loop runs instead";
    f.push_back(v);
  } else {
    std::printf("no vector form on this CPU: the scalar loop only\n");
  }
  if (tk::ExpfArrayFn v = tk::expf_array_avx512_unchecked()) {
    EXPECT_EQ(tk::expf_array(::tickinfer::kernels::Isa::Avx512), v) << "the AVX-512 form did not reproduce this libm's expf";
    f.push_back(v);
  } else {
    std::printf("no AVX-512 here: its exp form is not under test\n");
  }
  return f;
}

TEST(PlatformExpf, EveryStrideOfFloatsIsStdExpBitForBit) {
  const bool all = std::getenv("TICKINFER_EXHAUSTIVE") != nullptr;
  const uint64_t stride = all ? 1 : 61;
  constexpr int kBlock = 4096;
  std::vector<float> x(kBlock), y(kBlock);
  for (tk::ExpfArrayFn f : forms()) {
    uint64_t checked = 0, wrong = 0;
    // Positive floats up to 89 (past the overflow point), then every negative one, NaNs included.
    auto sweep = [&](uint64_t from, uint64_t to) {
      for (uint64_t b = from; b < to;) {
        int n = 0;
        for (; n < kBlock && b < to; ++n, b += stride) {
          const uint32_t bits = static_cast<uint32_t>(b);
          std::memcpy(&x[static_cast<size_t>(n)], &bits, 4);
        }
        f(x.data(), y.data(), n);
        for (int i = 0; i < n; ++i, ++checked) {
          if (!same_bits(y[static_cast<size_t>(i)], std::exp(x[static_cast<size_t>(i)])) && ++wrong <= 5)
            ADD_FAILURE() << "exp(" << std::hexfloat << x[static_cast<size_t>(i)] << ") = " << y[static_cast<size_t>(i)]
                          << ", std::exp gives " << std::exp(x[static_cast<size_t>(i)]);
        }
      }
    };
    uint32_t top;
    const float limit = 89.0f;
    std::memcpy(&top, &limit, 4);
    sweep(0, top);
    sweep(0x80000000u, 0x100000000ull);
    EXPECT_EQ(wrong, 0u) << checked << " values checked";
    EXPECT_GT(checked, all ? 3'000'000'000ull : 50'000'000ull);
  }
}

// Where the CPU has AVX2 the vector forms exist and are the ones in use: the sweeps above and below
// test them, not only the scalar loops.
TEST(PlatformExpf, TheVectorFormsAreUnderTestWhereTheCpuHasAvx2) {
#if defined(__x86_64__)
  if (!::tickinfer::kernels::isa_supported(::tickinfer::kernels::Isa::Avx2)) GTEST_SKIP() << "no AVX2 here";
  EXPECT_NE(tk::expf_array_vector_unchecked(), nullptr);
  EXPECT_NE(tk::tanhf_array_vector_unchecked(), nullptr);
  EXPECT_NE(tk::expf_array(::tickinfer::kernels::Isa::Avx2), tk::expf_array_scalar);
  EXPECT_NE(tk::tanhf_array(::tickinfer::kernels::Isa::Avx2), tk::tanhf_array_scalar);
#else
  GTEST_SKIP() << "not x86-64: the scalar loops only";
#endif
}

TEST(PlatformExpf, SpecialsTailsAndAliasing) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> base = {0.0f, -0.0f, -inf, inf, nan, -1e9f, -103.5f, -103.97f, -104.0f, -87.9f, -88.0f,
                                   88.5f, 88.73f, 1e-40f, -1e-40f, -0.5f, 1.0f, -20.25f, 3.0f};
  for (tk::ExpfArrayFn f : forms())
    for (size_t n = 0; n <= base.size(); ++n)
      for (bool in_place : {false, true}) {
        std::vector<float> x(base.begin(), base.begin() + static_cast<std::ptrdiff_t>(n)), y(n, -7.0f);
        float* out = in_place ? x.data() : y.data();
        f(x.data(), out, static_cast<int>(n));
        for (size_t i = 0; i < n; ++i)
          EXPECT_TRUE(same_bits(out[i], std::exp(base[i]))) << "n " << n << " i " << i << " in place " << in_place;
      }
}

// TFLite's reference float softmax, one row at a time.
void reference_softmax(const float* x, float* y, int rows, int depth, float beta) {
  for (int r = 0; r < rows; ++r, x += depth, y += depth) {
    float max = std::numeric_limits<float>::lowest();
    for (int c = 0; c < depth; ++c) max = std::max(max, x[c]);
    float sum = 0.0f;
    for (int c = 0; c < depth; ++c) {
      const float e = std::exp((x[c] - max) * beta);
      y[c] = e;
      sum += e;
    }
    for (int c = 0; c < depth; ++c) y[c] = y[c] / sum;
  }
}

TEST(PlatformExpf, FloatSoftmaxIsTheReferenceLoopBitForBit) {
  std::mt19937 rng(20261206);
  std::normal_distribution<float> score(0.0f, 4.0f);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* isa : {"scalar", "avx2", "avx512"})
    for (int rows : {1, 3, 4, 5, 8, 9})
      for (int depth : {1, 2, 3, 4, 5, 7, 16, 33, 100, 130})
        for (float beta : {1.0f, 0.37f}) {
          std::vector<float> x(static_cast<size_t>(rows) * depth);
          for (float& v : x) v = score(rng);
          // Masked scores (the converter's SELECT_V2 writes -1e9), and a row of specials.
          for (size_t i = 0; i < x.size(); i += 3) x[i] = -1e9f;
          if (depth >= 4 && rows >= 2) {
            x[static_cast<size_t>(depth)] = nan, x[static_cast<size_t>(depth) + 1] = -inf;
            x[static_cast<size_t>(depth) + 2] = inf;
          }
          ProgramBuilder b;
          const int in = b.tensor("x", DType::F32, {rows, depth});
          const int out = b.tensor("y", DType::F32, {rows, depth});
          b.op(OpCode::Softmax, {in}, {out}).options.beta = beta;
          auto op = b.prepare(0, isa);
          std::vector<float> got(x.size(), -99.0f), want(x.size());
          TensorMemory m = b.memory();
          m.addr[in] = x.data();
          m.addr[out] = got.data();
          op->eval(m);
          reference_softmax(x.data(), want.data(), rows, depth, beta);
          for (size_t i = 0; i < x.size(); ++i)
            ASSERT_TRUE(same_bits(got[i], want[i])) << isa << " rows " << rows << " depth " << depth << " beta " << beta
                                                    << " element " << i << ": " << got[i] << " vs " << want[i];
        }
}

// Float LOGISTIC (its exponentials through the vector std::exp) against TFLite's reference
// formula, over lengths that leave every tail of its 64-value chunks, in place and not.
TEST(PlatformExpf, FloatLogisticIsTheReferenceFormulaBitForBit) {
  auto reference = [](float x) {
    if (x > 16.619047164916992188f) return 1.0f;
    if (x < -9.0f) return std::exp(x);
    return 1.0f / (1.0f + std::exp(-x));
  };
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-30.0f, 30.0f);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* isa : {"scalar", "avx2", "avx512"})
    for (int n : {1, 5, 7, 8, 9, 63, 64, 65, 200})
      for (bool in_place : {false, true}) {
        std::vector<float> x(static_cast<size_t>(n));
        for (float& v : x) v = u(rng);
        const float specials[] = {-9.0f, 16.619047164916992188f, -0.0f, inf, -inf, nan, -104.5f, 88.9f};
        for (size_t i = 0; i < std::size(specials) && i < x.size(); ++i) x[i * 7 % x.size()] = specials[i];
        ProgramBuilder b;
        const int in = b.tensor("x", DType::F32, {n});
        const int out = in_place ? in : b.tensor("y", DType::F32, {n});
        b.op(OpCode::Logistic, {in}, {out});
        auto op = b.prepare(0, isa);
        std::vector<float> xs = x, ys(x.size(), -99.0f);
        TensorMemory m = b.memory();
        m.addr[in] = xs.data();
        if (!in_place) m.addr[out] = ys.data();
        op->eval(m);
        const std::vector<float>& got = in_place ? xs : ys;
        for (size_t i = 0; i < x.size(); ++i)
          ASSERT_TRUE(same_bits(got[i], reference(x[i]))) << isa << " n " << n << " x " << x[i] << ": " << got[i];
      }
}

// The vector LOGISTIC form itself (the whole formula in the vector) against the formula with
// std::exp, bit for bit, on every 61st float of both signs (every one with TICKINFER_EXHAUSTIVE=1).
TEST(PlatformExpf, VectorLogisticIsTheReferenceFormulaOnEveryStrideOfFloats) {
  const tk::LogisticArrayFn f = tk::logistic_array(::tickinfer::kernels::Isa::Avx512);
  if (f == tk::logistic_array_scalar) GTEST_SKIP() << "no vector logistic on this CPU (needs AVX2 and glibc's expf)";
  const uint32_t step = std::getenv("TICKINFER_EXHAUSTIVE") ? 1 : 61;
  constexpr int kBatch = 4096;
  std::vector<float> x(kBatch), y(kBatch);
  auto reference = [](float v) {
    const float e = std::exp(v < -9.0f ? v : -v);
    return v > 16.619047164916992188f ? 1.0f : (v < -9.0f ? e : 1.0f / (1.0f + e));
  };
  uint64_t checked = 0;
  int fill = 0;
  auto flush = [&] {
    f(x.data(), y.data(), fill);
    for (int i = 0; i < fill; ++i)
      ASSERT_TRUE(same_bits(y[static_cast<size_t>(i)], reference(x[static_cast<size_t>(i)])))
          << "x " << x[static_cast<size_t>(i)] << ": " << y[static_cast<size_t>(i)];
    checked += static_cast<uint64_t>(fill);
    fill = 0;
  };
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += step) {
    const uint32_t b = static_cast<uint32_t>(bits);
    std::memcpy(&x[static_cast<size_t>(fill++)], &b, sizeof b);
    if (fill == kBatch) {
      flush();
      if (HasFatalFailure()) return;
    }
  }
  flush();
  EXPECT_GT(checked, 70000000u);
}

// The vector std::tanh (tflite/kernels/platform_tanhf.hpp) against std::tanh: every 61st float
// of both signs (every one with TICKINFER_EXHAUSTIVE=1), specials, tails, in place; and the float
// TANH op that uses it.
std::vector<tk::TanhfArrayFn> tanh_forms() {
  std::vector<tk::TanhfArrayFn> f = {tk::tanhf_array_scalar};
  if (tk::TanhfArrayFn v = tk::tanhf_array_vector_unchecked()) {
    EXPECT_EQ(tk::tanhf_array(::tickinfer::kernels::Isa::Avx2), v)
        << "the vector form did not reproduce this libm's tanhf: the scalar loop runs instead";
    f.push_back(v);
  } else {
    std::printf("no vector form on this CPU: the scalar loop only\n");
  }
  if (tk::TanhfArrayFn v = tk::tanhf_array_avx512_unchecked()) {
    EXPECT_EQ(tk::tanhf_array(::tickinfer::kernels::Isa::Avx512), v)
        << "the AVX-512 form did not reproduce this libm's tanhf";
    f.push_back(v);
  } else {
    std::printf("no AVX-512 here: its tanh form is not under test\n");
  }
  return f;
}

TEST(PlatformTanhf, EveryStrideOfFloatsIsStdTanhBitForBit) {
  const bool all = std::getenv("TICKINFER_EXHAUSTIVE") != nullptr;
  const uint64_t stride = all ? 1 : 61;
  constexpr int kBlock = 4096;
  std::vector<float> x(kBlock), y(kBlock);
  for (tk::TanhfArrayFn f : tanh_forms()) {
    uint64_t checked = 0, wrong = 0;
    for (uint64_t b = 0; b < 0x100000000ull;) {
      int n = 0;
      for (; n < kBlock && b < 0x100000000ull; ++n, b += stride) {
        const uint32_t bits = static_cast<uint32_t>(b);
        std::memcpy(&x[static_cast<size_t>(n)], &bits, 4);
      }
      f(x.data(), y.data(), n);
      for (int i = 0; i < n; ++i, ++checked) {
        const float v = x[static_cast<size_t>(i)];
        if (!same_bits(y[static_cast<size_t>(i)], std::tanh(v)) && ++wrong <= 5)
          ADD_FAILURE() << "tanh(" << std::hexfloat << v << ") = " << y[static_cast<size_t>(i)] << ", std::tanh gives "
                        << std::tanh(v);
      }
    }
    EXPECT_EQ(wrong, 0u) << checked << " values checked";
    EXPECT_GT(checked, all ? 4'000'000'000ull : 70'000'000ull);
  }
}

TEST(PlatformTanhf, FloatTanhOpIsStdTanhInPlaceAndNot) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> base = {0.0f, -0.0f, inf, -inf, nan, 22.0f, -21.99f, 1.0f, -0.99999994f, 1e-20f, -1e-30f,
                                   0.5f, -3.25f, 17.0f, -0.34657f, 0.3466f, 1.0397f, -1.0398f, 40.0f, 1e-7f};
  for (const char* isa : {"scalar", "avx2"})
    for (size_t n = 1; n <= base.size(); n += 3)
      for (bool in_place : {false, true}) {
        ProgramBuilder b;
        const int in = b.tensor("x", DType::F32, {static_cast<int>(n)});
        const int out = in_place ? in : b.tensor("y", DType::F32, {static_cast<int>(n)});
        b.op(OpCode::Tanh, {in}, {out});
        auto op = b.prepare(0, isa);
        std::vector<float> xs(base.begin(), base.begin() + static_cast<std::ptrdiff_t>(n)), ys(n, -99.0f);
        TensorMemory m = b.memory();
        m.addr[in] = xs.data();
        if (!in_place) m.addr[out] = ys.data();
        op->eval(m);
        const std::vector<float>& got = in_place ? xs : ys;
        for (size_t i = 0; i < n; ++i)
          EXPECT_TRUE(same_bits(got[i], std::tanh(base[i]))) << isa << " n " << n << " x " << base[i] << ": " << got[i];
      }
}

}  // namespace
}  // namespace tickinfer::tfl
