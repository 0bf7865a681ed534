#pragma once
// Bounded JSON parsing and checked accessors for Keras configs.
//
// Keras configs come from untrusted files, so every accessor checks the JSON type and range and
// throws tickinfer::Error with the caller's context ("model.keras: layer 'dense' (Dense)") and
// the key. Nothing here converts out-of-range numbers silently (nlohmann's get<int>() would).
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tickinfer::formats {

// Deepest nesting accepted in a config document. Real Keras configs stay under ~12 levels.
inline constexpr int kMaxJsonDepth = 64;

// Parses `text` as JSON; throws Error naming `what` (e.g. "model.keras: config.json") on a
// syntax error or nesting deeper than kMaxJsonDepth.
nlohmann::json parse_json_bounded(std::string_view text, const std::string& what);

// Accessors on an object `obj`. `ctx` prefixes error messages. A missing key or JSON null
// yields the fallback; a present value of the wrong type or outside [lo, hi] throws.
bool json_bool(const nlohmann::json& obj, const char* key, bool fallback, const std::string& ctx);
int json_int(const nlohmann::json& obj, const char* key, int fallback, int lo, int hi,
             const std::string& ctx);
float json_float(const nlohmann::json& obj, const char* key, float fallback, const std::string& ctx);
std::string json_string(const nlohmann::json& obj, const char* key, const std::string& fallback,
                        const std::string& ctx);

// An integer that Keras writes either as a scalar or as a 1-element list (kernel_size: 3 or [3]).
int json_int_or_single_list(const nlohmann::json& obj, const char* key, int fallback, int lo, int hi,
                            const std::string& ctx);

// Converts one JSON value (not a key lookup) to an int in [lo, hi]; `what` names it in errors.
int json_value_int(const nlohmann::json& value, int lo, int hi, const std::string& what);

// A short, single-line rendering of `value` for error messages (truncated to ~80 chars).
std::string json_brief(const nlohmann::json& value);

}  // namespace tickinfer::formats
