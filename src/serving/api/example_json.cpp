#include "serving/api/example_json.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "serving/json_writer.hpp"

namespace tickinfer::serving {

namespace {

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

void put_bytes_field(std::string& out, uint32_t field, std::string_view bytes) {
  put_varint(out, uint64_t{field} << 3 | 2);
  put_varint(out, bytes.size());
  out.append(bytes);
}

// Standard base64 (padding optional), as absl::Base64Unescape reads it.
bool base64_decode(std::string_view in, std::string& out) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  if (in.size() % 4 == 1) return false;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const int v = value(c);
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return true;
}

enum class Kind { Unset, Bytes, Float, Int64 };

const char* kind_text(Kind k) {
  switch (k) {
    case Kind::Bytes: return "bytes";
    case Kind::Float: return "float";
    case Kind::Int64: return "int64";
    default: return "UNKNOWN";
  }
}

// One feature's values while it is read from JSON: its kind (set by the first value), the
// FloatList / Int64List payload (packed) or the BytesList fields.
struct FeatureBuilder {
  const JsonDocument& doc;
  std::string_view name;
  std::string& error;
  Kind kind = Kind::Unset;
  std::string list;

  bool unexpected(const JsonNode& v) {
    error = "Feature: " + std::string(name) + " has element with unexpected JSON type: " + json_type_name(v.type);
    return false;
  }
  bool of_kind(Kind k) {
    if (kind == Kind::Unset || kind == k) {
      kind = k;
      return true;
    }
    error = "Unexpected element type in feature: " + std::string(name) + " expecting type: " + kind_text(kind);
    return false;
  }
  void add_int(int64_t v) { put_varint(list, static_cast<uint64_t>(v)); }

  bool add(const JsonNode& v) {
    switch (v.type) {
      case JsonType::Null:
      case JsonType::Array: return unexpected(v);
      case JsonType::Bool:
        if (!of_kind(Kind::Int64)) return false;
        add_int(v.boolean ? 1 : 0);
        return true;
      case JsonType::String:
        if (!of_kind(Kind::Bytes)) return false;
        put_bytes_field(list, 1, doc.string_of(v));
        return true;
      case JsonType::Object: {
        const JsonNode* b64 = v.size == 1 ? doc.member(v, "b64") : nullptr;
        if (!b64 || b64->type != JsonType::String) return unexpected(v);
        if (!of_kind(Kind::Bytes)) return false;
        std::string decoded;
        if (!base64_decode(doc.string_of(*b64), decoded)) {
          error = "Unable to base64 decode";
          return false;
        }
        put_bytes_field(list, 1, decoded);
        return true;
      }
      case JsonType::Number: break;
    }
    if (v.integer == 0) {  // a decimal: float_list
      if (!of_kind(Kind::Float)) return false;
      if (std::isfinite(v.number) && std::fabs(v.number) > std::numeric_limits<float>::max()) {
        error = "Cannot convert JSON value: " + std::to_string(v.number) + " to float without loss of precision.";
        return false;
      }
      const float f = static_cast<float>(v.number);
      char b[4];
      std::memcpy(b, &f, 4);
      list.append(b, 4);
      return true;
    }
    if (!of_kind(Kind::Int64)) return false;
    if (v.integer == 2) {
      error = "Feature: " + std::string(name) + " has uint64 element. Only int64 is supported.";
      return false;
    }
    add_int(v.int_value);
    return true;
  }

  // The Feature message: the list of its kind, or nothing (an empty JSON list: no kind set).
  void write(std::string& feature) const {
    feature.clear();
    if (kind == Kind::Unset) return;
    std::string values;
    if (kind == Kind::Bytes) {
      values = list;
    } else {
      put_bytes_field(values, 1, list);  // packed
    }
    put_bytes_field(feature, kind == Kind::Bytes ? 1 : kind == Kind::Float ? 2 : 3, values);
  }
};

// A JSON object {feature: value|list} as a serialized tf.Example.
bool example_from_json(const JsonDocument& doc, const JsonNode& obj, std::string& out, std::string& error) {
  if (obj.type != JsonType::Object) {
    error = std::string("Example must be JSON object but got JSON ") + json_type_name(obj.type);
    return false;
  }
  std::string entries, entry, feature;
  for (const JsonNode* m = doc.first(obj); m; m = doc.next(*m)) {
    FeatureBuilder b{doc, doc.key_of(*m), error, Kind::Unset, {}};
    if (m->type == JsonType::Array) {
      for (const JsonNode* v = doc.first(*m); v; v = doc.next(*v)) {
        if (!b.add(*v)) return false;
      }
    } else if (!b.add(*m)) {
      return false;
    }
    b.write(feature);
    entry.clear();
    put_bytes_field(entry, 1, doc.key_of(*m));
    put_bytes_field(entry, 2, feature);
    put_bytes_field(entries, 1, entry);
  }
  out.clear();
  put_bytes_field(out, 1, entries);  // Example.features
  return true;
}

}  // namespace

bool decode_example_request_json(const JsonDocument& doc, size_t max_examples, ExampleRequest& out,
                                 std::string& error) {
  error.clear();
  out.signature_name.clear();
  out.context.clear();
  out.examples.clear();
  const JsonNode& root = doc.root();
  if (root.type != JsonType::Object) {
    error = "JSON Value: request body must be a JSON object";
    return false;
  }
  if (const JsonNode* sig = doc.member(root, "signature_name")) {
    if (sig->type != JsonType::String) {
      error = "'signature_name' key must be a string value.";
      return false;
    }
    out.signature_name.assign(doc.string_of(*sig));
  }
  if (const JsonNode* ctx = doc.member(root, "context")) {
    if (!example_from_json(doc, *ctx, out.context, error)) return false;
  }
  const JsonNode* examples = doc.member(root, "examples");
  if (!examples) {
    // TF Serving's wording, which says classify for :regress too.
    error = "When method is classify, key 'examples' is expected and was not found";
    return false;
  }
  if (examples->type != JsonType::Array) {
    error = "Expecting 'examples' value to be an list/array";
    return false;
  }
  if (examples->size == 0) {
    error = "'examples' value is an empty array";
    return false;
  }
  if (examples->size > max_examples) {
    error = "batch of " + std::to_string(examples->size) + " examples exceeds this server's limit of " +
            std::to_string(max_examples) + " (--max_batch_size)";
    return false;
  }
  out.examples.resize(examples->size);
  size_t i = 0;
  for (const JsonNode* e = doc.first(*examples); e; e = doc.next(*e)) {
    if (!example_from_json(doc, *e, out.examples[i++], error)) return false;
  }
  return true;
}

void encode_classify_response_json(size_t batch, size_t classes, const std::vector<std::string>& labels,
                                   const float* scores, std::string& body) {
  body.clear();
  body += "{\n    \"results\": [";
  for (size_t r = 0; r < batch; ++r) {
    body += r ? ",\n        [" : "\n        [";
    for (size_t c = 0; c < classes; ++c) {
      if (c) body += ", ";
      body += '[';
      append_json_string(body, labels.empty() ? std::string_view() : std::string_view(labels[c]));
      body += ", ";
      append_json_float(body, scores ? scores[r * classes + c] : 0.0f);
      body += ']';
    }
    body += ']';
  }
  body += "\n    ]\n}";
}

void encode_regress_response_json(size_t batch, const float* values, std::string& body) {
  body.clear();
  body += "{\n    \"results\": [";
  for (size_t r = 0; r < batch; ++r) {
    if (r) body += ", ";
    append_json_float(body, values[r]);
  }
  body += "]\n}";
}

}  // namespace tickinfer::serving
