#include "serving/api/rest_path.hpp"

#include <charconv>

#include "serving/http1/http_parser.hpp"  // iequals

namespace tickinfer::serving {

bool consume_prefix(std::string_view& s, std::string_view prefix) {
  if (s.size() < prefix.size() || !iequals(s.substr(0, prefix.size()), prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}

namespace {

int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool url_decode(std::string_view in, std::string& out) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%') {
      if (i + 2 >= in.size()) return false;
      const int a = hexval(in[i + 1]), b = hexval(in[i + 2]);
      if (a < 0 || b < 0) return false;
      out += static_cast<char>(a * 16 + b);
      i += 2;
    } else {
      out += in[i];
    }
  }
  return true;
}

ModelPathParse parse_model_path(std::string_view p, bool post, ModelPath& m) {
  if (post) {
    const size_t colon = p.rfind(':');
    if (colon == std::string_view::npos) return ModelPathParse::Malformed;
    m.verb = p.substr(colon + 1);
    p = p.substr(0, colon);
  }
  size_t slash = p.find('/');
  m.name = p.substr(0, slash);
  if (m.name.empty() || m.name.find(':') != std::string_view::npos) return ModelPathParse::Malformed;
  p = slash == std::string_view::npos ? std::string_view{} : p.substr(slash);
  if (!post && p.size() >= 9 && iequals(p.substr(p.size() - 9), "/metadata")) {
    m.metadata = true;
    p.remove_suffix(9);
  }
  while (!p.empty()) {
    std::string_view rest = p;
    if (consume_prefix(rest, "/versions/")) {
      if (m.has_version || m.has_label) return ModelPathParse::VersionAndLabel;
      slash = rest.find('/');
      const std::string_view v = rest.substr(0, slash);
      if (v.empty()) return ModelPathParse::Malformed;
      for (char c : v) {
        if (c < '0' || c > '9') return ModelPathParse::Malformed;
      }
      const auto r = std::from_chars(v.data(), v.data() + v.size(), m.version);
      if (r.ec != std::errc()) return ModelPathParse::BadVersion;
      m.has_version = true;
      p = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
    } else if (consume_prefix(rest, "/labels/")) {
      if (m.has_version || m.has_label) return ModelPathParse::VersionAndLabel;
      slash = rest.find('/');
      m.label = rest.substr(0, slash);
      if (m.label.empty() || m.label.find(':') != std::string_view::npos) return ModelPathParse::Malformed;
      m.has_label = true;
      p = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
    } else {
      return ModelPathParse::Malformed;
    }
  }
  return ModelPathParse::Ok;
}

}  // namespace tickinfer::serving
