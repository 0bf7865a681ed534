#include "serving/example_decoder.hpp"

#include <cmath>
#include <cstring>

namespace tickinfer::serving {

namespace {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLength = 2, kStartGroup = 3, kEndGroup = 4, kFixed32 = 5 };

const char* wire_type_name(uint32_t w) {
  switch (w) {
    case kVarint: return "0 (varint)";
    case kFixed64: return "1 (64-bit)";
    case kLength: return "2 (length-delimited)";
    case kStartGroup: return "3 (start group)";
    case kEndGroup: return "4 (end group)";
    case kFixed32: return "5 (32-bit)";
    default: return "6 or 7 (invalid)";
  }
}

// A bounded reader over [p, end) of a buffer starting at `base` (offsets in errors are from
// `base`). Every read checks the bound first; a failure sets `error` and returns false.
struct Reader {
  const char* p;
  const char* end;
  const char* base;
  const char* where;  // "tf.Example" or "tf.Example context"
  std::string& error;

  size_t offset(const char* at) const { return static_cast<size_t>(at - base); }
  bool fail(const std::string& what, const char* at) {
    error = std::string(where) + ": " + what + " at byte " + std::to_string(offset(at));
    return false;
  }
  bool done() const { return p >= end; }

  bool varint(uint64_t& v) {
    const char* start = p;
    v = 0;
    for (int i = 0; i < 10; ++i) {
      if (p >= end) return fail("truncated varint", start);
      const auto b = static_cast<uint8_t>(*p++);
      if (i == 9 && (b & 0x80)) return fail("varint longer than 10 bytes", start);
      if (i == 9 && b > 1) return fail("varint overflows 64 bits", start);
      v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
      if (!(b & 0x80)) return true;
    }
    return false;  // not reached: the tenth byte ends the varint or fails above
  }

  // A tag: field number and wire type.
  bool tag(uint32_t& field, uint32_t& wire) {
    const char* start = p;
    uint64_t t = 0;
    if (!varint(t)) return false;
    field = static_cast<uint32_t>(t >> 3);
    wire = static_cast<uint32_t>(t & 7);
    if ((t >> 3) == 0 || (t >> 3) > 0x1fffffff) return fail("invalid field number " + std::to_string(t >> 3), start);
    return true;
  }

  // A length-delimited payload: [data, data + size) within the buffer.
  bool bytes(const char*& data, size_t& size) {
    const char* start = p;
    uint64_t n = 0;
    if (!varint(n)) return false;
    if (n > static_cast<uint64_t>(end - p)) {
      return fail("truncated length-delimited field (length " + std::to_string(n) + ", " +
                      std::to_string(end - p) + " bytes left)",
                  start);
    }
    data = p;
    size = static_cast<size_t>(n);
    p += n;
    return true;
  }

  // Skips one field of an unknown number by its wire type (groups are refused: proto3 has none).
  bool skip(uint32_t wire, const char* tag_at) {
    uint64_t v = 0;
    const char* d = nullptr;
    size_t n = 0;
    switch (wire) {
      case kVarint: return varint(v);
      case kFixed64:
        if (end - p < 8) return fail("truncated 64-bit field", tag_at);
        p += 8;
        return true;
      case kFixed32:
        if (end - p < 4) return fail("truncated 32-bit field", tag_at);
        p += 4;
        return true;
      case kLength: return bytes(d, n);
      default: return fail("unsupported wire type " + std::string(wire_type_name(wire)), tag_at);
    }
  }

  bool expect_wire(uint32_t field, uint32_t wire, uint32_t want, const char* message, const char* tag_at) {
    if (wire == want) return true;
    return fail("field " + std::to_string(field) + " of " + message + " has wire type " + wire_type_name(wire) +
                    ", expected " + wire_type_name(want),
                tag_at);
  }

  Reader sub(const char* data, size_t size) const { return Reader{data, data + size, base, where, error}; }
};

int find_feature(const std::vector<DenseFeatureSpec>& features, const char* key, size_t n) {
  for (size_t i = 0; i < features.size(); ++i) {
    if (features[i].key.size() == n && std::memcmp(features[i].key.data(), key, n) == 0) return static_cast<int>(i);
  }
  return -1;
}

// One map entry of Features: records where a declared key's Feature is (a later entry wins).
bool read_entry(Reader r, const std::vector<DenseFeatureSpec>& features, ExampleScratch& s) {
  const char* key = nullptr;
  size_t key_size = 0;
  const char* value = nullptr;
  size_t value_size = 0;
  bool has_value = false;
  while (!r.done()) {
    const char* at = r.p;
    uint32_t field = 0, wire = 0;
    if (!r.tag(field, wire)) return false;
    if (field == 1 || field == 2) {
      if (!r.expect_wire(field, wire, kLength, "a Features map entry", at)) return false;
      const char* d = nullptr;
      size_t n = 0;
      if (!r.bytes(d, n)) return false;
      if (field == 1) {
        key = d;
        key_size = n;
      } else {
        value = d;
        value_size = n;
        has_value = true;
      }
    } else if (!r.skip(wire, at)) {
      return false;
    }
  }
  const int f = find_feature(features, key ? key : "", key_size);  // a missing key is ""
  if (f >= 0) {
    // An entry without a value holds a Feature with no kind: "missing" for a dense feature.
    s.found[static_cast<size_t>(f)] = ExampleScratch::Found{has_value ? value : "", has_value ? value_size : 0, r.base};
  }
  return true;
}

// Calls body(reader) on every field 1 of `message` (Features.feature entries, Example.features),
// which must be length-delimited; other fields are skipped by their wire type.
template <class Body>
bool each_field1(Reader r, const char* message, Body&& body) {
  while (!r.done()) {
    const char* at = r.p;
    uint32_t field = 0, wire = 0;
    if (!r.tag(field, wire)) return false;
    if (field != 1) {
      if (!r.skip(wire, at)) return false;
      continue;
    }
    if (!r.expect_wire(field, wire, kLength, message, at)) return false;
    const char* d = nullptr;
    size_t n = 0;
    if (!r.bytes(d, n) || !body(r.sub(d, n))) return false;
  }
  return true;
}

bool read_features(Reader r, const std::vector<DenseFeatureSpec>& features, ExampleScratch& s) {
  return each_field1(r, "Features", [&](Reader entry) { return read_entry(entry, features, s); });
}

bool read_example(Reader r, const std::vector<DenseFeatureSpec>& features, ExampleScratch& s) {
  return each_field1(r, "Example", [&](Reader f) { return read_features(f, features, s); });
}

enum class Kind { None, Bytes, Float, Int64 };
const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Bytes: return "string";
    case Kind::Float: return "float";
    case Kind::Int64: return "int64";
    default: return "none";
  }
}

struct FeatureFill {
  const DenseFeatureSpec& spec;
  float* out;
  size_t count = 0;  // floats written so far
  bool overflow = false;

  void push(float v) {
    if (count < spec.size) out[count] = v;
    else overflow = true;
    ++count;
  }
};

// A FloatList's values, packed (one length-delimited field of 4-byte floats) or not (fixed32
// fields), appended to `fill`.
bool read_float_list(Reader r, FeatureFill& fill) {
  while (!r.done()) {
    const char* at = r.p;
    uint32_t field = 0, wire = 0;
    if (!r.tag(field, wire)) return false;
    if (field != 1) {
      if (!r.skip(wire, at)) return false;
      continue;
    }
    if (wire == kFixed32) {
      if (r.end - r.p < 4) return r.fail("truncated float value", at);
      float v;
      std::memcpy(&v, r.p, 4);
      r.p += 4;
      fill.push(v);
    } else if (wire == kLength) {
      const char* d = nullptr;
      size_t n = 0;
      if (!r.bytes(d, n)) return false;
      if (n % 4 != 0) return r.fail("packed FloatList of " + std::to_string(n) + " bytes (not a multiple of 4)", at);
      for (size_t i = 0; i < n; i += 4) {
        float v;
        std::memcpy(&v, d + i, 4);
        fill.push(v);
      }
    } else {
      return r.expect_wire(field, wire, kFixed32, "FloatList", at);
    }
  }
  return true;
}

// The kind of a Feature message and the bytes of its (last) list; a repeated list field of the
// same kind is merged (its values appended), as protobuf merges sub-messages.
bool read_feature(Reader r, Kind& kind, FeatureFill& fill, bool decode) {
  kind = Kind::None;
  while (!r.done()) {
    const char* at = r.p;
    uint32_t field = 0, wire = 0;
    if (!r.tag(field, wire)) return false;
    if (field < 1 || field > 3) {
      if (!r.skip(wire, at)) return false;
      continue;
    }
    if (!r.expect_wire(field, wire, kLength, "Feature", at)) return false;
    const char* d = nullptr;
    size_t n = 0;
    if (!r.bytes(d, n)) return false;
    const Kind k = field == 1 ? Kind::Bytes : field == 2 ? Kind::Float : Kind::Int64;
    if (k != kind) fill.count = 0, fill.overflow = false;  // a oneof: the last kind set wins
    kind = k;
    if (k == Kind::Float && decode && !read_float_list(r.sub(d, n), fill)) return false;
  }
  return true;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

bool fill_feature(const DenseFeatureSpec& spec, const ExampleScratch::Found& found, const ExampleDecodeOptions& options,
                  float* out, const char* where, std::string& error) {
  Kind kind = Kind::None;
  FeatureFill fill{spec, out};
  if (found.data) {
    Reader r{found.data, found.data + found.size, found.base, where, error};
    if (!read_feature(r, kind, fill, true)) return false;
  }
  if (kind == Kind::None) {
    if (!spec.has_default) {
      error = std::string(where) + ": Feature: " + spec.key + " (data type: float) is required but could not be found.";
      return false;
    }
    std::memcpy(out, spec.default_value.data(), spec.size * sizeof(float));
    return true;
  }
  if (kind != Kind::Float) {
    error = std::string(where) + ": Key: " + spec.key + ". Data types don't match. Data type: " + kind_name(kind) +
            " but expected type: float";
    return false;
  }
  if (fill.count != spec.size) {
    error = std::string(where) + ": Key: " + spec.key + ". Number of float values != expected. Values size: " +
            std::to_string(fill.count) + " but output shape: " + shape_text(spec.shape);
    return false;
  }
  if (options.reject_nonfinite) {
    for (size_t i = 0; i < spec.size; ++i) {
      if (!std::isfinite(out[i])) {
        error = std::string(where) + ": Key: " + spec.key +
                " holds NaN or Infinity; this server refuses non-finite inputs (--nonfinite_inputs=reject)";
        return false;
      }
    }
  }
  return true;
}

}  // namespace

bool decode_example(std::string_view context, std::string_view example, const std::vector<DenseFeatureSpec>& features,
                    const ExampleDecodeOptions& options, ExampleScratch& scratch, float* const* out,
                    std::string& error) {
  error.clear();
  scratch.found.assign(features.size(), ExampleScratch::Found{});
  if (!context.empty()) {
    Reader r{context.data(), context.data() + context.size(), context.data(), "tf.Example context", error};
    if (!read_example(r, features, scratch)) return false;
  }
  Reader r{example.data(), example.data() + example.size(), example.data(), "tf.Example", error};
  if (!read_example(r, features, scratch)) return false;
  for (size_t i = 0; i < features.size(); ++i) {
    const ExampleScratch::Found& f = scratch.found[i];
    const char* where = f.base && f.base == context.data() && !context.empty() ? "tf.Example context" : "tf.Example";
    if (!fill_feature(features[i], f, options, out[i], where, error)) return false;
  }
  return true;
}

}  // namespace tickinfer::serving
