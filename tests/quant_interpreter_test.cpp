// The interpreter's own promises, on hand-built programs: arena reuse between tensors whose
// lifetimes do not overlap (and none with keep_all_tensors), every model input gets memory,
// variable tensors reset to their zero point, and errors name the op.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "tflite/interpreter.hpp"
#include "support/quant_program_builder.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::tfl {
namespace {

using testing::ProgramBuilder;

// x -> RELU -> a -> RELU -> b -> RELU -> y, 1024 floats each: a and y can share memory (a is
// dead once b exists); the input x is kept intact, so the arena holds three tensors, not four.
ProgramBuilder relu_chain() {
  ProgramBuilder b;
  const int x = b.tensor("x", DType::F32, {1, 1024});
  const int a = b.tensor("a", DType::F32, {1, 1024});
  const int m = b.tensor("b", DType::F32, {1, 1024});
  const int y = b.tensor("y", DType::F32, {1, 1024});
  b.op(OpCode::Relu, {x}, {a});
  b.op(OpCode::Relu, {a}, {m});
  b.op(OpCode::Relu, {m}, {y});
  b.program.inputs = {x};
  b.program.outputs = {y};
  return b;
}

TEST(QuantInterpreter, ReusesArenaBetweenDeadTensorsAndComputes) {
  auto p = std::make_shared<const Program>(relu_chain().program);
  Interpreter in(p);
  EXPECT_EQ(in.arena_bytes(), 3u * 4096u);
  auto* x = static_cast<float*>(in.input_data(0));
  for (int i = 0; i < 1024; ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
  in.invoke();
  const auto* y = static_cast<const float*>(in.output_data(0));
  for (int i = 0; i < 1024; ++i) EXPECT_EQ(y[i], std::max(0.0f, static_cast<float>(i % 7) - 3.0f)) << i;
  // The input survives the run.
  for (int i = 0; i < 1024; ++i) ASSERT_EQ(x[i], static_cast<float>(i % 7) - 3.0f) << i;
}

TEST(QuantInterpreter, KeepAllTensorsGivesEveryTensorItsOwnMemory) {
  auto p = std::make_shared<const Program>(relu_chain().program);
  InterpreterOptions o;
  o.keep_all_tensors = true;
  Interpreter in(p, o);
  EXPECT_EQ(in.arena_bytes(), 4u * 4096u);
  auto* x = static_cast<float*>(in.input_data(0));
  for (int i = 0; i < 1024; ++i) x[i] = -1.0f + static_cast<float>(i);
  in.invoke();
  // The first intermediate still holds relu(x) after the run.
  const auto* a = static_cast<const float*>(in.tensor_data(1));
  EXPECT_EQ(a[0], 0.0f);
  EXPECT_EQ(a[5], 4.0f);
}

// x -> RELU -> a -> RESHAPE -> r -> RELU -> y: a dies at the RESHAPE, so r takes a's memory
// (the copy is skipped) and the arena holds x, a/r and y; with keep_all_tensors every tensor has
// its own. Either way y is relu(relu(x)) in r's shape.
TEST(QuantInterpreter, AReshapeOfATensorThatDiesThereSharesItsMemory) {
  ProgramBuilder b;
  const int x = b.tensor("x", DType::F32, {1, 1024});
  const int a = b.tensor("a", DType::F32, {1, 1024});
  const int r = b.tensor("r", DType::F32, {4, 256});
  const int y = b.tensor("y", DType::F32, {4, 256});
  b.op(OpCode::Relu, {x}, {a});
  b.op(OpCode::Reshape, {a}, {r});
  b.op(OpCode::Relu, {r}, {y});
  b.program.inputs = {x};
  b.program.outputs = {y};
  auto p = std::make_shared<const Program>(b.program);
  for (bool keep : {false, true}) {
    InterpreterOptions o;
    o.keep_all_tensors = keep;
    Interpreter in(p, o);
    EXPECT_EQ(in.tensor_data(a) == in.tensor_data(r), !keep);
    EXPECT_EQ(in.arena_bytes(), (keep ? 4u : 3u) * 4096u);
    auto* xs = static_cast<float*>(in.input_data(0));
    for (int i = 0; i < 1024; ++i) xs[i] = static_cast<float>(i % 5) - 2.0f;
    in.invoke();
    const auto* ys = static_cast<const float*>(in.output_data(0));
    for (int i = 0; i < 1024; ++i) ASSERT_EQ(ys[i], std::max(0.0f, static_cast<float>(i % 5) - 2.0f)) << i;
  }
  // A RESHAPE of the model's input copies: the input must stay intact for the next invoke.
  ProgramBuilder c;
  const int cx = c.tensor("x", DType::F32, {1, 8});
  const int cr = c.tensor("r", DType::F32, {2, 4});
  const int cy = c.tensor("y", DType::F32, {2, 4});
  c.op(OpCode::Reshape, {cx}, {cr});
  c.op(OpCode::Relu, {cr}, {cy});
  c.program.inputs = {cx};
  c.program.outputs = {cy};
  Interpreter ci(std::make_shared<const Program>(c.program));
  EXPECT_NE(ci.tensor_data(cx), ci.tensor_data(cr));
}

TEST(QuantInterpreter, AnInputNoOpReadsStillHasMemory) {
  ProgramBuilder b = relu_chain();
  const int unused = b.tensor("unused", DType::F32, {1, 3});
  b.program.inputs.push_back(unused);
  Interpreter in(std::make_shared<const Program>(b.program));
  ASSERT_NE(in.input_data(1), nullptr);
  std::memset(in.input_data(1), 0, 3 * sizeof(float));
}

TEST(QuantInterpreter, VariableTensorsResetToTheirZeroPoint) {
  // TFLite's ResetVariableTensors: an int8 variable goes back to its zero point (a real 0).
  ProgramBuilder b = relu_chain();
  const int state = b.tensor("state", DType::I8, {1, 16}, {0.5f}, {-5});
  b.program.tensors[static_cast<size_t>(state)].is_variable = true;
  Interpreter in(std::make_shared<const Program>(b.program));
  auto* s = static_cast<int8_t*>(const_cast<void*>(in.tensor_data(state)));
  for (int i = 0; i < 16; ++i) EXPECT_EQ(s[i], -5);
  std::memset(s, 7, 16);
  in.reset_state();
  for (int i = 0; i < 16; ++i) EXPECT_EQ(s[i], -5);
}

TEST(QuantInterpreter, RefusesWhatItCannotRunNamingTheOp) {
  ProgramBuilder b = relu_chain();
  b.program.ops[1].code = OpCode::BatchMatMul;
  b.program.ops[1].label = "matmul_layer";
  try {
    Interpreter in(std::make_shared<const Program>(b.program));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("matmul_layer"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("BATCH_MATMUL"), std::string::npos) << e.what();
  }
}


// A hostile file can declare activations of gigabytes (the fuzzer found one asking 2 GiB): the
// interpreter refuses it with an Error naming the size and the limit, before allocating, and a
// shape past 2^31 elements (or one whose element count would overflow int64) fails validation.
TEST(QuantInterpreter, RefusesHugeActivationsAndShapes) {
  ProgramBuilder b;
  const int x = b.tensor("x", DType::F32, {1, 1 << 14, 1 << 14});  // 1 GiB of float
  const int y = b.tensor("y", DType::F32, {1, 1 << 14, 1 << 14});
  b.op(OpCode::Relu, {x}, {y});
  b.program.inputs = {x};
  b.program.outputs = {y};
  try {
    Interpreter interp(std::make_shared<Program>(b.program));
    FAIL() << "a 2 GiB arena was accepted";
  } catch (const tickinfer::Error& e) {
    EXPECT_NE(std::string(e.what()).find("over the limit of 512 MiB"), std::string::npos) << e.what();
  }
  ProgramBuilder h;
  const int big = h.tensor("big", DType::F32, {1 << 30, 1 << 30, 1 << 30});
  h.program.inputs = {big};
  h.program.outputs = {big};
  EXPECT_EQ(element_count(h.program.tensors[0].shape), std::numeric_limits<int64_t>::max());
  EXPECT_THROW(validate(h.program), tickinfer::Error);
}

}  // namespace
}  // namespace tickinfer::tfl
