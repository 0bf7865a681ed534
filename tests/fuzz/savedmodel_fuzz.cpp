// libFuzzer target: arbitrary bytes as saved_model.pb, parsed and lowered to a Graph (with every
// captured variable read as zeros of its declared shape, so the lowering is reached without a
// checkpoint). It must either succeed or throw tickinfer::Error: never crash, hang or
// over-allocate.
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/savedmodel/saved_model.hpp"
#include "model/graph.hpp"
#include "tickinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tickinfer::formats;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const VariableReader zeros = [](const std::string&, int dtype, const std::vector<int64_t>& shape) {
    TfTensor t;
    t.dtype = dtype;
    t.shape = shape;
    const int64_t n = tf_element_count(shape);
    if (n < 0 || n > (int64_t{1} << 20)) throw tickinfer::Error("fuzz: variable too large");
    t.values.assign(static_cast<size_t>(n), 0.0);
    return t;
  };
  try {
    SavedModel m = import_saved_model(bytes, "", zeros, "fuzz");
    tickinfer::infer_shapes(m.graph);
  } catch (const tickinfer::Error&) {
  }
  return 0;
}
