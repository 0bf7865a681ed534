#include "serving/http1/http_parser.hpp"

namespace tickinfer::serving {

namespace {

bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-':
    case '.': case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
  }
}

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

ParseResult error(int status, const char* message) {
  ParseResult r;
  r.status = ParseStatus::Error;
  r.http_status = status;
  r.message = message;
  return r;
}

std::string_view trim(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

// True if the comma-separated list `v` holds `token` (case-insensitive).
bool has_token(std::string_view v, std::string_view token) {
  while (!v.empty()) {
    const size_t comma = v.find(',');
    const std::string_view item = trim(v.substr(0, comma));
    if (iequals(item, token)) return true;
    if (comma == std::string_view::npos) break;
    v.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

ParseResult parse_http_request(const char* data, size_t size, const HttpLimits& limits,
                               HttpRequest& req) noexcept {
  req = HttpRequest{};
  const std::string_view all(data, size);
  // Find the end of the header block; refuse bare LF anywhere in it.
  const size_t scan = size < limits.max_header_bytes ? size : limits.max_header_bytes;
  size_t end = std::string_view::npos;
  for (size_t i = 0; i < scan; ++i) {
    if (data[i] == '\n') {
      if (i == 0 || data[i - 1] != '\r') return error(400, "line ends must be CRLF");
      if (i >= 3 && data[i - 2] == '\n' && data[i - 3] == '\r') {
        end = i + 1;
        break;
      }
    }
  }
  if (end == std::string_view::npos) {
    if (size >= limits.max_header_bytes) return error(431, "request header block too large");
    // Reject obviously bad request lines early, before the whole header arrives.
    for (size_t i = 0; i < size && data[i] != ' '; ++i) {
      if (!is_tchar(data[i])) return error(400, "malformed request line");
    }
    return ParseResult{};
  }
  req.header_bytes = end;
  std::string_view head = all.substr(0, end - 2);  // without the final blank line's CRLF

  // Request line.
  size_t eol = head.find("\r\n");
  std::string_view line = head.substr(0, eol);
  const size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos || sp1 == 0) return error(400, "malformed request line");
  req.method = line.substr(0, sp1);
  for (char c : req.method) {
    if (!is_tchar(c)) return error(400, "malformed method");
  }
  const size_t sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return error(400, "malformed request line");
  req.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (req.target.empty() || req.target[0] != '/') return error(400, "request target must be a path");
  for (char c : req.target) {
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      return error(400, "invalid character in request target");
    }
  }
  req.path = req.target.substr(0, req.target.find('?'));
  const std::string_view version = line.substr(sp2 + 1);
  if (version == "HTTP/1.1") {
    req.version_minor = 1;
  } else if (version == "HTTP/1.0") {
    req.version_minor = 0;
  } else {
    return error(505, "only HTTP/1.0 and HTTP/1.1 are supported");
  }
  req.keep_alive = req.version_minor == 1;

  bool has_length = false;
  std::string_view rest = eol == std::string_view::npos ? std::string_view{} : head.substr(eol + 2);
  while (!rest.empty()) {
    eol = rest.find("\r\n");
    line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view{} : rest.substr(eol + 2);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return error(400, "malformed header field");
    const std::string_view name = line.substr(0, colon);
    for (char c : name) {
      if (!is_tchar(c)) return error(400, "malformed header field name");
    }
    const std::string_view value = trim(line.substr(colon + 1));
    for (char c : value) {
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) {
        return error(400, "control character in header value");
      }
    }
    if (iequals(name, "content-length")) {
      if (value.empty() || value.size() > 18) return error(400, "malformed Content-Length");
      size_t n = 0;
      for (char c : value) {
        if (c < '0' || c > '9') return error(400, "malformed Content-Length");
        n = n * 10 + static_cast<size_t>(c - '0');
      }
      if (has_length && n != req.content_length) return error(400, "conflicting Content-Length headers");
      has_length = true;
      req.content_length = n;
    } else if (iequals(name, "transfer-encoding")) {
      return error(501, "Transfer-Encoding is not supported; send a Content-Length");
    } else if (iequals(name, "connection")) {
      if (has_token(value, "close")) req.keep_alive = false;
      else if (has_token(value, "keep-alive")) req.keep_alive = true;
    } else if (iequals(name, "authorization")) {
      req.authorization = value;
    } else if (iequals(name, "origin")) {
      req.origin = value;
    } else if (iequals(name, "expect")) {
      if (!iequals(value, "100-continue")) return error(417, "unsupported Expect value");
      req.expect_continue = true;
    }
  }
  if (req.content_length > limits.max_body_bytes) return error(413, "request body too large");
  if (size - end < req.content_length) {
    ParseResult r;
    r.status = ParseStatus::HeadersDone;
    return r;
  }
  req.body = all.substr(end, req.content_length);
  ParseResult r;
  r.status = ParseStatus::Complete;
  r.consumed = end + req.content_length;
  return r;
}

}  // namespace tickinfer::serving
