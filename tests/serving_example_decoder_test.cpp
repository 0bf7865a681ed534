// The tf.Example wire decoder (serving/example_decoder.hpp) against libprotobuf as the
// independent encoder (tensorflow.Example from src/serving/proto), and hand-built malformed
// bytes for every refusal: truncated lengths, bad wire types, overlong varints, the wrong
// feature kind, the wrong number of values, a missing feature with and without a default.
// Values must come out bit for bit (a float is copied, never computed).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "serving/api/example_json.hpp"
#include "serving/example_decoder.hpp"
#include "serving/json_dom.hpp"
#include "tensorflow/core/example/example.pb.h"

using tickinfer::serving::decode_example;
using tickinfer::serving::DenseFeatureSpec;
using tickinfer::serving::ExampleDecodeOptions;
using tickinfer::serving::ExampleScratch;

namespace {

// x: [3] floats, required; w: [2] floats, default {0.5, -1}.
std::vector<DenseFeatureSpec> specs() {
  DenseFeatureSpec x{"x", {3}, 3, false, {}};
  DenseFeatureSpec w{"w", {2}, 2, true, {0.5f, -1.0f}};
  return {x, w};
}

tensorflow::Feature floats(const std::vector<float>& v) {
  tensorflow::Feature f;
  for (float x : v) f.mutable_float_list()->add_value(x);
  return f;
}

std::string example(const std::vector<std::pair<std::string, tensorflow::Feature>>& features) {
  tensorflow::Example e;
  for (const auto& [k, f] : features) (*e.mutable_features()->mutable_feature())[k] = f;
  return e.SerializeAsString();
}

struct Decoded {
  bool ok = false;
  std::string error;
  float x[3] = {0, 0, 0};
  float w[2] = {0, 0};
};

Decoded decode(const std::string& bytes, const std::string& context = "", bool reject_nonfinite = false) {
  Decoded d;
  ExampleScratch scratch;
  float* out[] = {d.x, d.w};
  d.ok = decode_example(context, bytes, specs(), ExampleDecodeOptions{reject_nonfinite}, scratch, out, d.error);
  return d;
}

// Hand-built wire bytes.
std::string varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  return s + static_cast<char>(v);
}
std::string field(uint32_t number, const std::string& payload) { return varint(number << 3 | 2) + varint(payload.size()) + payload; }
std::string entry(const std::string& key, const std::string& feature) { return field(1, field(1, key) + field(2, feature)); }
std::string wrap(const std::string& entries) { return field(1, entries); }  // Example.features
std::string f32(float v) {
  std::string s(4, '\0');
  std::memcpy(s.data(), &v, 4);
  return s;
}

TEST(ExampleDecoder, PackedFloatsFromLibprotobufComeOutBitForBit) {
  const float tiny = std::nextafter(0.0f, 1.0f);
  const Decoded d = decode(example({{"x", floats({1.5f, -0.0f, tiny})}, {"w", floats({3.25f, 1e30f})}}));
  ASSERT_TRUE(d.ok) << d.error;
  EXPECT_EQ(d.x[0], 1.5f);
  EXPECT_TRUE(std::signbit(d.x[1]));
  EXPECT_EQ(d.x[2], tiny);
  EXPECT_EQ(d.w[0], 3.25f);
  EXPECT_EQ(d.w[1], 1e30f);
}

TEST(ExampleDecoder, UnpackedFloatsAndUnknownFieldsAreRead) {
  // FloatList values as separate fixed32 fields (wire type 5), with unknown fields of every
  // wire type around them, in the Example, Features, entry, Feature and FloatList.
  const std::string unknown = varint(9 << 3 | 0) + varint(300) + varint(10 << 3 | 1) + std::string(8, 'a') +
                              varint(11 << 3 | 5) + std::string(4, 'b') + field(12, "zz");
  std::string list;
  for (float v : {1.0f, 2.0f, 3.0f}) list += varint(1 << 3 | 5) + f32(v);
  const std::string x = entry("x", field(2, list + unknown) + unknown);
  const std::string bytes = unknown + wrap(x + unknown) + unknown;
  const Decoded d = decode(bytes);
  ASSERT_TRUE(d.ok) << d.error;
  EXPECT_EQ(d.x[0], 1.0f);
  EXPECT_EQ(d.x[2], 3.0f);
  EXPECT_EQ(d.w[0], 0.5f);  // missing: its default
  EXPECT_EQ(d.w[1], -1.0f);
}

TEST(ExampleDecoder, ContextIsMergedUnderTheExampleAndTheLaterEntryWins) {
  const std::string context = example({{"x", floats({9, 9, 9})}, {"w", floats({7, 8})}});
  Decoded d = decode(example({{"x", floats({1, 2, 3})}}), context);
  ASSERT_TRUE(d.ok) << d.error;
  EXPECT_EQ(d.x[0], 1.0f);  // the example's own x
  EXPECT_EQ(d.w[1], 8.0f);  // w from the context
  // Two Features fields and a repeated key in one buffer: merged, last entry wins.
  const std::string twice = wrap(entry("x", field(2, field(1, f32(1) + f32(1) + f32(1))))) +
                            wrap(entry("x", field(2, field(1, f32(4) + f32(5) + f32(6)))));
  d = decode(twice);
  ASSERT_TRUE(d.ok) << d.error;
  EXPECT_EQ(d.x[0], 4.0f);
  EXPECT_EQ(d.x[2], 6.0f);
}

TEST(ExampleDecoder, MissingFeatureTakesItsDefaultOrIsRefused) {
  Decoded d = decode(example({{"x", floats({1, 2, 3})}, {"other", floats({5})}}));
  ASSERT_TRUE(d.ok) << d.error;
  EXPECT_EQ(d.w[0], 0.5f);
  d = decode(example({{"w", floats({1, 2})}}));
  ASSERT_FALSE(d.ok);
  EXPECT_EQ(d.error, "tf.Example: Feature: x (data type: float) is required but could not be found.");
  // A feature whose kind is unset counts as missing.
  d = decode(example({{"x", tensorflow::Feature()}}));
  ASSERT_FALSE(d.ok);
  EXPECT_NE(d.error.find("is required"), std::string::npos) << d.error;
  d = decode("");  // the empty Example
  EXPECT_FALSE(d.ok);
}

TEST(ExampleDecoder, WrongKindAndWrongLengthAreRefused) {
  tensorflow::Feature ints;
  ints.mutable_int64_list()->add_value(1);
  Decoded d = decode(example({{"x", ints}}));
  ASSERT_FALSE(d.ok);
  EXPECT_EQ(d.error, "tf.Example: Key: x. Data types don't match. Data type: int64 but expected type: float");
  tensorflow::Feature bytes;
  bytes.mutable_bytes_list()->add_value("a");
  d = decode(example({{"x", floats({1, 2, 3})}, {"w", bytes}}));
  ASSERT_FALSE(d.ok);
  EXPECT_NE(d.error.find("Data type: string"), std::string::npos) << d.error;
  d = decode(example({{"x", floats({1, 2})}}));
  ASSERT_FALSE(d.ok);
  EXPECT_EQ(d.error, "tf.Example: Key: x. Number of float values != expected. Values size: 2 but output shape: [3]");
  d = decode(example({{"x", floats({1, 2, 3, 4})}}));
  ASSERT_FALSE(d.ok);
  EXPECT_NE(d.error.find("Values size: 4"), std::string::npos) << d.error;
}

TEST(ExampleDecoder, NonFiniteValuesAreRefusedOnlyWhenAsked) {
  const std::string e = example({{"x", floats({1, NAN, 3})}});
  EXPECT_TRUE(decode(e).ok);
  const Decoded d = decode(e, "", true);
  ASSERT_FALSE(d.ok);
  EXPECT_NE(d.error.find("NaN or Infinity"), std::string::npos) << d.error;
}

TEST(ExampleDecoder, MalformedBytesAreRefusedWithTheirOffset) {
  const std::string good = example({{"x", floats({1, 2, 3})}});
  struct Case {
    std::string bytes;
    const char* message;
  };
  const Case cases[] = {
      {good.substr(0, good.size() - 1), "truncated length-delimited field"},
      {"\x0a\x05\x0a\x03", "truncated length-delimited field (length 5, 2 bytes left) at byte 1"},
      {"\x0a", "truncated varint at byte 1"},
      {std::string("\x10") + std::string(10, '\xff') + "\x01", "varint longer than 10 bytes at byte 1"},
      {std::string("\x10") + std::string(9, '\xff') + "\x7f", "varint overflows 64 bits at byte 1"},
      {"\x08\x01", "field 1 of Example has wire type 0 (varint), expected 2 (length-delimited) at byte 0"},
      {wrap("\x0d\x00\x00\x00\x00"), "field 1 of Features has wire type 5 (32-bit)"},
      {wrap(field(1, "\x10\x01")), "field 2 of a Features map entry has wire type 0"},
      {wrap(entry("x", "\x10\x01")), "field 2 of Feature has wire type 0"},
      {wrap(entry("x", field(2, "\x08\x01"))), "field 1 of FloatList has wire type 0"},
      {wrap(entry("x", field(2, field(1, "abcde")))), "packed FloatList of 5 bytes (not a multiple of 4)"},
      {wrap(entry("x", field(2, "\x0d\x00\x00"))), "truncated float value"},
      {"\x13\x14", "unsupported wire type 3 (start group) at byte 0"},
      {"\x17", "unsupported wire type 6 or 7 (invalid) at byte 0"},
      {"\x02\x00", "invalid field number 0 at byte 0"},
      {"\x11\x00\x00", "truncated 64-bit field at byte 0"},
      {"\x1d\x00", "truncated 32-bit field at byte 0"},
  };
  for (const Case& c : cases) {
    const Decoded d = decode(c.bytes);
    ASSERT_FALSE(d.ok) << c.message;
    EXPECT_EQ(d.error.rfind("tf.Example: ", 0), 0u) << d.error;
    EXPECT_NE(d.error.find(c.message), std::string::npos) << "got: " << d.error;
  }
  // A malformed context is named as the context.
  const Decoded d = decode(good, "\x0a\x09");
  ASSERT_FALSE(d.ok);
  EXPECT_EQ(d.error.rfind("tf.Example context: truncated", 0), 0u) << d.error;
}

TEST(ExampleJson, JsonBecomesTheExamplesTfServingBuilds) {
  tickinfer::serving::JsonDocument doc;
  ASSERT_TRUE(doc.parse(R"({"signature_name": "s", "context": {"w": [0.25, 4.0]},
                            "examples": [{"x": [1.5, 2.0, -3e2], "n": [1, 2], "b": {"b64": "aGk="}, "t": "str"}]})"));
  tickinfer::serving::ExampleRequest req;
  std::string error;
  ASSERT_TRUE(tickinfer::serving::decode_example_request_json(doc, 8, req, error)) << error;
  EXPECT_EQ(req.signature_name, "s");
  ASSERT_EQ(req.examples.size(), 1u);
  tensorflow::Example e, ctx;  // read back by libprotobuf, the independent parser
  ASSERT_TRUE(e.ParseFromString(req.examples[0]));
  ASSERT_TRUE(ctx.ParseFromString(req.context));
  const auto& f = e.features().feature();
  ASSERT_EQ(f.at("x").float_list().value_size(), 3);
  EXPECT_EQ(f.at("x").float_list().value(2), -300.0f);
  EXPECT_EQ(f.at("n").int64_list().value(1), 2);  // integers become int64_list, as in TF Serving
  EXPECT_EQ(f.at("b").bytes_list().value(0), "hi");
  EXPECT_EQ(f.at("t").bytes_list().value(0), "str");
  EXPECT_EQ(ctx.features().feature().at("w").float_list().value(0), 0.25f);
  // The decoder merges the context under the example.
  Decoded d;
  ExampleScratch scratch;
  float* out[] = {d.x, d.w};
  EXPECT_TRUE(decode_example(req.context, req.examples[0], specs(), {}, scratch, out, d.error)) << d.error;
  EXPECT_EQ(d.w[1], 4.0f);

  const char* bad[][2] = {
      {R"({"examples": [{"x": [1, 2.5]}]})", "Unexpected element type in feature: x expecting type: int64"},
      {R"({"examples": [{"x": [[1.0]]}]})", "has element with unexpected JSON type"},
      {R"({"examples": [{"x": null}]})", "has element with unexpected JSON type: null"},
      {R"({"examples": [{"x": 18446744073709551615}]})", "has uint64 element. Only int64 is supported."},
      {R"({"examples": [{"x": 1e300}]})", "without loss of precision"},
      {R"({"examples": [{"x": {"b64": "!!"}}]})", "Unable to base64 decode"},
      {R"({"examples": [[1.0]]})", "Example must be JSON object"},
      {R"({"examples": []})", "'examples' value is an empty array"},
      {R"({"examples": {}})", "Expecting 'examples' value to be an list/array"},
      {R"({"instances": []})", "key 'examples' is expected and was not found"},
      {R"({"signature_name": 3, "examples": [{}]})", "'signature_name' key must be a string value."},
      {R"({"examples": [{}, {}, {}, {}, {}, {}, {}, {}, {}]})", "exceeds this server's limit of 8"},
  };
  for (const auto& b : bad) {
    ASSERT_TRUE(doc.parse(b[0])) << b[0];
    EXPECT_FALSE(tickinfer::serving::decode_example_request_json(doc, 8, req, error)) << b[0];
    EXPECT_NE(error.find(b[1]), std::string::npos) << b[0] << " -> " << error;
  }
}

TEST(ExampleJson, ResponsesAreWrittenAsTfServingPrettyPrintsThem) {
  std::string body;
  const float scores[] = {0.25f, 0.75f, 1.0f, 0.0f};
  tickinfer::serving::encode_classify_response_json(2, 2, {"a", "b"}, scores, body);
  EXPECT_EQ(body, "{\n    \"results\": [\n        [[\"a\", 0.25], [\"b\", 0.75]],\n        [[\"a\", 1.0], [\"b\", 0.0]]\n    ]\n}");
  tickinfer::serving::encode_classify_response_json(1, 2, {}, scores, body);
  EXPECT_EQ(body, "{\n    \"results\": [\n        [[\"\", 0.25], [\"\", 0.75]]\n    ]\n}");
  tickinfer::serving::encode_regress_response_json(2, scores, body);
  EXPECT_EQ(body, "{\n    \"results\": [0.25, 0.75]\n}");
}

}  // namespace
