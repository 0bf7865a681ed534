// Quant ops on small hand-built Programs. Expected values are worked out by hand from TFLite's
// formulas (interop facts, section 6); each comment shows the arithmetic.
#include <gtest/gtest.h>

#include <cstdint>

#include <limits>

#include <cstring>

#include <cmath>
#include <vector>

#include "support/quant_program_builder.hpp"
#include "tickinfer/error.hpp"

using namespace tickinfer;
using namespace tickinfer::tfl;
using tickinfer::tfl::testing::ProgramBuilder;

namespace {

const char* kIsas[] = {"scalar", "avx2", "portable"};
const Rounding kModes[] = {Rounding::Double, Rounding::Single};

// int8 FC: input scale 0.5 zp 1 (input_offset -1), output scale 1 zp -3, bias int32.
// M = 0.5 * 0.25 / 1 = 0.125 per tensor.
struct Int8Fc {
  ProgramBuilder b;
  int in, out;
  Int8Fc(bool per_channel, FusedActivation act) {
    in = b.tensor("x", DType::I8, {2, 3}, {0.5f}, {1});
    const std::vector<int8_t> w = {1, 2, 3, -4, 0, 10, -10, -10, -10};
    const int f = per_channel ? b.constant("w", DType::I8, {3, 3}, w, {0.25f, 0.5f, 0.125f}, {0, 0, 0}, 0)
                              : b.constant("w", DType::I8, {3, 3}, w, {0.25f}, {0});
    const int bias = b.constant("b", DType::I32, {3}, std::vector<int32_t>{4, -2, 0});
    out = b.tensor("y", DType::I8, {2, 3}, {1.0f}, {-3});
    b.op(OpCode::FullyConnected, {in, f, bias}, {out}).options.activation = act;
  }
};

}  // namespace

TEST(QuantFullyConnected, Int8PerTensorMatchesHandValues) {
  // Row 0: x + offset = [2, -2, 4].
  //   unit0: 2 - 4 + 12 + 4 = 14 -> 14 * 0.125 = 1.75 -> 2 -> -1
  //   unit1: -8 + 0 + 40 - 2 = 30 -> 3.75 -> 4 -> 1
  //   unit2: -40 -> -5 -> -8 -> RELU clamps at zp -3
  // Row 1: x + offset = [-129, 126, -1].
  //   unit0: -129 + 252 - 3 + 4 = 124 -> 15.5 -> 16 -> 13 (both modes: double 62 -> 15.5 -> 16; single (124+4)/8 = 16)
  //   unit1: 516 - 10 - 2 = 504 -> 63 -> 60;  unit2: 40 -> 5 -> 2
  const std::vector<int8_t> expected = {-1, 1, -3, 13, 60, 2};
  for (const char* isa : kIsas) {
    for (Rounding r : kModes) {
      Int8Fc t(false, FusedActivation::Relu);
      auto op = t.b.prepare(0, isa, r);
      std::vector<int8_t> x = {3, -1, 5, -128, 127, 0}, y(6, 99);
      TensorMemory m = t.b.memory();
      m.addr[t.in] = x.data();
      m.addr[t.out] = y.data();
      op->eval(m);
      EXPECT_EQ(y, expected) << isa << " rounding " << static_cast<int>(r) << " " << op->describe();
      EXPECT_EQ(op->macs(), 18);
    }
  }
}

TEST(QuantFullyConnected, Int8PerChannelMatchesHandValues) {
  // M = 0.5 * [0.25, 0.5, 0.125] = [0.125, 0.25, 0.0625]
  //   row0: unit1 30 * 0.25 = 7.5 -> 8 -> 5; unit2 -40 * 0.0625 = -2.5 -> -3 (double) / -2 (single) -> RELU -3
  //   row1: unit1 504 * 0.25 = 126 -> 123; unit2 40 * 0.0625 = 2.5 -> 3 -> 0
  const std::vector<int8_t> expected = {-1, 5, -3, 13, 123, 0};
  for (const char* isa : kIsas) {
    for (Rounding r : kModes) {
      Int8Fc t(true, FusedActivation::Relu);
      auto op = t.b.prepare(0, isa, r);
      std::vector<int8_t> x = {3, -1, 5, -128, 127, 0}, y(6, 99);
      TensorMemory m = t.b.memory();
      m.addr[t.in] = x.data();
      m.addr[t.out] = y.data();
      op->eval(m);
      EXPECT_EQ(y, expected) << isa << " rounding " << static_cast<int>(r);
    }
  }
}

TEST(QuantFullyConnected, Int8RoundingModesDifferWhereTheyShould) {
  // One unit, w = [1], input scale 1 zp 0, output scale 1 zp 0, filter scale 0.25: M = 0.25.
  // x = 101 -> 25.25: double 26 (50.5 -> 51 -> 25.5 -> 26), single 25.
  for (const char* isa : kIsas) {
    for (Rounding r : kModes) {
      ProgramBuilder b;
      const int in = b.tensor("x", DType::I8, {1, 1}, {1.0f}, {0});
      const int f = b.constant("w", DType::I8, {1, 1}, std::vector<int8_t>{1}, {0.25f}, {0});
      const int out = b.tensor("y", DType::I8, {1, 1}, {1.0f}, {0});
      b.op(OpCode::FullyConnected, {in, f, -1}, {out});
      auto op = b.prepare(0, isa, r);
      int8_t x = 101, y = 0;
      TensorMemory m = b.memory();
      m.addr[in] = &x;
      m.addr[out] = &y;
      op->eval(m);
      EXPECT_EQ(y, r == Rounding::Double ? 26 : 25) << isa;
    }
  }
}

TEST(QuantFullyConnected, FloatReferenceAndGemv) {
  // [1, 2] . [[1, 2], [3, -4]]^T + 0.5 = [5.5, -4.5]; RELU -> [5.5, 0]
  for (const char* isa : kIsas) {
    ProgramBuilder b;
    const int in = b.tensor("x", DType::F32, {1, 2});
    const int f = b.constant("w", DType::F32, {2, 2}, std::vector<float>{1, 2, 3, -4});
    const int bias = b.constant("b", DType::F32, {2}, std::vector<float>{0.5f, 0.5f});
    const int out = b.tensor("y", DType::F32, {1, 2});
    b.op(OpCode::FullyConnected, {in, f, bias}, {out}).options.activation = FusedActivation::Relu;
    auto op = b.prepare(0, isa);
    std::vector<float> x = {1, 2}, y(2, -1);
    TensorMemory m = b.memory();
    m.addr[in] = x.data();
    m.addr[out] = y.data();
    op->eval(m);
    EXPECT_FLOAT_EQ(y[0], 5.5f) << isa;
    EXPECT_FLOAT_EQ(y[1], 0.0f) << isa;
  }
}

TEST(QuantFullyConnected, Bf16FilterWidensExactly) {
  // bf16 0x3F80 = 1.0, 0xC000 = -2.0, 0x3F00 = 0.5: [2, 3] . [1, -2] = -4; [2, 3] . [0.5, 0.5] = 2.5
  ProgramBuilder b;
  const int in = b.tensor("x", DType::F32, {1, 2});
  const int f = b.constant("w", DType::BF16, {2, 2}, std::vector<uint16_t>{0x3F80, 0xC000, 0x3F00, 0x3F00});
  const int out = b.tensor("y", DType::F32, {1, 2});
  b.op(OpCode::FullyConnected, {in, f, -1}, {out});
  auto op = b.prepare(0, "avx2");
  std::vector<float> x = {2, 3}, y(2);
  TensorMemory m = b.memory();
  m.addr[in] = x.data();
  m.addr[out] = y.data();
  op->eval(m);
  EXPECT_EQ(y[0], -4.0f);
  EXPECT_EQ(y[1], 2.5f);
}

TEST(QuantFullyConnected, HybridSymmetric) {
  // x = [0.5, -1, 0.25]: max|x| = 1, s = 1/127, q = round(x * 127) = [64, -127, 32] (63.5 -> 64).
  // unit0 w [1, 2, 3]: 64 - 254 + 96 = -94; unit1 w [-4, 0, 10]: -256 + 320 = 64. Filter scale 0.1.
  for (const char* isa : kIsas) {
    ProgramBuilder b;
    const int in = b.tensor("x", DType::F32, {1, 3});
    const int f = b.constant("w", DType::I8, {2, 3}, std::vector<int8_t>{1, 2, 3, -4, 0, 10}, {0.1f}, {0});
    const int bias = b.constant("b", DType::F32, {2}, std::vector<float>{0.5f, -0.5f});
    const int out = b.tensor("y", DType::F32, {1, 2});
    b.op(OpCode::FullyConnected, {in, f, bias}, {out});
    auto op = b.prepare(0, isa);
    std::vector<float> x = {0.5f, -1.0f, 0.25f}, y(2);
    TensorMemory m = b.memory();
    m.addr[in] = x.data();
    m.addr[out] = y.data();
    op->eval(m);
    EXPECT_NEAR(y[0], 0.5 - 94.0 / 127.0 * 0.1, 1e-6) << isa;
    EXPECT_NEAR(y[1], -0.5 + 64.0 / 127.0 * 0.1, 1e-6) << isa;
    // An all-zero input gives the bias (TFLite skips the product).
    x = {0, 0, 0};
    op->eval(m);
    EXPECT_EQ(y[0], 0.5f);
    EXPECT_EQ(y[1], -0.5f);
  }
}

TEST(QuantFullyConnected, HybridAsymmetricPerChannel) {
  // x = [0.5, -1, 0.2]: rmin -1, rmax 0.5, s = 1.5 / 255; zp candidates -128 + 170 = 42 and
  // 127 - 85 = 42 (max side has the smaller error): zp 42; q = round(42 + x * 170) = [127, -128, 76].
  // unit0 w [1, 2, 3] (scale 0.1): 127 - 256 + 228 = 99, minus rowsum 6 * 42 -> -153.
  // unit1 w [-4, 0, 10] (scale 0.2): -508 + 760 = 252, minus 6 * 42 -> 0.
  for (const char* isa : kIsas) {
    ProgramBuilder b;
    const int in = b.tensor("x", DType::F32, {1, 3});
    const int f = b.constant("w", DType::I8, {2, 3}, std::vector<int8_t>{1, 2, 3, -4, 0, 10}, {0.1f, 0.2f}, {0, 0}, 0);
    const int bias = b.constant("b", DType::F32, {2}, std::vector<float>{0.5f, -0.5f});
    const int out = b.tensor("y", DType::F32, {1, 2});
    Op& o = b.op(OpCode::FullyConnected, {in, f, bias}, {out});
    o.options.asymmetric_quantize_inputs = true;
    auto op = b.prepare(0, isa);
    std::vector<float> x = {0.5f, -1.0f, 0.2f}, y(2);
    TensorMemory m = b.memory();
    m.addr[in] = x.data();
    m.addr[out] = y.data();
    op->eval(m);
    EXPECT_NEAR(y[0], 0.5 - 153.0 * (1.5 / 255.0) * 0.1, 1e-6) << isa;
    EXPECT_NEAR(y[1], -0.5, 1e-6) << isa;
  }
}

TEST(QuantFullyConnected, BadOperandsAreErrorsNamingTheOp) {
  ProgramBuilder b;
  const int in = b.tensor("x", DType::I8, {1, 3}, {0.5f}, {0});
  const int f = b.constant("w", DType::I8, {3}, std::vector<int8_t>{1, 2, 3}, {0.5f}, {0});
  const int out = b.tensor("y", DType::I8, {1, 1}, {0.5f}, {0});
  b.op(OpCode::FullyConnected, {in, f, -1}, {out});
  try {
    b.prepare(0);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("op 0 (FULLY_CONNECTED 'test_op')"), std::string::npos) << what;
    EXPECT_NE(what.find("must be 2-D"), std::string::npos) << what;
  }
  ProgramBuilder c;
  const int cin = c.tensor("x", DType::I8, {1, 2}, {0.5f}, {0});
  const int cf = c.constant("w", DType::I8, {1, 2}, std::vector<int8_t>{1, 2}, {0.5f}, {3});
  const int cout = c.tensor("y", DType::I8, {1, 1}, {0.5f}, {0});
  c.op(OpCode::FullyConnected, {cin, cf, -1}, {cout});
  EXPECT_THROW(c.prepare(0), Error);  // asymmetric filter
}

TEST(QuantRegistry, UnsupportedOpNamesIt) {
  ProgramBuilder b;
  const int x = b.tensor("x", DType::F32, {1, 2});
  b.op(OpCode::BatchMatMul, {x, x}, {x});
  try {
    b.prepare(0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("BATCH_MATMUL"), std::string::npos) << e.what();
  }
  ProgramBuilder c;
  const int y = c.tensor("y", DType::F32, {1});
  c.op(static_cast<OpCode>(999), {y}, {y});
  EXPECT_THROW(c.prepare(0), Error);
  ProgramBuilder d;
  d.op(OpCode::Relu, {5}, {6});  // indices past the tensor list
  EXPECT_THROW(d.prepare(0), Error);
}

// ---- QUANTIZE / DEQUANTIZE ------------------------------------------------------------------------

TEST(QuantQuantize, FloatToInt8RoundsHalfAwayAndClamps) {
  // scale 0.5 zp -1: 1.25/0.5 = 2.5 -> 3 -> 2; -0.25 -> -0.5 -> -1 -> -2; 100 -> 199 -> 127;
  // -100 -> -201 -> -128; 0.75 -> 1.5 -> 2 -> 1
  ProgramBuilder b;
  const int in = b.tensor("x", DType::F32, {5});
  const int out = b.tensor("q", DType::I8, {5}, {0.5f}, {-1});
  b.op(OpCode::Quantize, {in}, {out});
  auto op = b.prepare(0);
  std::vector<float> x = {1.25f, -0.25f, 100.0f, -100.0f, 0.75f};
  std::vector<int8_t> y(5);
  TensorMemory m = b.memory();
  m.addr[in] = x.data();
  m.addr[out] = y.data();
  op->eval(m);
  EXPECT_EQ(y, (std::vector<int8_t>{2, -2, 127, -128, 1}));
}

TEST(QuantQuantize, Int8Requantize) {
  // in scale 0.5 zp 2 -> out scale 1 zp -1, M = 0.5:
  // 7 -> 5 * 0.5 = 2.5 -> 3 -> 2.
  // -3 -> -5 * 0.5: double SRDHM(-5, 2^30) = -2 (truncation of -2.9999); single (-5*2^30 + 2^30) >> 31 = -2; -> -3.
  // 127 -> 62.5 -> 63 -> 62;  -128 -> -65 -> -66.
  for (Rounding r : kModes) {
    ProgramBuilder b;
    const int in = b.tensor("x", DType::I8, {4}, {0.5f}, {2});
    const int out = b.tensor("q", DType::I8, {4}, {1.0f}, {-1});
    b.op(OpCode::Quantize, {in}, {out});
    auto op = b.prepare(0, "scalar", r);
    std::vector<int8_t> x = {7, -3, 127, -128}, y(4);
    TensorMemory m = b.memory();
    m.addr[in] = x.data();
    m.addr[out] = y.data();
    op->eval(m);
    EXPECT_EQ(y, (std::vector<int8_t>{2, -3, 62, -66}));
  }
}

TEST(QuantQuantize, Dequantize) {
  ProgramBuilder b;
  const int in = b.tensor("q", DType::I8, {3}, {0.5f}, {2});
  const int out = b.tensor("x", DType::F32, {3});
  b.op(OpCode::Dequantize, {in}, {out});
  auto op = b.prepare(0);
  std::vector<int8_t> x = {7, -3, -128};
  std::vector<float> y(3);
  TensorMemory m = b.memory();
  m.addr[in] = x.data();
  m.addr[out] = y.data();
  op->eval(m);
  EXPECT_EQ(y, (std::vector<float>{2.5f, -2.5f, -65.0f}));
}

TEST(QuantQuantize, DequantizeFloat16) {
  // 0x3C00 = 1, 0xC100 = -2.5, 0x0001 = 2^-24 (subnormal), 0x7C00 = inf
  ProgramBuilder b;
  const int in = b.constant("h", DType::F16, {4}, std::vector<uint16_t>{0x3C00, 0xC100, 0x0001, 0x7C00});
  const int out = b.tensor("x", DType::F32, {4});
  b.op(OpCode::Dequantize, {in}, {out});
  auto op = b.prepare(0);
  std::vector<float> y(4);
  TensorMemory m = b.memory();
  m.addr[out] = y.data();
  op->eval(m);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], -2.5f);
  EXPECT_EQ(y[2], std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(y[3]));
}

// ---- unary activations ----------------------------------------------------------------------------

namespace {
std::vector<int8_t> run_unary_int8(OpCode code, float in_scale, int in_zp, float out_scale, int out_zp,
                                   const std::vector<int8_t>& x, float alpha = 0.2f,
                                   Rounding r = Rounding::Double) {
  ProgramBuilder b;
  const int n = static_cast<int>(x.size());
  const int in = b.tensor("x", DType::I8, {n}, {in_scale}, {in_zp});
  const int out = b.tensor("y", DType::I8, {n}, {out_scale}, {out_zp});
  b.op(code, {in}, {out}).options.alpha = alpha;
  auto op = b.prepare(0, "scalar", r);
  std::vector<int8_t> xs = x, y(x.size());
  TensorMemory m = b.memory();
  m.addr[in] = xs.data();
  m.addr[out] = y.data();
  op->eval(m);
  return y;
}
}  // namespace

TEST(QuantActivation, LogisticInt8Table) {
  // in scale 0.1: q=0 -> 0.5 * 256 = 128 -> 0; q=10 -> sigmoid(1) = 0.731059 * 256 = 187.15 -> 187 -> 59;
  // q=-128 -> sigmoid(-12.8) * 256 = 0.0007 -> 0 -> -128; q=127 -> 255.99 -> 256 -> 128 -> 127
  EXPECT_EQ(run_unary_int8(OpCode::Logistic, 0.1f, 0, 1.0f / 256, -128, {0, 10, -128, 127}),
            (std::vector<int8_t>{0, 59, -128, 127}));
}

TEST(QuantActivation, LogisticInt8RejectsOtherOutputScale) {
  EXPECT_THROW(run_unary_int8(OpCode::Logistic, 0.1f, 0, 1.0f / 128, 0, {0}), Error);
}

TEST(QuantActivation, TanhInt8Table) {
  // in scale 0.05: q=20 -> tanh(1) = 0.761594 * 128 = 97.48 -> 97; q=127 -> 127.99 -> 128 -> 127
  EXPECT_EQ(run_unary_int8(OpCode::Tanh, 0.05f, 0, 1.0f / 128, 0, {20, -20, 0, 127}),
            (std::vector<int8_t>{97, -97, 0, 127}));
}

TEST(QuantActivation, ReluAndRelu6Int8) {
  // in scale 0.5 zp -10, out scale 0.25 zp -128: M = 2.
  // -10 -> 0 -> -128; -20 -> -20 -> clamp -128; 0 -> 20 -> -108; 40 -> 100 -> -28; 127 -> 274 -> 127
  for (Rounding r : kModes) {
    EXPECT_EQ(run_unary_int8(OpCode::Relu, 0.5f, -10, 0.25f, -128, {-10, -20, 0, 40, 127}, 0.2f, r),
              (std::vector<int8_t>{-128, -128, -108, -28, 127}));
    // RELU6: upper bound -128 + 6 / 0.25 = -104
    EXPECT_EQ(run_unary_int8(OpCode::Relu6, 0.5f, -10, 0.25f, -128, {-10, -20, 0, 40, 127}, 0.2f, r),
              (std::vector<int8_t>{-128, -128, -108, -104, -104}));
  }
}

TEST(QuantActivation, LeakyReluInt8) {
  // scales 0.5 -> 0.5, alpha 0.5: identity M = 1, alpha M = 0.5.
  // 10 -> 10; -10 -> -5; -11 -> -5.5 -> -5 (double: SRDHM(-11, 2^30) = -5; single: -10*2^30 >> 31 = -5); -128 -> -64
  for (Rounding r : kModes) {
    EXPECT_EQ(run_unary_int8(OpCode::LeakyRelu, 0.5f, 0, 0.5f, 0, {10, -10, -11, -128}, 0.5f, r),
              (std::vector<int8_t>{10, -5, -5, -64}));
  }
}

TEST(QuantActivation, FloatOps) {
  struct Case {
    OpCode code;
    float x, y;
  } cases[] = {{OpCode::Logistic, 0.0f, 0.5f},  {OpCode::Logistic, 20.0f, 1.0f},
               {OpCode::Tanh, 0.0f, 0.0f},      {OpCode::Relu, -1.0f, 0.0f},
               {OpCode::Relu6, 7.0f, 6.0f},     {OpCode::LeakyRelu, -2.0f, -0.5f},
               {OpCode::Neg, 2.0f, -2.0f},      {OpCode::Abs, -3.0f, 3.0f},
               {OpCode::Square, 3.0f, 9.0f},    {OpCode::Rsqrt, 4.0f, 0.5f},
               {OpCode::Sqrt, 9.0f, 3.0f},      {OpCode::HardSwish, 3.0f, 3.0f},
               {OpCode::Elu, 1.5f, 1.5f}};
  for (const Case& c : cases) {
    ProgramBuilder b;
    const int in = b.tensor("x", DType::F32, {1});
    const int out = b.tensor("y", DType::F32, {1});
    b.op(c.code, {in}, {out}).options.alpha = 0.25f;
    auto op = b.prepare(0);
    float x = c.x, y = -99;
    TensorMemory m = b.memory();
    m.addr[in] = &x;
    m.addr[out] = &y;
    op->eval(m);
    EXPECT_FLOAT_EQ(y, c.y) << op_name(c.code);
  }
}

// Float LEAKY_RELU runs four lanes at a time with a bitwise select: each element must still be
// TFLite's x > 0 ? x : x * alpha bit for bit, signed zeros, infinities and NaN included, in the
// vector part and the tail, in place and not, for a positive and a negative alpha.
TEST(QuantActivation, FloatLeakyReluIsTheReferenceSelectBitForBit) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {-2.0f, 0.0f, -0.0f, 3.5f, inf, -inf, nan, 1e-40f, -1e-40f, -7.25f, 1.0f};
  for (float alpha : {0.25f, -0.5f})
    for (bool in_place : {false, true}) {
      ProgramBuilder b;
      const int in = b.tensor("x", DType::F32, {static_cast<int>(x.size())});
      const int out = in_place ? in : b.tensor("y", DType::F32, {static_cast<int>(x.size())});
      b.op(OpCode::LeakyRelu, {in}, {out}).options.alpha = alpha;
      auto op = b.prepare(0);
      std::vector<float> xs = x, ys(x.size(), -99.0f);
      TensorMemory m = b.memory();
      m.addr[in] = xs.data();
      if (!in_place) m.addr[out] = ys.data();
      op->eval(m);
      const std::vector<float>& got = in_place ? xs : ys;
      for (size_t i = 0; i < x.size(); ++i) {
        volatile float product = x[i] * alpha;
        const float want = x[i] > 0.0f ? x[i] : product;
        uint32_t gb, wb;
        std::memcpy(&gb, &got[i], 4);
        std::memcpy(&wb, &want, 4);
        EXPECT_EQ(gb, wb) << "x " << x[i] << " alpha " << alpha << " in place " << in_place;
      }
    }
}

// ---- RESHAPE / EXPAND_DIMS / SQUEEZE --------------------------------------------------------------

TEST(QuantShapeOps, CopyBytesAndCheckCounts) {
  for (OpCode code : {OpCode::Reshape, OpCode::ExpandDims, OpCode::Squeeze}) {
    ProgramBuilder b;
    const int in = b.tensor("x", DType::I8, {1, 2, 3}, {0.5f}, {1});
    const int shape = b.constant("s", DType::I32, {2}, std::vector<int32_t>{3, 2});
    const int out = b.tensor("y", DType::I8, {3, 2}, {0.5f}, {1});
    b.op(code, {in, shape}, {out});
    auto op = b.prepare(0);
    std::vector<int8_t> x = {1, 2, 3, 4, 5, 6}, y(6);
    TensorMemory m = b.memory();
    m.addr[in] = x.data();
    m.addr[out] = y.data();
    op->eval(m);
    EXPECT_EQ(y, x) << op_name(code);
  }
  ProgramBuilder bad;
  const int in = bad.tensor("x", DType::F32, {2, 3});
  const int out = bad.tensor("y", DType::F32, {5});
  bad.op(OpCode::Reshape, {in}, {out});
  EXPECT_THROW(bad.prepare(0), Error);
}
