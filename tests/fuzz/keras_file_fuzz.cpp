// libFuzzer target: arbitrary bytes as a model file (.keras ZIP or legacy .h5), as served from
// memory. Success or tickinfer::Error are the only acceptable outcomes. Seed it with the fixture
// models; see the formats report for libhdf5's own robustness on mutated HDF5 images.
#include <cstddef>
#include <cstdint>

#include "formats/model_file.hpp"
#include "model/graph.hpp"
#include "tickinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tickinfer;
  try {
    Graph g = formats::load_model_bytes(data, size, "fuzz");
    infer_shapes(g);
  } catch (const Error&) {
  }
  return 0;
}
