// invoke() of the Keras 3 TFLite conversions (tests/fixtures/tflite_k3: WHILE loops run op by op
// and lowered onto the fused LSTM, CALL_ONCE + resource variables in stream use, DYNAMIC_UPDATE_SLICE,
// runtime GATHER / SLICE, BATCH_MATMUL, folded SHAPE / PACK, SPACE_TO_BATCH_ND, full int8 attention,
// dynamic-range LSTM loops lowered, LEAKY_RELU fused into convolutions)
// allocates nothing
// and takes no lock after the interpreter is built.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "formats/tflite/tflite_file.hpp"
#include "support/tflite_file.hpp"
#include "support/counting_allocator.hpp"
#include "tflite/interpreter.hpp"
#include "support/source_paths.hpp"

using namespace tickinfer;

namespace {

std::shared_ptr<const tfl::Program> load(const std::string& path) {
  return ::tickinfer::test::load_shared_tflite_file(path);
}

}  // namespace

TEST(QuantTfliteK3HotPath, InvokeAllocatesAndLocksNothing) {
  const std::string root = std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/tflite_k3/";
  const char* const files[] = {
      "lstm_seq/keras_float.tflite",      "lstm_stacked/saved_float.tflite", "gru_after/keras_float.tflite",
      "gru_before/keras_float.tflite",    "lstm_stateful/keras_float.tflite", "lstm_stream/keras_float.tflite",
      "lstm_wide/keras_dynamic.tflite",   "lstm_long/saved_dynamic.tflite",
      // CONV_2D with a fused LEAKY_RELU (float and hybrid), lowered hybrid LSTM loops
      "deeplob_seq2seq/keras_dynamic.tflite", "deeplob_attention/saved_float.tflite",
      "tcn_dynamic_batch/keras_float.tflite", "matmul/keras_int8.tflite",   "matmul_dynamic_batch/saved_float.tflite",
      "two_inputs/saved_float.tflite",
      // full int8 attention: SOFTMAX (tabled exps), BATCH_MATMUL (row products), ADD/SUB/MUL and
      // SQUARED_DIFFERENCE (vector requantization; one constant operand: a table)
      "attention_encoder/keras_int8.tflite", "attention_causal/saved_int8.tflite",
  };
  for (const char* file : files) {
    for (bool lower : {true, false}) {
      for (bool window : {true, false}) {
        tfl::InterpreterOptions options;
        options.lower_recurrent_loops = lower;
        options.reset_variables_each_invoke = window;
        std::unique_ptr<tfl::Interpreter> interp;
        try {
          interp = std::make_unique<tfl::Interpreter>(load(root + file), options);
        } catch (const std::exception& e) {
          FAIL() << file << ": " << e.what();
        }
        interp->invoke();  // CALL_ONCE's first run is part of the hot path too below, after a reset
        interp->reset_state();
        g_allocs = 0;
        g_locks = 0;
        g_counting = true;
        for (int it = 0; it < 5; ++it) interp->invoke();
        interp->reset_state();
        interp->invoke();
        g_counting = false;
        EXPECT_EQ(g_allocs.load(), 0) << file << (lower ? "" : " (loops op by op)");
        EXPECT_EQ(g_locks.load(), 0) << file;
      }
    }
  }
}
