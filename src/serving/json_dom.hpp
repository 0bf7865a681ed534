#pragma once
// A strict JSON parser into a flat, reusable node array, for request bodies.
//
// Accepts RFC 8259 JSON plus the tokens NaN, Infinity and -Infinity as numbers (TF Serving's
// REST API accepts them). Numbers are parsed to double with std::from_chars (exact rounding).
// Strings are unescaped (\uXXXX including surrogate pairs, to UTF-8) into a buffer owned by
// the document. Limits: nesting depth 128; no input size limit of its own (the HTTP layer caps
// the body). A JsonDocument is reused across requests: parse() clears it but keeps its
// capacity, so a warmed-up worker parses without allocating.
//
// Errors: parse() returns false and sets error() to "offset N: what is wrong"; it never throws
// and never reads past `text`.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tickinfer::serving {

enum class JsonType : uint8_t { Null, Bool, Number, String, Array, Object };

struct JsonNode {
  JsonType type = JsonType::Null;
  bool boolean = false;
  double number = 0;
  // Number tokens without a fraction or exponent, as rapidjson tells them apart (TF Serving's
  // classify / regress JSON makes int64_list features of them): 1 = fits int64 (int_value),
  // 2 = fits uint64 only; 0 = a decimal (or NaN / Infinity, or beyond uint64).
  uint8_t integer = 0;
  int64_t int_value = 0;
  uint32_t str_off = 0, str_len = 0;  // String value (into strings()); Object member key
  uint32_t key_off = 0, key_len = 0;  // key of this node when it is an object member
  uint32_t first_child = 0;           // 0 = none (node 0 is always the root)
  uint32_t next_sibling = 0;          // 0 = none
  uint32_t size = 0;                  // Array/Object: number of children
};

class JsonDocument {
 public:
  bool parse(std::string_view text);
  const std::string& error() const { return error_; }

  const JsonNode& root() const { return nodes_[0]; }
  const JsonNode& node(uint32_t i) const { return nodes_[i]; }
  uint32_t index_of(const JsonNode& n) const { return static_cast<uint32_t>(&n - nodes_.data()); }
  std::string_view string_of(const JsonNode& n) const { return {strings_.data() + n.str_off, n.str_len}; }
  std::string_view key_of(const JsonNode& n) const { return {strings_.data() + n.key_off, n.key_len}; }
  // The member of object `obj` with key `key`, or nullptr.
  const JsonNode* member(const JsonNode& obj, std::string_view key) const;
  const JsonNode* first(const JsonNode& n) const { return n.first_child ? &nodes_[n.first_child] : nullptr; }
  const JsonNode* next(const JsonNode& n) const { return n.next_sibling ? &nodes_[n.next_sibling] : nullptr; }

 private:
  bool value(int depth);
  bool string_into(uint32_t& off, uint32_t& len);
  bool fail(const char* what);
  void skip_ws();

  std::vector<JsonNode> nodes_;
  std::string strings_;
  std::string error_;
  std::string_view t_;
  size_t pos_ = 0;
};

const char* json_type_name(JsonType t);

}  // namespace tickinfer::serving
