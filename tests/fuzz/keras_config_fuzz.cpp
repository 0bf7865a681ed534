// libFuzzer target: arbitrary bytes as a Keras model config (config.json / model_config text),
// imported with synthetic weights of the configured shapes, then shape-inferred. Anything other
// than success or tickinfer::Error (a crash, a sanitizer report, another exception type) is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "formats/keras/keras_config.hpp"
#include "formats/keras/keras_json.hpp"
#include "formats/keras/keras_synthetic_weights.hpp"
#include "model/graph.hpp"
#include "tickinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tickinfer;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    nlohmann::json config = formats::parse_json_bounded(text, "fuzz");
    // The first byte picks the dialect so both hard_sigmoid meanings get exercised.
    auto dialect = (size > 0 && (data[0] & 1)) ? formats::KerasDialect::Keras2 : formats::KerasDialect::Keras3;
    formats::SyntheticWeightSource weights;
    Graph g = formats::graph_from_keras_config(config, weights, dialect, "fuzz");
    infer_shapes(g);
  } catch (const Error&) {
  }
  return 0;
}
