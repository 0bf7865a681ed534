// libFuzzer: TFRecord framing and the PredictionLog / PredictRequest / TensorProto decoder
// (warmup files), and the gRPC HealthCheckRequest decoder. Malformed input must be refused with tickinfer::Error, never crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "serving/proto_wire.hpp"
#include "tickinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tickinfer::serving;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    for (const auto& rec : read_tfrecords(bytes, "fuzz", 1000)) {
      DecodedPredictRequest req;
      try { decode_prediction_log(rec, "fuzz", req); } catch (const tickinfer::Error&) {}
    }
  } catch (const tickinfer::Error&) {
  }
  DecodedPredictRequest req;
  try { decode_prediction_log(bytes, "fuzz", req); } catch (const tickinfer::Error&) {}
  try { decode_tensor_proto(bytes, "fuzz"); } catch (const tickinfer::Error&) {}
  try {
    if (decode_health_check_request(bytes, "fuzz").size() > size) __builtin_trap();
  } catch (const tickinfer::Error&) {
  }
  return 0;
}
