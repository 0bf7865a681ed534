// GET /v1/models/{name}[/versions/{N}|/labels/{L}]/metadata: the serving_default signature in
// TF Serving's JSON layout.
#include <string>

#include "serving/api/rest_handlers.hpp"
#include "serving/json_writer.hpp"

namespace tickinfer::serving {

namespace {

// `tensor_name` mirrors what a Keras SavedModel export shows: serving_default_<input>:0 for
// inputs, StatefulPartitionedCall:<index> for outputs.
void append_tensor_info(std::string& b, const TensorSpec& t, const std::string& tensor_name) {
  append_json_string(b, t.name);
  b += ": {\"dtype\": \"DT_FLOAT\", \"tensor_shape\": {\"dim\": [{\"size\": \"-1\", \"name\": \"\"}";
  for (int64_t d : t.shape) {
    b += ", {\"size\": \"";
    append_json_int(b, d);
    b += "\", \"name\": \"\"}";
  }
  b += "], \"unknown_rank\": false}, \"name\": ";
  append_json_string(b, tensor_name);
  b += "}";
}

}  // namespace

void handle_metadata(RestCall& call) {
  if (!resolve_servable(call)) return;
  const Servable& sv = *call.servable;
  std::string& b = call.resp.body;
  b = "{\n\"model_spec\": {\"name\": ";
  append_json_string(b, call.s.name);
  b += ", \"signature_name\": \"\", \"version\": \"";
  append_json_int(b, sv.version());
  b += "\"},\n\"metadata\": {\"signature_def\": {\"signature_def\": {\"serving_default\": {\"inputs\": {";
  for (size_t i = 0; i < sv.inputs().size(); ++i) {
    if (i) b += ", ";
    append_tensor_info(b, sv.inputs()[i], "serving_default_" + sv.inputs()[i].name + ":0");
  }
  b += "}, \"outputs\": {";
  for (size_t i = 0; i < sv.outputs().size(); ++i) {
    if (i) b += ", ";
    append_tensor_info(b, sv.outputs()[i], "StatefulPartitionedCall:" + std::to_string(i));
  }
  b += "}, \"method_name\": \"tensorflow/serving/predict\"}}}}\n}";
}

}  // namespace tickinfer::serving
