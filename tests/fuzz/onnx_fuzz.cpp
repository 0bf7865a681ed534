// libFuzzer target: arbitrary bytes as a .onnx file, through the protobuf parse, the
// initializer decoding, the lowering into a Graph and shape inference. Each step either succeeds
// or throws tickinfer::Error; anything else (a crash, a sanitizer report, another exception, a
// stack overflow on a deep graph) is a bug. Seeded with the committed tf2onnx and PyTorch exports
// (tools/run_fuzzers.sh).
#include <cstddef>
#include <cstdint>

#include "formats/onnx/onnx_file.hpp"
#include "model/graph.hpp"
#include "tickinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)tickinfer::formats::looks_like_onnx(data, size);
    // No model directory: external data is refused rather than read from the fuzzer's cwd.
    tickinfer::Graph g = tickinfer::formats::load_onnx(data, size, "fuzz.onnx", "");
    tickinfer::infer_shapes(g);
  } catch (const tickinfer::Error&) {
  }
  return 0;
}
