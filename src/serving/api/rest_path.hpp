#pragma once
// The REST request path after "/v1/models/": name[/versions/N|/labels/L][/metadata][:verb],
// parsed into views of the request (no allocation).
#include <cstdint>
#include <string>
#include <string_view>

namespace tickinfer::serving {

struct ModelPath {
  std::string_view name, label, verb;  // raw (still %-escaped) name and label
  bool has_version = false, has_label = false, metadata = false;
  int64_t version = 0;
};

enum class ModelPathParse {
  Ok,
  Malformed,        // 404 "Malformed request"
  BadVersion,       // 400 "Failed to convert version to int64"
  VersionAndLabel,  // 400: a request names a version or a label, not both
};

// `post`: the path ends in ":verb" (and never in /metadata).
ModelPathParse parse_model_path(std::string_view path, bool post, ModelPath& out);

// Case-insensitive prefix test; strips the prefix from `s` when it matches.
bool consume_prefix(std::string_view& s, std::string_view prefix);

// URL-decodes %XX (and keeps '+' as is, like curl_easy_unescape). False on a bad escape.
bool url_decode(std::string_view in, std::string& out);

}  // namespace tickinfer::serving
