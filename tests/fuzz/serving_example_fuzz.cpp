// libFuzzer: the tf.Example wire decoder (serving/example_decoder.hpp) and the JSON-to-Example
// encoder of :classify / :regress (serving/api/example_json.hpp). The first byte picks the mode:
//   bit 1 clear: the rest is wire bytes; bit 0 set: split into context + example at byte 2's value.
//   bit 1 set:   the rest is a request body; every example it encodes must decode without a wire
//                error (the encoder writes well-formed tf.Examples), though a feature may not fit.
// Never throws; must not crash, over-read or write past a feature's floats.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "serving/api/example_json.hpp"
#include "serving/example_decoder.hpp"
#include "serving/json_dom.hpp"

namespace {

using namespace tickinfer::serving;

const std::vector<DenseFeatureSpec>& specs() {
  static const std::vector<DenseFeatureSpec> s = {{"x", {3}, 3, false, {}}, {"w", {1, 2}, 2, true, {0.5f, -1.0f}}, {"", {1}, 1, true, {7.0f}}};
  return s;
}

// Decodes into buffers with guard floats after each feature; a write past one traps.
bool decode_guarded(std::string_view context, std::string_view example, std::string& error) {
  static ExampleScratch scratch;
  constexpr float kGuard = 12345.0f;
  float x[4], w[3], e[2];
  x[3] = w[2] = e[1] = kGuard;
  float* out[] = {x, w, e};
  const bool ok = decode_example(context, example, specs(), ExampleDecodeOptions{context.size() % 2 == 1}, scratch, out, error);
  if (x[3] != kGuard || w[2] != kGuard || e[1] != kGuard) __builtin_trap();
  if (!ok && error.rfind("tf.Example", 0) != 0) __builtin_trap();
  return ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string error;
  if (!(mode & 2)) {
    if ((mode & 1) && !rest.empty()) {
      const size_t split = std::min<size_t>(static_cast<uint8_t>(rest[0]), rest.size() - 1);
      decode_guarded(rest.substr(1, split), rest.substr(1 + split), error);
    } else {
      decode_guarded({}, rest, error);
    }
    return 0;
  }
  static JsonDocument doc;
  static ExampleRequest req;
  if (!doc.parse(rest) || !decode_example_request_json(doc, 64, req, error)) return 0;
  for (const std::string& e : req.examples) {
    // A well-formed Example can only fail on a feature: missing, of another kind or length.
    if (!decode_guarded(req.context, e, error) && error.find(" at byte ") != std::string::npos) __builtin_trap();
  }
  return 0;
}
