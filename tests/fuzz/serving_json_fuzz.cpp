// libFuzzer: the request JSON parser and the :predict decoder (one- and two-input signatures),
// then the response encoder on what was decoded. Never throws; must not crash or over-read.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "serving/json_dom.hpp"
#include "serving/api/predict_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tickinfer::serving;
  static JsonDocument doc;
  static DecodedInputs in;
  static std::string error, body;
  static const std::vector<TensorSpec> one = {{"x", {2, 3}, 6}};
  static const std::vector<TensorSpec> two = {{"a", {4}, 4}, {"b", {}, 1}};
  if (!doc.parse(std::string_view(reinterpret_cast<const char*>(data), size))) return 0;
  PredictLimits limits;
  limits.max_batch = 64;
  for (const auto* specs : {&one, &two}) {
    limits.nonfinite = specs == &one ? NonFinitePolicy::Reject : NonFinitePolicy::Allow;
    if (decode_predict_request_json(doc, *specs, limits, in, error)) {
      for (size_t i = 0; i < specs->size(); ++i) {
        if (in.data[i].size() != in.batch * (*specs)[i].size) __builtin_trap();
      }
      encode_predict_response_json(in.row_format, in.batch, *specs, in.data, body);
    }
  }
  return 0;
}
