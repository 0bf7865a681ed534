// libFuzzer target: arbitrary bytes as a .tflite file that, when it loads, is prepared by the
// interpreter and run once. Loading and preparing either succeed or throw tickinfer::Error;
// invoke must not crash whatever the (garbage) input values. Seeded with the LSTM fixtures and the
// TFLite fixtures, Keras 3 ones included (tools/run_fuzzers.sh), so mutations reach
// UNIDIRECTIONAL_SEQUENCE_LSTM's operand checks (shapes, types, scales, zero points,
// intermediates), WHILE / CALL_ONCE / resource variables, the LSTM-loop recognition and every
// other op's.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "formats/tflite/tflite_file.hpp"
#include "tflite/interpreter.hpp"
#include "tickinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tickinfer;
  try {
    auto program = std::make_shared<tfl::Program>(formats::load_tflite(data, size, "fuzz.tflite"));
    tfl::InterpreterOptions options;
    options.isa = "scalar";
    options.max_loop_iterations = 64;  // a mutated WHILE cond may never turn false
    tfl::Interpreter interp(program, options);
    if (interp.macs() > 50'000'000 || interp.arena_bytes() > (64u << 20)) return 0;  // keep runs short
    for (size_t i = 0; i < interp.num_inputs(); ++i) {
      const tfl::Tensor& t = interp.input_tensor(i);
      const int64_t n = tfl::element_count(t.shape);
      // An input no op reads has no memory (input_data is null): nothing to fill.
      if (n > 0 && interp.input_data(i)) {
        std::memset(interp.input_data(i), 0x3c, static_cast<size_t>(n) * tfl::dtype_size(t.type));
      }
    }
    interp.invoke();
  } catch (const Error&) {
  }
  return 0;
}
