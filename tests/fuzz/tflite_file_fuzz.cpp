// libFuzzer target: arbitrary bytes as a .tflite file. Loading either succeeds or throws
// tickinfer::Error; anything else (a crash, a sanitizer report, another exception) is a bug.
// Seeded with the committed converter outputs (tools/run_fuzzers.sh).
#include <cstddef>
#include <cstdint>

#include "formats/tflite/tflite_file.hpp"
#include "tickinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    tickinfer::tfl::Program p = tickinfer::formats::load_tflite(data, size, "fuzz.tflite");
    // The loader promised validate() holds; calling it again must not throw.
    tickinfer::tfl::validate(p);
  } catch (const tickinfer::Error&) {
  }
  return 0;
}
