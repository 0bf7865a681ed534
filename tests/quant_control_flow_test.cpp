// WHILE, CALL_ONCE and resource variables on hand-built programs with hand-derived results: a
// counting loop, state carried through VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE between
// invokes (and reset by reset_state, which also re-runs CALL_ONCE's init), and the refusals:
// a body that runs its own loop, a loop variable that changes shape, a variable nothing assigns.
#include <gtest/gtest.h>

#include <type_traits>

#include <limits>

#include <cstring>

#include <memory>
#include <string>
#include <vector>

#include "support/tflite_file.hpp"
#include "tflite/interpreter.hpp"
#include "tflite/program_builder.hpp"
#include "tickinfer/error.hpp"
#include "support/source_paths.hpp"

namespace {

using namespace tickinfer;
using namespace tickinfer::tfl;

// y = x + 2 * 5: i from 0 while i < 5, acc += 2; outputs acc and i.
std::shared_ptr<Program> counting_loop(bool self_nesting = false, Shape body_acc_shape = {1}) {
  auto p = std::make_shared<Program>();
  ProgramBuilder b(*p);
  const int x = b.activation("x", DType::F32, {1});
  const int zero = b.constant<int32_t>("zero", DType::I32, {}, {0});
  const int i_out = b.activation("i_out", DType::I32, {});
  const int acc_out = b.activation("acc_out", DType::F32, {1});
  Op& w = b.op(OpCode::While, {zero, x}, {i_out, acc_out}, "loop");
  w.options.cond_subgraph = 1;
  w.options.body_subgraph = 2;
  p->inputs = {x};
  p->outputs = {acc_out, i_out};

  Subgraph cond;
  const int ci = b.activation("cond_i", DType::I32, {});
  const int ca = b.activation("cond_acc", DType::F32, {1});
  const int five = b.constant<int32_t>("five", DType::I32, {}, {5});
  const int go = b.activation("go", DType::Bool, {});
  Op less;
  less.code = OpCode::Less;
  less.inputs = {ci, five};
  less.outputs = {go};
  cond.ops.push_back(less);
  cond.inputs = {ci, ca};
  cond.outputs = {go};

  Subgraph body;
  const int bi = b.activation("body_i", DType::I32, {});
  const int ba = b.activation("body_acc", DType::F32, body_acc_shape);
  const int one = b.constant<int32_t>("one", DType::I32, {}, {1});
  const int two = b.constant<float>("two", DType::F32, {1}, {2.0f});
  const int bi2 = b.activation("body_i2", DType::I32, {});
  const int ba2 = b.activation("body_acc2", DType::F32, body_acc_shape);
  Op inc;
  inc.code = OpCode::Add;
  inc.inputs = {bi, one};
  inc.outputs = {bi2};
  Op add;
  add.code = OpCode::Add;
  add.inputs = {ba, two};
  add.outputs = {ba2};
  body.ops = {inc, add};
  if (self_nesting) {
    Op again = w;  // the body runs this very loop again
    again.inputs = {bi2, ba2};
    const int i3 = b.activation("i3", DType::I32, {}), a3 = b.activation("a3", DType::F32, body_acc_shape);
    again.outputs = {i3, a3};
    body.ops.push_back(again);
  }
  body.inputs = {bi, ba};
  body.outputs = {bi2, ba2};
  p->subgraphs = {cond, body};
  return p;
}

TEST(QuantControlFlow, WhileRunsTheBodyUntilTheCondIsFalse) {
  Interpreter interp(counting_loop());
  *static_cast<float*>(interp.input_data(0)) = 1.5f;
  interp.invoke();
  EXPECT_EQ(*static_cast<const float*>(interp.output_data(0)), 11.5f);
  EXPECT_EQ(*static_cast<const int32_t*>(interp.output_data(1)), 5);
  interp.invoke();  // the loop variables start again from the WHILE's inputs
  EXPECT_EQ(*static_cast<const float*>(interp.output_data(0)), 11.5f);
}

// i from 0 while i < 5: acc += k, with k a third loop variable the body hands back as it came
// (a loop invariant, as a Keras RNN's input sequence is: copied into the body once, not per
// iteration). With `k_written`, a body op first adds 2 to k in place (k is then not invariant,
// and the loop's k output must be its last value).
std::shared_ptr<Program> invariant_loop(bool k_written) {
  auto p = std::make_shared<Program>();
  ProgramBuilder b(*p);
  const int x = b.activation("x", DType::F32, {1}), k = b.activation("k", DType::F32, {1});
  const int zero = b.constant<int32_t>("zero", DType::I32, {}, {0});
  const int i_out = b.activation("i_out", DType::I32, {});
  const int acc_out = b.activation("acc_out", DType::F32, {1}), k_out = b.activation("k_out", DType::F32, {1});
  Op& w = b.op(OpCode::While, {zero, x, k}, {i_out, acc_out, k_out}, "loop");
  w.options.cond_subgraph = 1;
  w.options.body_subgraph = 2;
  p->inputs = {x, k};
  p->outputs = {acc_out, k_out};
  Subgraph cond;
  const int ci = b.activation("cond_i", DType::I32, {}), ca = b.activation("cond_acc", DType::F32, {1});
  const int ck = b.activation("cond_k", DType::F32, {1});
  const int five = b.constant<int32_t>("five", DType::I32, {}, {5});
  const int go = b.activation("go", DType::Bool, {});
  Op less;
  less.code = OpCode::Less;
  less.inputs = {ci, five};
  less.outputs = {go};
  cond.ops = {less};
  cond.inputs = {ci, ca, ck};
  cond.outputs = {go};
  Subgraph body;
  const int bi = b.activation("body_i", DType::I32, {}), ba = b.activation("body_acc", DType::F32, {1});
  const int bk = b.activation("body_k", DType::F32, {1});
  const int one = b.constant<int32_t>("one", DType::I32, {}, {1});
  const int two = b.constant<float>("two", DType::F32, {1}, {2.0f});
  const int bi2 = b.activation("body_i2", DType::I32, {}), ba2 = b.activation("body_acc2", DType::F32, {1});
  Op inc, bump, add;
  inc.code = bump.code = add.code = OpCode::Add;
  inc.inputs = {bi, one};
  inc.outputs = {bi2};
  bump.inputs = {bk, two};
  bump.outputs = {bk};  // in place
  add.inputs = {ba, bk};
  add.outputs = {ba2};
  body.ops = k_written ? std::vector<Op>{inc, bump, add} : std::vector<Op>{inc, add};
  body.inputs = {bi, ba, bk};
  body.outputs = {bi2, ba2, bk};
  p->subgraphs = {cond, body};
  return p;
}

TEST(QuantControlFlow, ALoopInvariantIsReadAtEveryIterationAndEveryInvoke) {
  Interpreter interp(invariant_loop(false));
  for (float k : {0.25f, 1.0f}) {  // the second invoke must see the new k, not the first one's
    *static_cast<float*>(interp.input_data(0)) = 1.5f;
    *static_cast<float*>(interp.input_data(1)) = k;
    interp.invoke();
    EXPECT_EQ(*static_cast<const float*>(interp.output_data(0)), 1.5f + 5 * k);
    EXPECT_EQ(*static_cast<const float*>(interp.output_data(1)), k);
  }
}

TEST(QuantControlFlow, AVariableTheBodyWritesInPlaceIsNoInvariant) {
  Interpreter interp(invariant_loop(true));
  *static_cast<float*>(interp.input_data(0)) = 1.5f;
  *static_cast<float*>(interp.input_data(1)) = 0.25f;
  interp.invoke();
  // k goes 2.25, 4.25, ..., 10.25; acc adds each.
  EXPECT_EQ(*static_cast<const float*>(interp.output_data(0)), 1.5f + 2.25f + 4.25f + 6.25f + 8.25f + 10.25f);
  EXPECT_EQ(*static_cast<const float*>(interp.output_data(1)), 10.25f);
}

TEST(QuantControlFlow, ABodyRunningItsOwnLoopIsRefused) {
  try {
    Interpreter interp(counting_loop(true));
    FAIL() << "a self-nesting loop was prepared";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nest deeper"), std::string::npos) << e.what();
  }
}

TEST(QuantControlFlow, ALoopVariableChangingShapeIsRefused) {
  try {
    Interpreter interp(counting_loop(false, {1, 1}));
    FAIL() << "a shape-changing loop was prepared";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("change shape"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("loop variable 1"), std::string::npos) << e.what();
  }
}

// init (CALL_ONCE): v = 1. Each invoke: y = v + x; v = y.
std::shared_ptr<Program> accumulator() {
  auto p = std::make_shared<Program>();
  ProgramBuilder b(*p);
  const int x = b.activation("x", DType::F32, {1});
  b.op(OpCode::CallOnce, {}, {}, "init").options.body_subgraph = 1;
  const int h = b.activation("h", DType::Resource, {});
  Op& vh = b.op(OpCode::VarHandle, {}, {h}, "handle");
  vh.options.shared_name = "acc";
  const int v = b.activation("v", DType::F32, {1});
  b.op(OpCode::ReadVariable, {h}, {v}, "read");
  const int y = b.activation("y", DType::F32, {1});
  b.op(OpCode::Add, {v, x}, {y}, "add");
  b.op(OpCode::AssignVariable, {h, y}, {}, "assign");
  p->inputs = {x};
  p->outputs = {y};
  Subgraph init;
  const int h2 = b.activation("init_h", DType::Resource, {});
  const int one = b.constant<float>("one", DType::F32, {1}, {1.0f});
  Op vh2;
  vh2.code = OpCode::VarHandle;
  vh2.outputs = {h2};
  vh2.options.shared_name = "acc";
  Op set;
  set.code = OpCode::AssignVariable;
  set.inputs = {h2, one};
  init.ops = {vh2, set};
  p->subgraphs = {init};
  return p;
}

TEST(QuantControlFlow, ResourceVariablesCarryStateAndResetRerunsTheInit) {
  InterpreterOptions stream;
  stream.reset_variables_each_invoke = false;
  Interpreter interp(accumulator(), stream);
  auto run = [&](float x) {
    *static_cast<float*>(interp.input_data(0)) = x;
    interp.invoke();
    return *static_cast<const float*>(interp.output_data(0));
  };
  EXPECT_EQ(run(1.0f), 2.0f);
  EXPECT_EQ(run(1.0f), 3.0f);
  EXPECT_EQ(run(0.5f), 3.5f);
  interp.reset_state();
  EXPECT_EQ(run(1.0f), 2.0f);

  Interpreter window(accumulator());  // state reset before every invoke
  for (int k = 0; k < 3; ++k) {
    *static_cast<float*>(window.input_data(0)) = 1.0f;
    window.invoke();
    EXPECT_EQ(*static_cast<const float*>(window.output_data(0)), 2.0f);
  }
}


// A variable that is read but that nothing assigns (what TF 2.21's converter writes for a
// batch-1 concrete function of a stateful Keras 3 model converted without freezing): TFLite's
// interpreter fails to invoke the file, so it is refused, naming the variable, not run on zeros.
TEST(QuantControlFlow, AVariableNothingAssignsIsRefusedByName) {
  auto p = std::make_shared<Program>();
  ProgramBuilder b(*p);
  const int x = b.activation("x", DType::F32, {1});
  const int h = b.activation("h", DType::Resource, {});
  b.op(OpCode::VarHandle, {}, {h}, "handle").options.shared_name = "lstm/state_h";
  const int v = b.activation("v", DType::F32, {1});
  b.op(OpCode::ReadVariable, {h}, {v}, "read");
  const int y = b.activation("y", DType::F32, {1});
  b.op(OpCode::Add, {v, x}, {y}, "add");
  p->inputs = {x};
  p->outputs = {y};
  try {
    Interpreter interp(p);
    FAIL() << "a variable with no value was prepared";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'lstm/state_h'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nothing in the file assigns it"), std::string::npos) << e.what();
  }
  // The same graph with the assignment (the accumulator above) prepares: only the missing
  // assignment is refused.
  EXPECT_NO_THROW(Interpreter{accumulator()});
}


// The same from the real converter (tools/make_unassigned_variable_fixture.py: a batch-1 concrete
// function of a stacked-LSTM Keras 3 model, TF 2.21, variables not frozen): TFLite's interpreter
// fails to invoke it; tickinfer refuses it at load, naming the first variable read.
TEST(QuantControlFlow, TheConvertersUnassignedVariableFileIsRefusedByName) {
  const std::string path =
      std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tflite_unassigned_variable/stacked_lstm_concrete_fn.tflite";
  try {
    Interpreter interp(tickinfer::test::load_shared_tflite_file(path));
    FAIL() << "a file whose variables are never assigned was prepared";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("resource variable '"), std::string::npos) << what;
    EXPECT_NE(what.find("nothing in the file assigns it"), std::string::npos) << what;
  }
}

}  // namespace

namespace {

// A bool tensor is a byte per element, and TFLite's kernels take any nonzero byte as true. A
// constant in a file may hold other bytes than 0 and 1 (the fuzzer wrote 75), which are not valid
// C++ bools: SELECT_V2 and LOGICAL_AND read them as bytes.
TEST(QuantControlFlow, BoolBytesOtherThanZeroAndOneAreTrue) {
  auto p = std::make_shared<Program>();
  ProgramBuilder b(*p);
  const int x = b.activation("x", DType::F32, {4});
  const int cond = b.constant<uint8_t>("cond", DType::Bool, {4}, {0, 75, 1, 255});
  const int other = b.constant<uint8_t>("other", DType::Bool, {4}, {2, 2, 0, 128});
  const int fill = b.constant<float>("fill", DType::F32, {4}, {-1.0f, -2.0f, -3.0f, -4.0f});
  const int both = b.activation("both", DType::Bool, {4});
  const int y = b.activation("y", DType::F32, {4});
  b.op(OpCode::LogicalAnd, {cond, other}, {both}, "and");
  b.op(OpCode::SelectV2, {both, x, fill}, {y}, "select");
  p->inputs = {x};
  p->outputs = {y};
  Interpreter interp(p);
  float* in = static_cast<float*>(interp.input_data(0));
  for (int i = 0; i < 4; ++i) in[i] = 10.0f + static_cast<float>(i);
  interp.invoke();
  const float* out = static_cast<const float*>(interp.output_data(0));
  // and: {0&2, 75&2, 1&0, 255&128} = {false, true, false, true}
  EXPECT_EQ(out[0], -1.0f);
  EXPECT_EQ(out[1], 11.0f);
  EXPECT_EQ(out[2], -3.0f);
  EXPECT_EQ(out[3], 13.0f);
}

// SELECT_V2 with a constant condition (an attention mask) runs as a prepared bit mask; it must copy
// exactly what the index-mapped form copies when the same condition arrives at run time: every
// byte of int8, every bit of float (NaN payloads, -0), a condition broadcast along the rows, a
// one-value y and a full y, lengths past the vector width.
template <class T>
std::vector<uint8_t> select_bytes(bool constant_condition, bool y_single, DType type) {
  auto p = std::make_shared<Program>();
  ProgramBuilder b(*p);
  const std::vector<uint8_t> cbytes = {0, 75, 1, 0, 255, 0, 0, 2, 1, 0, 0, 9, 0};  // one row of 13, broadcast
  const int cond = constant_condition ? b.constant<uint8_t>("cond", DType::Bool, {13}, cbytes)
                                      : b.activation("cond", DType::Bool, {13});
  const int x = b.activation("x", type, {3, 13});
  std::vector<T> fill_values(y_single ? 1 : 39);
  for (size_t i = 0; i < fill_values.size(); ++i) fill_values[i] = static_cast<T>(-1 - static_cast<int>(i % 100));
  const int y = b.constant<T>("y", type, {y_single ? 1 : 3, y_single ? 1 : 13}, fill_values);
  const int out = b.activation("out", type, {3, 13});
  b.op(OpCode::SelectV2, {cond, x, y}, {out}, "select");
  p->inputs = constant_condition ? std::vector<int>{x} : std::vector<int>{x, cond};
  p->outputs = {out};
  Interpreter interp(p);
  T* xin = static_cast<T*>(interp.input_data(0));
  for (int i = 0; i < 39; ++i) xin[i] = static_cast<T>(i * 3 - 50);
  if constexpr (std::is_same_v<T, float>) {
    xin[4] = std::numeric_limits<float>::quiet_NaN();
    xin[17] = -0.0f;
  }
  if (!constant_condition) std::memcpy(interp.input_data(1), cbytes.data(), cbytes.size());
  interp.invoke();
  const auto* o = static_cast<const uint8_t*>(interp.output_data(0));
  return std::vector<uint8_t>(o, o + 39 * sizeof(T));
}

TEST(QuantControlFlow, SelectWithAConstantConditionCopiesWhatTheGeneralFormCopies) {
  for (bool y_single : {true, false}) {
    EXPECT_EQ(select_bytes<float>(true, y_single, DType::F32), select_bytes<float>(false, y_single, DType::F32))
        << "float, y single " << y_single;
    EXPECT_EQ(select_bytes<int8_t>(true, y_single, DType::I8), select_bytes<int8_t>(false, y_single, DType::I8))
        << "int8, y single " << y_single;
  }
  // and the values themselves: row 0 of the int8 form, y one value (-1)
  const std::vector<uint8_t> got = select_bytes<int8_t>(true, true, DType::I8);
  EXPECT_EQ(static_cast<int8_t>(got[0]), -1);   // condition 0
  EXPECT_EQ(static_cast<int8_t>(got[1]), -47);  // condition 75: x = 1 * 3 - 50
  EXPECT_EQ(static_cast<int8_t>(got[13 + 4]), 17 * 3 - 50);  // row 1, condition 255
}

}  // namespace
