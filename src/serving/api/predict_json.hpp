#pragma once
// The JSON side of REST :predict, as TF Serving's json_tensor does it (docs/serving.md):
// request bodies in row form (`instances`) or columnar form (`inputs`) become one float buffer
// per model input; outputs are written back as `{"predictions": ...}` (row) or
// `{"outputs": ...}` (columnar).
//
// Every problem with the request is reported as a message for a 400 answer; nothing throws.
// Buffers are owned by the caller and reused, so a warmed-up worker decodes and encodes
// without allocating.
#include <cstddef>
#include <string>
#include <vector>

#include "serving/json_dom.hpp"
#include "serving/servable.hpp"

namespace tickinfer::serving {

enum class NonFinitePolicy { Reject, Allow };

struct PredictLimits {
  size_t max_batch = 1024;  // rows per request
  NonFinitePolicy nonfinite = NonFinitePolicy::Reject;
};

struct DecodedInputs {
  bool row_format = true;
  size_t batch = 0;
  std::string signature_name;            // as given ("" when absent)
  // data[i] for each model input i: batch * size floats (there may be more, unused, entries).
  std::vector<std::vector<float>> data;
};

// Decodes a parsed request body against the servable's inputs. Returns false with `error` set
// (the message for {"error": ...}) when the request does not fit.
bool decode_predict_request_json(const JsonDocument& doc, const std::vector<TensorSpec>& inputs,
                                 const PredictLimits& limits, DecodedInputs& out,
                                 std::string& error);

// Writes the response body for `batch` rows of outputs (outputs[o]: batch * size floats).
void encode_predict_response_json(bool row_format, size_t batch,
                                  const std::vector<TensorSpec>& outputs,
                                  const std::vector<std::vector<float>>& data, std::string& body);

}  // namespace tickinfer::serving
