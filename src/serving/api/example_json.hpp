#pragma once
// The JSON side of REST :classify and :regress, as TF Serving's json_tensor does it:
//
//   {"signature_name"?: str, "context"?: {feature: value|list}, "examples": [{feature: value|list}, ...]}
//
// Each JSON object becomes a serialized tf.Example (written here, wire format): a number with
// a fraction or exponent joins a float_list, an integer (or true / false as 1 / 0) an
// int64_list, a string or {"b64": ...} a bytes_list; one feature's values must all be of one
// kind. Responses: {"results": [[["label", score], ...], ...]} for classify and
// {"results": [value, ...]} for regress, floats written as Predict writes them.
//
// Every problem with the request is returned as a message for a 400 answer; nothing throws.
#include <cstddef>
#include <string>
#include <vector>

#include "serving/json_dom.hpp"

namespace tickinfer::serving {

// What a classify / regress request carries, whether it came as JSON or as a gRPC Input.
struct ExampleRequest {
  std::string signature_name;         // as given ("" when absent)
  std::string context;                // a serialized tf.Example merged under every example ("" = none)
  std::vector<std::string> examples;  // serialized tf.Examples
};

// `max_examples`: this server's --max_batch_size.
bool decode_example_request_json(const JsonDocument& doc, size_t max_examples, ExampleRequest& out,
                                 std::string& error);

// Writes `batch` examples' classes: labels[c] ("" for every class when `labels` is empty: the
// signature has no classes output) with scores[r * classes + c] (0 when `scores` is null).
void encode_classify_response_json(size_t batch, size_t classes, const std::vector<std::string>& labels,
                                   const float* scores, std::string& body);
void encode_regress_response_json(size_t batch, const float* values, std::string& body);

}  // namespace tickinfer::serving
