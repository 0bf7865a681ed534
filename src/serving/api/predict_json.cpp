#include "serving/api/predict_json.hpp"

#include <cmath>

#include "serving/json_writer.hpp"

namespace tickinfer::serving {

namespace {

std::string shape_text(const std::vector<int64_t>& s, bool with_batch) {
  std::string t = "[";
  if (with_batch) t += s.empty() ? "-1" : "-1,";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) t += ',';
    t += std::to_string(s[i]);
  }
  return t + "]";
}

// The shape of a nested JSON array as written (following first elements).
std::string observed_shape(const JsonDocument& doc, const JsonNode& n) {
  std::string t = "[";
  const JsonNode* p = &n;
  bool first = true;
  while (p && p->type == JsonType::Array) {
    if (!first) t += ',';
    first = false;
    t += std::to_string(p->size);
    p = doc.first(*p);
  }
  return t + "]";
}

struct Filler {
  const JsonDocument& doc;
  const PredictLimits& limits;
  std::string& error;

  // Appends the values of `n`, which must have exactly `shape[dim:]`.
  bool fill(const JsonNode& n, const std::vector<int64_t>& shape, size_t dim, std::vector<float>& out,
            const std::string& input) {
    if (dim == shape.size()) {
      if (n.type != JsonType::Number) {
        error = "input '" + input + "' holds " + json_type_name(n.type) +
                " where a number is expected (the input dtype is DT_FLOAT)";
        return false;
      }
      const float v = static_cast<float>(n.number);
      if (limits.nonfinite == NonFinitePolicy::Reject && !std::isfinite(v)) {
        error = "input '" + input +
                "' holds NaN or Infinity (or a value beyond float range); this server refuses "
                "non-finite inputs (--nonfinite_inputs=reject)";
        return false;
      }
      out.push_back(v);
      return true;
    }
    if (n.type != JsonType::Array || static_cast<int64_t>(n.size) != shape[dim]) {
      return false;  // the caller reports the whole shape
    }
    for (const JsonNode* c = doc.first(n); c; c = doc.next(*c)) {
      if (!fill(*c, shape, dim + 1, out, input)) return false;
    }
    return true;
  }

  bool item(const JsonNode& n, const TensorSpec& spec, std::vector<float>& out) {
    const size_t before = out.size();
    if (fill(n, spec.shape, 0, out, spec.name)) return true;
    if (error.empty()) {
      error = "input '" + spec.name + "' must have shape " + shape_text(spec.shape, true) +
              "; got an instance of shape " + (n.type == JsonType::Array ? observed_shape(doc, n) : "[]");
    }
    out.resize(before);
    return false;
  }
};

}  // namespace

bool decode_predict_request_json(const JsonDocument& doc, const std::vector<TensorSpec>& inputs,
                                 const PredictLimits& limits, DecodedInputs& out,
                                 std::string& error) {
  error.clear();
  const JsonNode& root = doc.root();
  if (root.type != JsonType::Object) {
    error = "JSON Value: request body must be a JSON object";
    return false;
  }
  // Grow only: a worker alternates between models, and shrinking would free buffers it needs again.
  if (out.data.size() < inputs.size()) out.data.resize(inputs.size());
  for (auto& d : out.data) d.clear();
  out.signature_name.clear();
  out.batch = 0;
  if (const JsonNode* sig = doc.member(root, "signature_name")) {
    if (sig->type != JsonType::String) {
      error = "'signature_name' key must be a string value.";
      return false;
    }
    out.signature_name.assign(doc.string_of(*sig));
  }
  const JsonNode* instances = doc.member(root, "instances");
  const JsonNode* columns = doc.member(root, "inputs");
  if (instances && columns) {
    error = "Not formatted correctly expecting only one of 'inputs' or 'instances' keys exist";
    return false;
  }
  if (!instances && !columns) {
    error = "Missing 'inputs' or 'instances' key";
    return false;
  }
  Filler f{doc, limits, error};
  if (instances) {
    out.row_format = true;
    if (instances->type != JsonType::Array || instances->size == 0) {
      error = "'instances' must be a non-empty JSON array";
      return false;
    }
    out.batch = instances->size;
    if (out.batch > limits.max_batch) {
      error = "batch of " + std::to_string(out.batch) + " instances exceeds this server's limit of " +
              std::to_string(limits.max_batch) + " (--max_batch_size)";
      return false;
    }
    size_t row = 0;
    for (const JsonNode* it = doc.first(*instances); it; it = doc.next(*it), ++row) {
      if (inputs.size() == 1 && it->type != JsonType::Object) {
        if (!f.item(*it, inputs[0], out.data[0])) return false;
        continue;
      }
      if (it->type != JsonType::Object) {
        error = "instance " + std::to_string(row) +
                ": the model has several inputs, so every instance must be an object keyed by "
                "input name";
        return false;
      }
      if (it->size != inputs.size()) {
        error = "instance " + std::to_string(row) + " has " + std::to_string(it->size) +
                " keys; expected exactly the " + std::to_string(inputs.size()) + " input names";
        return false;
      }
      for (size_t i = 0; i < inputs.size(); ++i) {
        const JsonNode* v = doc.member(*it, inputs[i].name);
        if (!v) {
          error = "instance " + std::to_string(row) + " is missing named input '" + inputs[i].name + "'";
          return false;
        }
        if (!f.item(*v, inputs[i], out.data[i])) return false;
      }
    }
    return true;
  }
  out.row_format = false;
  // Columnar: one input may be given bare; otherwise an object keyed by input name.
  const bool keyed = columns->type == JsonType::Object;
  if (!keyed && inputs.size() != 1) {
    error = "'inputs' must be an object keyed by input name: the model has " +
            std::to_string(inputs.size()) + " inputs";
    return false;
  }
  if (keyed && columns->size != inputs.size()) {
    for (const JsonNode* c = doc.first(*columns); c; c = doc.next(*c)) {
      bool known = false;
      for (const auto& s : inputs) known = known || doc.key_of(*c) == s.name;
      if (!known) {
        error = "'inputs' has unknown input '" + std::string(doc.key_of(*c)) + "'";
        return false;
      }
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const JsonNode* v = keyed ? doc.member(*columns, inputs[i].name) : columns;
    if (!v) {
      error = "Missing named input '" + inputs[i].name + "' in 'inputs'";
      return false;
    }
    if (v->type != JsonType::Array || v->size == 0) {
      error = "input '" + inputs[i].name + "' must be a non-empty array of shape " +
              shape_text(inputs[i].shape, true);
      return false;
    }
    const size_t batch = v->size;
    if (batch > limits.max_batch) {
      error = "batch of " + std::to_string(batch) + " exceeds this server's limit of " +
              std::to_string(limits.max_batch) + " (--max_batch_size)";
      return false;
    }
    if (i > 0 && batch != out.batch) {
      error = "inputs have different batch sizes (" + std::to_string(out.batch) + " and " +
              std::to_string(batch) + "); this server needs the same dim 0 for every input";
      return false;
    }
    out.batch = batch;
    for (const JsonNode* it = doc.first(*v); it; it = doc.next(*it)) {
      if (!f.item(*it, inputs[i], out.data[i])) return false;
    }
  }
  return true;
}

namespace {

// Writes one item (values[0 .. product(shape[dim:]))) as nested lists.
const float* write_nested(std::string& out, const float* v, const std::vector<int64_t>& shape, size_t dim) {
  if (dim == shape.size()) {
    append_json_float(out, *v);
    return v + 1;
  }
  out += '[';
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (i) out += ", ";
    v = write_nested(out, v, shape, dim + 1);
  }
  out += ']';
  return v;
}

}  // namespace

void encode_predict_response_json(bool row_format, size_t batch, const std::vector<TensorSpec>& outputs,
                                  const std::vector<std::vector<float>>& data, std::string& body) {
  body.clear();
  if (row_format) {
    body += "{\n    \"predictions\": [";
    for (size_t r = 0; r < batch; ++r) {
      body += r ? ", " : "";
      if (outputs.size() == 1) {
        write_nested(body, data[0].data() + r * outputs[0].size, outputs[0].shape, 0);
        continue;
      }
      body += '{';
      for (size_t o = 0; o < outputs.size(); ++o) {
        if (o) body += ", ";
        append_json_string(body, outputs[o].name);
        body += ": ";
        write_nested(body, data[o].data() + r * outputs[o].size, outputs[o].shape, 0);
      }
      body += '}';
    }
    body += "]\n}";
    return;
  }
  body += "{\n    \"outputs\": ";
  if (outputs.size() != 1) body += '{';
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (outputs.size() != 1) {
      if (o) body += ", ";
      append_json_string(body, outputs[o].name);
      body += ": ";
    }
    body += '[';
    for (size_t r = 0; r < batch; ++r) {
      if (r) body += ", ";
      write_nested(body, data[o].data() + r * outputs[o].size, outputs[o].shape, 0);
    }
    body += ']';
  }
  if (outputs.size() != 1) body += '}';
  body += "\n}";
}

}  // namespace tickinfer::serving
