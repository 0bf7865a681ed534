// Layout ops (STRIDED_SLICE, TRANSPOSE, PAD, SPLIT, PACK, UNPACK, GATHER, CONCATENATION,
// SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND) and the binary / reduce ops the fixture models do not
// reach (MAXIMUM, MINIMUM, DIV, SUM, int8 ADD/MEAN rounding), on hand-built Programs. Expected
// values are worked out by hand from the ops' definitions; comments show how.
#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel_set.hpp"
#include "support/quant_program_builder.hpp"
#include "tickinfer/error.hpp"

using namespace tickinfer;
using namespace tickinfer::tfl;
using tickinfer::tfl::testing::ProgramBuilder;

namespace {

std::vector<float> iota_f(size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

// Runs op 0 of `b` with the given input buffers (bound to `ins`) and output buffers.
template <class In, class Out>
void run(ProgramBuilder& b, const std::vector<int>& ins, std::vector<std::vector<In>>& in_data,
         const std::vector<int>& outs, std::vector<std::vector<Out>>& out_data, const char* isa = "scalar",
         Rounding r = Rounding::Double) {
  auto op = b.prepare(0, isa, r);
  TensorMemory m = b.memory();
  for (size_t i = 0; i < ins.size(); ++i) m.addr[static_cast<size_t>(ins[i])] = in_data[i].data();
  for (size_t i = 0; i < outs.size(); ++i) m.addr[static_cast<size_t>(outs[i])] = out_data[i].data();
  op->eval(m);
}

std::vector<float> run1(ProgramBuilder& b, int in, std::vector<float> x, int out, size_t n) {
  std::vector<std::vector<float>> xs{std::move(x)}, ys{std::vector<float>(n, -99.0f)};
  run(b, {in}, xs, {out}, ys);
  return ys[0];
}

}  // namespace

TEST(QuantStridedSlice, LastStepWithShrinkAxis) {
  // x [1, 4, 3] = 0..11; x[:, -1, :] (begin_mask/end_mask on axes 0 and 2, shrink axis 1) = row 3.
  ProgramBuilder b;
  const int x = b.tensor("x", DType::F32, {1, 4, 3});
  const int begin = b.constant("begin", DType::I32, {3}, std::vector<int32_t>{0, -1, 0});
  const int end = b.constant("end", DType::I32, {3}, std::vector<int32_t>{0, 0, 0});
  const int strides = b.constant("strides", DType::I32, {3}, std::vector<int32_t>{1, 1, 1});
  const int y = b.tensor("y", DType::F32, {1, 3});
  OpOptions& o = b.op(OpCode::StridedSlice, {x, begin, end, strides}, {y}).options;
  o.begin_mask = 5;
  o.end_mask = 5;
  o.shrink_axis_mask = 2;
  EXPECT_EQ(run1(b, x, iota_f(12), y, 3), (std::vector<float>{9, 10, 11}));
}

TEST(QuantStridedSlice, PositiveNegativeStridesAndOffset) {
  // x = 0..5: [1:6:2] = 1, 3, 5; [-1::-2] (end masked) = 5, 3, 1; offset: end = begin + 2 -> [2:4] = 2, 3.
  struct Case {
    int begin, end, stride, end_mask;
    bool offset;
    std::vector<float> want;
  };
  for (const Case& c : {Case{1, 6, 2, 0, false, {1, 3, 5}}, Case{-1, 0, -2, 1, false, {5, 3, 1}},
                        Case{2, 2, 1, 0, true, {2, 3}}}) {
    ProgramBuilder b;
    const int x = b.tensor("x", DType::F32, {6});
    const int begin = b.constant("begin", DType::I32, {1}, std::vector<int32_t>{c.begin});
    const int end = b.constant("end", DType::I32, {1}, std::vector<int32_t>{c.end});
    const int strides = b.constant("strides", DType::I32, {1}, std::vector<int32_t>{c.stride});
    const int y = b.tensor("y", DType::F32, {static_cast<int>(c.want.size())});
    OpOptions& o = b.op(OpCode::StridedSlice, {x, begin, end, strides}, {y}).options;
    o.end_mask = c.end_mask;
    o.offset = c.offset;
    EXPECT_EQ(run1(b, x, iota_f(6), y, c.want.size()), c.want) << c.begin << ":" << c.end << ":" << c.stride;
  }
}

TEST(QuantStridedSlice, RefusesEllipsisAndWrongOutputShape) {
  ProgramBuilder b;
  const int x = b.tensor("x", DType::F32, {6});
  const int begin = b.constant("begin", DType::I32, {1}, std::vector<int32_t>{0});
  const int end = b.constant("end", DType::I32, {1}, std::vector<int32_t>{6});
  const int strides = b.constant("strides", DType::I32, {1}, std::vector<int32_t>{1});
  const int y = b.tensor("y", DType::F32, {5});
  b.op(OpCode::StridedSlice, {x, begin, end, strides}, {y});
  EXPECT_THROW(b.prepare(0), Error);  // 6 values into 5
  b.program.tensors[static_cast<size_t>(y)].shape = {6};
  b.program.ops[0].options.ellipsis_mask = 1;
  try {
    b.prepare(0);
    FAIL() << "ellipsis_mask accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("STRIDED_SLICE"), std::string::npos) << e.what();
  }
}

TEST(QuantTranspose, SwapsAxes) {
  // [2, 3] = [[0 1 2] [3 4 5]] transposed = [[0 3] [1 4] [2 5]].
  ProgramBuilder b;
  const int x = b.tensor("x", DType::F32, {2, 3});
  const int perm = b.constant("perm", DType::I32, {2}, std::vector<int32_t>{1, 0});
  const int y = b.tensor("y", DType::F32, {3, 2});
  b.op(OpCode::Transpose, {x, perm}, {y});
  EXPECT_EQ(run1(b, x, iota_f(6), y, 6), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST(QuantReverse, FlipsContiguousAxesOfAnyTypeAndRefusesOthers) {
  // [2, 3] = [[0 1 2] [3 4 5]] reversed along axis 0: [[3 4 5] [0 1 2]]; along both: [5 .. 0].
  ProgramBuilder b;
  const int x = b.tensor("x", DType::F32, {2, 3});
  const int axis = b.constant("axis", DType::I32, {1}, std::vector<int32_t>{0});
  const int y = b.tensor("y", DType::F32, {2, 3});
  b.op(OpCode::ReverseV2, {x, axis}, {y});
  EXPECT_EQ(run1(b, x, iota_f(6), y, 6), (std::vector<float>{3, 4, 5, 0, 1, 2}));
  ProgramBuilder both;
  const int xb = both.tensor("x", DType::F32, {2, 3});
  const int ab = both.constant("axis", DType::I32, {2}, std::vector<int32_t>{-1, 0});
  const int yb = both.tensor("y", DType::F32, {2, 3});
  both.op(OpCode::ReverseV2, {xb, ab}, {yb});
  EXPECT_EQ(run1(both, xb, iota_f(6), yb, 6), (std::vector<float>{5, 4, 3, 2, 1, 0}));
  // int8 copies the stored values.
  ProgramBuilder q;
  const int xq = q.tensor("x", DType::I8, {1, 3}, {0.5f}, {-5});
  const int aq = q.constant("axis", DType::I32, {1}, std::vector<int32_t>{1});
  const int yq = q.tensor("y", DType::I8, {1, 3}, {0.5f}, {-5});
  q.op(OpCode::ReverseV2, {xq, aq}, {yq});
  std::vector<std::vector<int8_t>> xs{{7, -8, 9}}, ys{std::vector<int8_t>(3, 0)};
  run(q, {xq}, xs, {yq}, ys);
  EXPECT_EQ(ys[0], (std::vector<int8_t>{9, -8, 7}));
  // Axes 0 and 2 of a rank-3 tensor are not one run (TFLite refuses them too); an axis listed
  // twice; an output of another shape.
  const auto refused = [](const std::vector<int32_t>& axes, const Shape& out_shape, const char* why) {
    ProgramBuilder r;
    const int xr = r.tensor("x", DType::F32, {2, 2, 2});
    const int ar = r.constant("axis", DType::I32, {static_cast<int>(axes.size())}, axes);
    const int yr = r.tensor("y", DType::F32, out_shape);
    r.op(OpCode::ReverseV2, {xr, ar}, {yr});
    try {
      r.prepare(0);
      ADD_FAILURE() << "prepared; expected '" << why << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refused({0, 2}, {2, 2, 2}, "not contiguous");
  refused({1, -2}, {2, 2, 2}, "listed twice");
  refused({0}, {2, 4}, "is not the input's shape");
}

TEST(QuantPad, Int8PadsWithTheZeroPoint) {
  // [1, 2] padded by [[0, 0], [1, 2]] with zero point -5: [-5, 7, 8, -5, -5].
  ProgramBuilder b;
  const int x = b.tensor("x", DType::I8, {1, 2}, {0.5f}, {-5});
  const int p = b.constant("p", DType::I32, {2, 2}, std::vector<int32_t>{0, 0, 1, 2});
  const int y = b.tensor("y", DType::I8, {1, 5}, {0.5f}, {-5});
  b.op(OpCode::Pad, {x, p}, {y});
  std::vector<std::vector<int8_t>> xs{{7, 8}}, ys{std::vector<int8_t>(5, 0)};
  run(b, {x}, xs, {y}, ys);
  EXPECT_EQ(ys[0], (std::vector<int8_t>{-5, 7, 8, -5, -5}));
}

TEST(QuantPad, FloatPadsRunsOfSeveralElements) {
  // [1, 2] = [1 2] padded by [[0, 0], [3, 4]]: runs of 3 and 4 zeros around it.
  ProgramBuilder b;
  const int x = b.tensor("x", DType::F32, {1, 2});
  const int p = b.constant("p", DType::I32, {2, 2}, std::vector<int32_t>{0, 0, 3, 4});
  const int y = b.tensor("y", DType::F32, {1, 9});
  b.op(OpCode::Pad, {x, p}, {y});
  std::vector<std::vector<float>> xs{{1, 2}}, ys{std::vector<float>(9, 7.0f)};
  run(b, {x}, xs, {y}, ys);
  EXPECT_EQ(ys[0], (std::vector<float>{0, 0, 0, 1, 2, 0, 0, 0, 0}));
}

TEST(QuantSplit, TwoHalvesAlongTheLastAxis) {
  // [2, 4] = 0..7 split in 2 on axis 1: [[0 1] [4 5]] and [[2 3] [6 7]].
  ProgramBuilder b;
  const int axis = b.constant("axis", DType::I32, {}, std::vector<int32_t>{-1});
  const int x = b.tensor("x", DType::F32, {2, 4});
  const int y0 = b.tensor("y0", DType::F32, {2, 2});
  const int y1 = b.tensor("y1", DType::F32, {2, 2});
  b.op(OpCode::Split, {axis, x}, {y0, y1}).options.num = 2;
  std::vector<std::vector<float>> xs{iota_f(8)}, ys{std::vector<float>(4), std::vector<float>(4)};
  run(b, {x}, xs, {y0, y1}, ys);
  EXPECT_EQ(ys[0], (std::vector<float>{0, 1, 4, 5}));
  EXPECT_EQ(ys[1], (std::vector<float>{2, 3, 6, 7}));
}

TEST(QuantPackUnpack, StackAndUnstack) {
  // pack([0 1 2], [3 4 5], axis 1) = [[0 3] [1 4] [2 5]]; unpack of that on axis 1 gives them back.
  ProgramBuilder b;
  const int a = b.tensor("a", DType::F32, {3});
  const int c = b.tensor("c", DType::F32, {3});
  const int y = b.tensor("y", DType::F32, {3, 2});
  OpOptions& o = b.op(OpCode::Pack, {a, c}, {y}).options;
  o.axis = 1;
  o.num = 2;
  std::vector<std::vector<float>> xs{{0, 1, 2}, {3, 4, 5}}, ys{std::vector<float>(6)};
  run(b, {a, c}, xs, {y}, ys);
  EXPECT_EQ(ys[0], (std::vector<float>{0, 3, 1, 4, 2, 5}));

  ProgramBuilder u;
  const int x = u.tensor("x", DType::F32, {3, 2});
  const int u0 = u.tensor("u0", DType::F32, {3});
  const int u1 = u.tensor("u1", DType::F32, {3});
  OpOptions& uo = u.op(OpCode::Unpack, {x}, {u0, u1}).options;
  uo.axis = 1;
  uo.num = 2;
  std::vector<std::vector<float>> uxs{ys[0]}, uys{std::vector<float>(3), std::vector<float>(3)};
  run(u, {x}, uxs, {u0, u1}, uys);
  EXPECT_EQ(uys[0], (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(uys[1], (std::vector<float>{3, 4, 5}));
}

TEST(QuantGather, RowsByConstantIndices) {
  // params [3, 2] = [[0 1] [2 3] [4 5]], indices [2, 0] on axis 0: [[4 5] [0 1]].
  ProgramBuilder b;
  const int p = b.tensor("p", DType::F32, {3, 2});
  const int idx = b.constant("idx", DType::I32, {2}, std::vector<int32_t>{2, 0});
  const int y = b.tensor("y", DType::F32, {2, 2});
  b.op(OpCode::Gather, {p, idx}, {y});
  EXPECT_EQ(run1(b, p, iota_f(6), y, 4), (std::vector<float>{4, 5, 0, 1}));
  // An index past the end is refused at prepare.
  b.program.tensors[static_cast<size_t>(idx)].data[0] = 3;
  EXPECT_THROW(b.prepare(0), Error);
}

TEST(QuantConcatenation, Int8RequantizesAnInputWithOtherParameters) {
  // a: scale 1 zp 0 -> copied. c: scale 0.5 zp 2 -> real (q - 2) * 0.5 on the output scale 1:
  // 4 -> 1, 7 -> 2.5 -> 3 (round half away), -128 -> -65.
  ProgramBuilder b;
  const int a = b.tensor("a", DType::I8, {1, 2}, {1.0f}, {0});
  const int c = b.tensor("c", DType::I8, {1, 3}, {0.5f}, {2});
  const int y = b.tensor("y", DType::I8, {1, 5}, {1.0f}, {0});
  b.op(OpCode::Concatenation, {a, c}, {y}).options.axis = 1;
  std::vector<std::vector<int8_t>> xs{{-3, 9}, {4, 7, -128}}, ys{std::vector<int8_t>(5)};
  run(b, {a, c}, xs, {y}, ys);
  EXPECT_EQ(ys[0], (std::vector<int8_t>{-3, 9, 1, 3, -65}));
}

TEST(QuantSpaceBatch, SpaceToBatchAndBack) {
  // [1, 4, 1] = [10 11 12 13], block 2, paddings [1, 1] -> padded [p 10 11 12 13 p] (p = 0):
  // batch 0 takes the even padded positions [p 11 13], batch 1 the odd ones [10 12 p].
  ProgramBuilder b;
  const int x = b.tensor("x", DType::F32, {1, 4, 1});
  const int block = b.constant("block", DType::I32, {1}, std::vector<int32_t>{2});
  const int pads = b.constant("pads", DType::I32, {1, 2}, std::vector<int32_t>{1, 1});
  const int y = b.tensor("y", DType::F32, {2, 3, 1});
  b.op(OpCode::SpaceToBatchNd, {x, block, pads}, {y});
  const std::vector<float> batched = run1(b, x, {10, 11, 12, 13}, y, 6);
  EXPECT_EQ(batched, (std::vector<float>{0, 11, 13, 10, 12, 0}));

  // BATCH_TO_SPACE with crops [1, 1] undoes it.
  ProgramBuilder u;
  const int ux = u.tensor("x", DType::F32, {2, 3, 1});
  const int ublock = u.constant("block", DType::I32, {1}, std::vector<int32_t>{2});
  const int crops = u.constant("crops", DType::I32, {1, 2}, std::vector<int32_t>{1, 1});
  const int uy = u.tensor("y", DType::F32, {1, 4, 1});
  u.op(OpCode::BatchToSpaceNd, {ux, ublock, crops}, {uy});
  EXPECT_EQ(run1(u, ux, batched, uy, 4), (std::vector<float>{10, 11, 12, 13}));
}

TEST(QuantElementwise, MaximumMinimumDivBroadcast) {
  // a [2, 2] = [1 -2 3 -4], b [2] = [0 2] broadcast over rows.
  const std::vector<float> av = {1, -2, 3, -4}, bv = {0, 2};
  struct Case {
    OpCode code;
    std::vector<float> want;
  };
  for (const Case& c : {Case{OpCode::Maximum, {1, 2, 3, 2}}, Case{OpCode::Minimum, {0, -2, 0, -4}},
                        Case{OpCode::Div, {1.0f / 0.0f, -1, 1.0f / 0.0f, -2}}}) {
    ProgramBuilder b;
    const int a = b.tensor("a", DType::F32, {2, 2});
    const int bb = b.tensor("b", DType::F32, {2});
    const int y = b.tensor("y", DType::F32, {2, 2});
    b.op(c.code, {a, bb}, {y});
    std::vector<std::vector<float>> xs{av, bv}, ys{std::vector<float>(4)};
    run(b, {a, bb}, xs, {y}, ys);
    EXPECT_EQ(ys[0], c.want) << op_name(c.code);
  }
}

TEST(QuantElementwise, Int8MaximumComparesStoredValues) {
  ProgramBuilder b;
  const int a = b.tensor("a", DType::I8, {3}, {0.1f}, {0});
  const int c = b.tensor("c", DType::I8, {1}, {0.1f}, {0});
  const int y = b.tensor("y", DType::I8, {3}, {0.1f}, {0});
  b.op(OpCode::Maximum, {a, c}, {y});
  std::vector<std::vector<int8_t>> xs{{-5, 4, 10}, {3}}, ys{std::vector<int8_t>(3)};
  run(b, {a, c}, xs, {y}, ys);
  EXPECT_EQ(ys[0], (std::vector<int8_t>{3, 4, 10}));
}

TEST(QuantElementwise, Int8AddRoundsHalvesPerMode) {
  // Both inputs scale 0.5 zp 0, output scale 1 zp 0: 3 + 4 -> 3.5, -3 + -4 -> -3.5.
  // Input multipliers 0.5 -> (2^30, 0); output 2^-20 -> (2^30, -19). Sums are exact:
  // 7 * 2^19 -> 3.5. Double rounding (ties away from zero): 4 and -4. Single ((x*m + 2^49) >> 50,
  // ties up): 4 and -3.
  for (Rounding r : {Rounding::Double, Rounding::Single}) {
    ProgramBuilder b;
    const int a = b.tensor("a", DType::I8, {2}, {0.5f}, {0});
    const int c = b.tensor("c", DType::I8, {2}, {0.5f}, {0});
    const int y = b.tensor("y", DType::I8, {2}, {1.0f}, {0});
    b.op(OpCode::Add, {a, c}, {y});
    std::vector<std::vector<int8_t>> xs{{3, -3}, {4, -4}}, ys{std::vector<int8_t>(2)};
    run(b, {a, c}, xs, {y}, ys, "scalar", r);
    EXPECT_EQ(ys[0], (std::vector<int8_t>{4, static_cast<int8_t>(r == Rounding::Double ? -4 : -3)}));
  }
}

TEST(QuantReduce, FloatSumAndInt8Mean) {
  // SUM over axis 1 of [2, 3] = 0..5: [3, 12].
  ProgramBuilder b;
  const int x = b.tensor("x", DType::F32, {2, 3});
  const int axes = b.constant("axes", DType::I32, {1}, std::vector<int32_t>{1});
  const int y = b.tensor("y", DType::F32, {2});
  b.op(OpCode::Sum, {x, axes}, {y});
  EXPECT_EQ(run1(b, x, iota_f(6), y, 2), (std::vector<float>{3, 12}));

  // int8 MEAN of [1 2 3 5] (scale 1 zp 0 in and out): 11 / 4 = 2.75. M = 1 -> (2^30, 1); the count
  // folds in as s = 2: multiplier (2^30 << 2) / 4 = 2^30, shift -1: 11 * 2^-2 = 2.75 -> 3.
  ProgramBuilder m;
  const int mx = m.tensor("x", DType::I8, {1, 4}, {1.0f}, {0});
  const int max = m.constant("axes", DType::I32, {1}, std::vector<int32_t>{-1});
  const int my = m.tensor("y", DType::I8, {1, 1}, {1.0f}, {0});
  m.op(OpCode::Mean, {mx, max}, {my}).options.keep_dims = true;
  std::vector<std::vector<int8_t>> xs{{1, 2, 3, 5}}, ys{std::vector<int8_t>(1)};
  run(m, {mx}, xs, {my}, ys);
  EXPECT_EQ(ys[0][0], 3);
}

TEST(QuantReduce, AdjacentAndSeparateAxes) {
  // x = 0..23 as [2, 3, 4]. SUM over axis 1 (adjacent: rows of 4 added): out[o][j] =
  // sum_r (12 o + 4 r + j) = 36 o + 3 j + 12. SUM over axes 0 and 2 (apart): out[r] =
  // sum_o sum_j (12 o + 4 r + j) = 32 r + 60.
  ProgramBuilder b;
  const int x = b.tensor("x", DType::F32, {2, 3, 4});
  const int axes = b.constant("axes", DType::I32, {1}, std::vector<int32_t>{1});
  const int y = b.tensor("y", DType::F32, {2, 4});
  b.op(OpCode::Sum, {x, axes}, {y});
  EXPECT_EQ(run1(b, x, iota_f(24), y, 8), (std::vector<float>{12, 15, 18, 21, 48, 51, 54, 57}));

  ProgramBuilder c;
  const int cx = c.tensor("x", DType::F32, {2, 3, 4});
  const int caxes = c.constant("axes", DType::I32, {2}, std::vector<int32_t>{0, 2});
  const int cy = c.tensor("y", DType::F32, {3});
  c.op(OpCode::Sum, {cx, caxes}, {cy});
  EXPECT_EQ(run1(c, cx, iota_f(24), cy, 3), (std::vector<float>{60, 92, 124}));

  // int8 MEAN over axis 1 of [1, 4, 2] (scale 1, zero point 0): columns [1 2 3 5] and
  // [-4 -4 -4 -5]: 2.75 -> 3 and -4.25 -> -4.
  ProgramBuilder m;
  const int mx = m.tensor("x", DType::I8, {1, 4, 2}, {1.0f}, {0});
  const int max = m.constant("axes", DType::I32, {1}, std::vector<int32_t>{1});
  const int my = m.tensor("y", DType::I8, {1, 2}, {1.0f}, {0});
  m.op(OpCode::Mean, {mx, max}, {my});
  std::vector<std::vector<int8_t>> xs{{1, -4, 2, -4, 3, -4, 5, -5}}, ys{std::vector<int8_t>(2)};
  run(m, {mx}, xs, {my}, ys);
  EXPECT_EQ(ys[0], (std::vector<int8_t>{3, -4}));
}

// The int8 MEAN/SUM requantize their sums with the kernel set's vector requantization (the
// tensor's multiplier, shift and the input zero point's share of each sum in every lane): every
// set equals the scalar one bit for bit, with zero points off zero, many outputs (whole vectors and
// tails) and both roundings. (The scalar set against TFLite's outputs: the tcn fixtures' MEAN.)
TEST(QuantReduce, Int8MeanAndSumEqualTheScalarSetOnEveryKernelSet) {
  std::mt19937 rng(20261207);
  std::uniform_int_distribution<int> byte(-128, 127), zp(-60, 60);
  std::uniform_real_distribution<float> scale(0.004f, 0.2f);
  int compared = 0;
  for (const char* isa : {"avx2", "avx512"}) {
    if (!tickinfer::kernels::isa_supported(tickinfer::kernels::parse_isa(isa))) continue;
    for (int trial = 0; trial < 40; ++trial) {
      const int rows = 1 + trial % 13, channels = 1 + (trial * 7) % 45;
      const OpCode code = trial % 3 == 0 ? OpCode::Sum : OpCode::Mean;
      const Rounding r = trial % 2 ? Rounding::Single : Rounding::Double;
      const float in_scale = scale(rng), out_scale = code == OpCode::Sum ? in_scale * rows : scale(rng);
      ProgramBuilder b;
      const int x = b.tensor("x", DType::I8, {1, rows, channels}, {in_scale}, {zp(rng)});
      const int axes = b.constant("axes", DType::I32, {1}, std::vector<int32_t>{1});
      const int y = b.tensor("y", DType::I8, {1, channels}, {out_scale}, {zp(rng)});
      b.op(code, {x, axes}, {y});
      std::vector<std::vector<int8_t>> xs{std::vector<int8_t>(static_cast<size_t>(rows) * channels)};
      for (int8_t& v : xs[0]) v = static_cast<int8_t>(byte(rng));
      std::vector<std::vector<int8_t>> want{std::vector<int8_t>(static_cast<size_t>(channels))}, got = want;
      run(b, {x}, xs, {y}, want, "scalar", r);
      run(b, {x}, xs, {y}, got, isa, r);
      ASSERT_EQ(got[0], want[0]) << isa << " trial " << trial;
      ++compared;
    }
  }
  if (compared == 0) GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512";
}

TEST(QuantElementwise, RefusesShapesThatDoNotBroadcast) {
  ProgramBuilder b;
  const int a = b.tensor("a", DType::F32, {2, 3});
  const int c = b.tensor("c", DType::F32, {2});
  const int y = b.tensor("y", DType::F32, {2, 3});
  b.op(OpCode::Add, {a, c}, {y});
  try {
    b.prepare(0);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("broadcast"), std::string::npos) << e.what();
  }
}
