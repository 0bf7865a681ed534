#include "serving/json_dom.hpp"

#include <charconv>
#include <cmath>
#include <limits>

namespace tickinfer::serving {

namespace {
constexpr int kMaxDepth = 128;
}

const char* json_type_name(JsonType t) {
  switch (t) {
    case JsonType::Null: return "null";
    case JsonType::Bool: return "a boolean";
    case JsonType::Number: return "a number";
    case JsonType::String: return "a string";
    case JsonType::Array: return "an array";
    case JsonType::Object: return "an object";
  }
  return "?";
}

bool JsonDocument::fail(const char* what) {
  error_ = "offset " + std::to_string(pos_) + ": " + what;
  return false;
}

void JsonDocument::skip_ws() {
  while (pos_ < t_.size()) {
    const char c = t_[pos_];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    ++pos_;
  }
}

bool JsonDocument::parse(std::string_view text) {
  nodes_.clear();
  strings_.clear();
  error_.clear();
  t_ = text;
  pos_ = 0;
  skip_ws();
  if (!value(0)) return false;
  skip_ws();
  if (pos_ != t_.size()) return fail("unexpected data after the JSON value");
  return true;
}

const JsonNode* JsonDocument::member(const JsonNode& obj, std::string_view key) const {
  if (obj.type != JsonType::Object) return nullptr;
  for (const JsonNode* c = first(obj); c; c = next(*c)) {
    if (key_of(*c) == key) return c;
  }
  return nullptr;
}

static void put_utf8(std::string& s, uint32_t cp) {
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool JsonDocument::string_into(uint32_t& off, uint32_t& len) {
  // pos_ is at the opening quote.
  ++pos_;
  off = static_cast<uint32_t>(strings_.size());
  for (;;) {
    if (pos_ >= t_.size()) return fail("unterminated string");
    const char c = t_[pos_];
    if (c == '"') {
      ++pos_;
      break;
    }
    if (static_cast<unsigned char>(c) < 0x20) return fail("control character in string");
    if (c != '\\') {
      strings_ += c;
      ++pos_;
      continue;
    }
    if (pos_ + 1 >= t_.size()) return fail("unterminated escape");
    const char e = t_[pos_ + 1];
    pos_ += 2;
    switch (e) {
      case '"': strings_ += '"'; break;
      case '\\': strings_ += '\\'; break;
      case '/': strings_ += '/'; break;
      case 'b': strings_ += '\b'; break;
      case 'f': strings_ += '\f'; break;
      case 'n': strings_ += '\n'; break;
      case 'r': strings_ += '\r'; break;
      case 't': strings_ += '\t'; break;
      case 'u': {
        auto hex4 = [&](uint32_t& v) {
          if (pos_ + 4 > t_.size()) return false;
          v = 0;
          for (int k = 0; k < 4; ++k) {
            const char h = t_[pos_ + k];
            v <<= 4;
            if (h >= '0' && h <= '9') v |= h - '0';
            else if (h >= 'a' && h <= 'f') v |= h - 'a' + 10;
            else if (h >= 'A' && h <= 'F') v |= h - 'A' + 10;
            else return false;
          }
          pos_ += 4;
          return true;
        };
        uint32_t cp = 0;
        if (!hex4(cp)) return fail("bad \\u escape");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t lo = 0;
          if (pos_ + 2 > t_.size() || t_[pos_] != '\\' || t_[pos_ + 1] != 'u') {
            return fail("unpaired surrogate in \\u escape");
          }
          pos_ += 2;
          if (!hex4(lo) || lo < 0xDC00 || lo > 0xDFFF) return fail("bad low surrogate");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return fail("unpaired surrogate in \\u escape");
        }
        put_utf8(strings_, cp);
        break;
      }
      default:
        return fail("unknown escape in string");
    }
  }
  len = static_cast<uint32_t>(strings_.size() - off);
  return true;
}

bool JsonDocument::value(int depth) {
  if (depth > kMaxDepth) return fail("nesting deeper than 128 levels");
  skip_ws();
  if (pos_ >= t_.size()) return fail("unexpected end of input, expected a value");
  const uint32_t self = static_cast<uint32_t>(nodes_.size());
  nodes_.emplace_back();
  const char c = t_[pos_];
  auto word = [&](std::string_view w) {
    if (t_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  };
  if (c == '{' || c == '[') {
    const bool obj = c == '{';
    nodes_[self].type = obj ? JsonType::Object : JsonType::Array;
    ++pos_;
    skip_ws();
    const char close = obj ? '}' : ']';
    if (pos_ < t_.size() && t_[pos_] == close) {
      ++pos_;
      return true;
    }
    uint32_t prev = 0;
    uint32_t count = 0;
    for (;;) {
      uint32_t koff = 0, klen = 0;
      if (obj) {
        skip_ws();
        if (pos_ >= t_.size() || t_[pos_] != '"') return fail("expected a string key in object");
        if (!string_into(koff, klen)) return false;
        skip_ws();
        if (pos_ >= t_.size() || t_[pos_] != ':') return fail("expected ':' after object key");
        ++pos_;
      }
      const uint32_t child = static_cast<uint32_t>(nodes_.size());
      if (!value(depth + 1)) return false;
      nodes_[child].key_off = koff;
      nodes_[child].key_len = klen;
      if (prev) nodes_[prev].next_sibling = child;
      else nodes_[self].first_child = child;
      prev = child;
      ++count;
      skip_ws();
      if (pos_ >= t_.size()) return fail(obj ? "unterminated object" : "unterminated array");
      if (t_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (t_[pos_] == close) {
        ++pos_;
        break;
      }
      return fail(obj ? "expected ',' or '}' in object" : "expected ',' or ']' in array");
    }
    nodes_[self].size = count;
    return true;
  }
  if (c == '"') {
    nodes_[self].type = JsonType::String;
    uint32_t off = 0, len = 0;
    if (!string_into(off, len)) return false;
    nodes_[self].str_off = off;
    nodes_[self].str_len = len;
    return true;
  }
  if (word("true")) {
    nodes_[self].type = JsonType::Bool;
    nodes_[self].boolean = true;
    return true;
  }
  if (word("false")) {
    nodes_[self].type = JsonType::Bool;
    return true;
  }
  if (word("null")) return true;
  nodes_[self].type = JsonType::Number;
  if (word("NaN")) {
    nodes_[self].number = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (word("Infinity")) {
    nodes_[self].number = std::numeric_limits<double>::infinity();
    return true;
  }
  if (word("-Infinity")) {
    nodes_[self].number = -std::numeric_limits<double>::infinity();
    return true;
  }
  // Strict JSON number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  const size_t start = pos_;
  size_t p = pos_;
  auto digit = [&](size_t i) { return i < t_.size() && t_[i] >= '0' && t_[i] <= '9'; };
  if (p < t_.size() && t_[p] == '-') ++p;
  if (!digit(p)) return fail("invalid value");
  if (t_[p] == '0') {
    ++p;
  } else {
    while (digit(p)) ++p;
  }
  const size_t int_end = p;
  if (p < t_.size() && t_[p] == '.') {
    ++p;
    if (!digit(p)) return fail("invalid number: digits expected after '.'");
    while (digit(p)) ++p;
  }
  if (p < t_.size() && (t_[p] == 'e' || t_[p] == 'E')) {
    ++p;
    if (p < t_.size() && (t_[p] == '+' || t_[p] == '-')) ++p;
    if (!digit(p)) return fail("invalid number: digits expected in exponent");
    while (digit(p)) ++p;
  }
  double v = 0;
  const auto r = std::from_chars(t_.data() + start, t_.data() + p, v);
  if (r.ec == std::errc::result_out_of_range) {
    // from_chars leaves v unchanged on overflow; JSON readers give +-inf (or 0 on underflow).
    const bool neg = t_[start] == '-';
    bool tiny = false;
    for (size_t i = start; i < p; ++i) {
      if ((t_[i] == 'e' || t_[i] == 'E') && i + 1 < p && t_[i + 1] == '-') tiny = true;
    }
    v = tiny ? (neg ? -0.0 : 0.0)
             : (neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity());
  } else if (r.ec != std::errc()) {
    return fail("invalid number");
  }
  nodes_[self].number = v;
  if (int_end == p) {
    int64_t i = 0;
    uint64_t u = 0;
    if (std::from_chars(t_.data() + start, t_.data() + p, i).ec == std::errc()) {
      nodes_[self].integer = 1;
      nodes_[self].int_value = i;
    } else if (t_[start] != '-' && std::from_chars(t_.data() + start, t_.data() + p, u).ec == std::errc()) {
      nodes_[self].integer = 2;
    }
  }
  pos_ = p;
  return true;
}

}  // namespace tickinfer::serving
