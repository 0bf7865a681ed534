#pragma once
// Decoding of the few protobuf messages tickinfer reads without a protobuf library: the
// PredictRequest inside a warmup file's PredictionLog records (tensorflow.serving field numbers,
// see docs/serving.md) and the one-field gRPC HealthCheckRequest. The wire format is read with bounds checks everywhere; malformed input
// throws tickinfer::Error naming `source` and the problem, never reads out of range, and never
// allocates more than the input's size.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tickinfer::serving {

// A decoded TensorProto, converted to float (DT_FLOAT, DT_DOUBLE, DT_INT32/16/8, DT_UINT8/16,
// DT_INT64, DT_BOOL; others are refused). A single typed value fills the whole shape.
struct DecodedTensor {
  int dtype = 0;
  std::vector<int64_t> shape;
  std::vector<float> values;
};

struct DecodedPredictRequest {
  std::string model_name, signature_name;
  std::map<std::string, DecodedTensor> inputs;
};

DecodedTensor decode_tensor_proto(std::string_view bytes, std::string_view source);
// grpc.health.v1.HealthCheckRequest: its `service` (field 1); other fields skipped.
std::string decode_health_check_request(std::string_view bytes, std::string_view source);
DecodedPredictRequest decode_predict_request(std::string_view bytes, std::string_view source);
// A PredictionLog record: returns false for log types other than predict_log (they are skipped
// by warmup); throws for malformed bytes.
bool decode_prediction_log(std::string_view bytes, std::string_view source,
                           DecodedPredictRequest& out);

// TFRecord framing: uint64 length | masked crc32c(length) | data | masked crc32c(data).
// Returns each record's bytes; throws naming `source` and the record index on a bad length or
// checksum or a truncated record. At most max_records records are read (more is an error).
std::vector<std::string> read_tfrecords(std::string_view file, std::string_view source,
                                        size_t max_records);
uint32_t crc32c(const void* data, size_t size);
uint32_t masked_crc32c(const void* data, size_t size);

}  // namespace tickinfer::serving
