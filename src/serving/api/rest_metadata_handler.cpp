// GET /v1/models/{name}[/versions/{N}|/labels/{L}]/metadata: the model's signatures
// (Servable::signatures) in TF Serving's JSON layout.
#include <string>

#include "serving/api/rest_handlers.hpp"
#include "serving/json_writer.hpp"

namespace tickinfer::serving {

namespace {

const char* dtype_name(int dtype) {
  switch (dtype) {
    case 1: return "DT_FLOAT";
    case 2: return "DT_DOUBLE";
    case 3: return "DT_INT32";
    case 4: return "DT_UINT8";
    case 5: return "DT_INT16";
    case 6: return "DT_INT8";
    case 7: return "DT_STRING";
    case 9: return "DT_INT64";
    case 10: return "DT_BOOL";
    case 14: return "DT_BFLOAT16";
    case 19: return "DT_HALF";
    default: return "DT_INVALID";
  }
}

void append_tensor_info(std::string& b, const SignatureTensor& t) {
  append_json_string(b, t.key);
  b += ": {\"dtype\": \"";
  b += dtype_name(t.dtype);
  b += "\", \"tensor_shape\": {\"dim\": [";
  for (size_t i = 0; i < t.shape.size(); ++i) {
    b += i ? ", {\"size\": \"" : "{\"size\": \"";
    append_json_int(b, t.shape[i]);
    b += "\", \"name\": \"\"}";
  }
  b += t.unknown_rank ? "], \"unknown_rank\": true}, \"name\": " : "], \"unknown_rank\": false}, \"name\": ";
  append_json_string(b, t.tensor_name);
  b += "}";
}

void append_tensors(std::string& b, const std::vector<SignatureTensor>& tensors) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (i) b += ", ";
    append_tensor_info(b, tensors[i]);
  }
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
  b += "\"},\n\"metadata\": {\"signature_def\": {\"signature_def\": {";
  for (size_t i = 0; i < sv.signatures().size(); ++i) {
    const ServedSignature& sig = sv.signatures()[i];
    if (i) b += ", ";
    append_json_string(b, sig.key);
    b += ": {\"inputs\": {";
    append_tensors(b, sig.inputs);
    b += "}, \"outputs\": {";
    append_tensors(b, sig.outputs);
    b += "}, \"method_name\": ";
    append_json_string(b, sig.method_name);
    b += "}";
  }
  b += "}}}\n}";
}

}  // namespace tickinfer::serving
