// libFuzzer target: arbitrary bytes as a .tflite file, and a program that loads lifted to the
// layer graph (formats/tflite/tflite_graph_lift.hpp). The lift returns a graph that infer_shapes
// accepts or a refusal; it never throws, crashes or trips a sanitizer. Seeded with the committed
// converter outputs (tools/run_fuzzers.sh).
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "formats/tflite/tflite_file.hpp"
#include "formats/tflite/tflite_graph_lift.hpp"
#include "model/graph.hpp"
#include "tickinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tickinfer::tfl::Program p;
  try {
    p = tickinfer::formats::load_tflite(data, size, "fuzz.tflite");
  } catch (const tickinfer::Error&) {
    return 0;
  }
  tickinfer::formats::TfliteLift lift = tickinfer::formats::lift_tflite_program(p);
  if (lift.graph) {
    tickinfer::infer_shapes(*lift.graph);  // the lift checked this; a throw here is a bug
  } else if (lift.refusal.empty()) {
    std::abort();  // neither a graph nor a reason
  }
  return 0;
}
