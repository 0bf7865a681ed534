#include "formats/keras/keras_json.hpp"

#include <cmath>
#include <limits>

#include "tickinfer/error.hpp"

namespace tickinfer::formats {

using nlohmann::json;

json parse_json_bounded(std::string_view text, const std::string& what) {
  // The callback sees the depth of every value as it is parsed, so a hostile document is
  // rejected before it can nest far enough to matter to any recursive walker.
  json::parser_callback_t limit_depth = [&what](int depth, json::parse_event_t, json&) {
    if (depth > kMaxJsonDepth) {
      throw Error(what + ": JSON nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), limit_depth);
  } catch (const json::exception& e) {
    throw Error(what + ": invalid JSON: " + e.what());
  }
}

static const json* find_value(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

bool json_bool(const json& obj, const char* key, bool fallback, const std::string& ctx) {
  const json* v = find_value(obj, key);
  if (!v) return fallback;
  if (!v->is_boolean()) throw Error(ctx + ": '" + key + "' must be a boolean, got " + json_brief(*v));
  return v->get<bool>();
}

int json_value_int(const json& value, int lo, int hi, const std::string& what) {
  if (value.is_number_integer()) {
    if (value.is_number_unsigned()) {
      uint64_t u = value.get<uint64_t>();
      if (u <= static_cast<uint64_t>(hi) && static_cast<int64_t>(u) >= lo) return static_cast<int>(u);
    } else {
      int64_t s = value.get<int64_t>();
      if (s >= lo && s <= hi) return static_cast<int>(s);
    }
  } else if (value.is_number_float()) {
    // Accept integral floats (2.0) but never cast an out-of-range double (undefined behaviour).
    double d = value.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && d >= lo && d <= hi) return static_cast<int>(d);
  }
  throw Error(what + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
              "], got " + json_brief(value));
}

int json_int(const json& obj, const char* key, int fallback, int lo, int hi, const std::string& ctx) {
  const json* v = find_value(obj, key);
  if (!v) return fallback;
  return json_value_int(*v, lo, hi, ctx + ": '" + key + "'");
}

int json_int_or_single_list(const json& obj, const char* key, int fallback, int lo, int hi,
                            const std::string& ctx) {
  const json* v = find_value(obj, key);
  if (!v) return fallback;
  if (v->is_array()) {
    if (v->size() != 1) {
      throw Error(ctx + ": '" + key + "' must have exactly one element, got " + json_brief(*v));
    }
    return json_value_int((*v)[0], lo, hi, ctx + ": '" + key + "'");
  }
  return json_value_int(*v, lo, hi, ctx + ": '" + key + "'");
}

float json_float(const json& obj, const char* key, float fallback, const std::string& ctx) {
  const json* v = find_value(obj, key);
  if (!v) return fallback;
  if (!v->is_number()) throw Error(ctx + ": '" + key + "' must be a number, got " + json_brief(*v));
  double d = v->get<double>();
  if (!std::isfinite(d) || std::fabs(d) > std::numeric_limits<float>::max()) {
    throw Error(ctx + ": '" + key + "' is not a finite float32, got " + json_brief(*v));
  }
  return static_cast<float>(d);
}

std::string json_string(const json& obj, const char* key, const std::string& fallback,
                        const std::string& ctx) {
  const json* v = find_value(obj, key);
  if (!v) return fallback;
  if (!v->is_string()) throw Error(ctx + ": '" + key + "' must be a string, got " + json_brief(*v));
  return v->get<std::string>();
}

std::string json_brief(const json& value) {
  std::string s = value.dump(-1, ' ', true, json::error_handler_t::replace);
  constexpr size_t kMax = 80;
  if (s.size() > kMax) s = s.substr(0, kMax) + "...";
  return s;
}

}  // namespace tickinfer::formats
