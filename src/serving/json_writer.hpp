#pragma once
// Appending JSON text to a reused std::string (no allocation once its capacity has grown).
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

namespace tickinfer::serving {

// A float as TF Serving writes it: the shortest text that reads back to the same float, with
// ".0" appended to a whole number not already in exponent form; NaN, Infinity, -Infinity for
// non-finite values (not strict JSON, as in TF Serving).
inline void append_json_float(std::string& out, float v) {
  if (std::isnan(v)) {
    out += "NaN";
    return;
  }
  if (std::isinf(v)) {
    out += v > 0 ? "Infinity" : "-Infinity";
    return;
  }
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  bool plain_int = true;
  for (const char* p = buf; p != r.ptr; ++p) {
    if (*p == '.' || *p == 'e' || *p == 'E') plain_int = false;
  }
  out.append(buf, r.ptr);
  if (plain_int) out += ".0";
}

inline void append_json_int(std::string& out, int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// A JSON string literal with the required escapes.
inline void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static const char hex[] = "0123456789abcdef";
          out += "\\u00";
          out += hex[(c >> 4) & 0xf];
          out += hex[c & 0xf];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

}  // namespace tickinfer::serving
