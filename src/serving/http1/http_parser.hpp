#pragma once
// A strict HTTP/1.1 request parser for the REST port. It parses one request at the start of a
// buffer of received bytes, without copying (every field is a view into the buffer) and
// without allocating, and tells the caller whether the request is complete, needs more bytes,
// or is malformed (with the HTTP status to answer and a message).
//
// Accepted: `METHOD SP origin-form SP HTTP/1.0|HTTP/1.1 CRLF`, header fields `name: value CRLF`
// (token names, no obs-fold), a blank line, and a body of exactly Content-Length bytes.
// Refused: bare LF line ends, header blocks over max_header_bytes (431), bodies over
// max_body_bytes (413), Transfer-Encoding (501: chunked bodies are not accepted), conflicting
// or malformed Content-Length (400), anything else malformed (400).
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tickinfer::serving {

struct HttpRequest {
  std::string_view method;
  std::string_view target;        // as sent (path and optional ?query)
  std::string_view path;          // target without the query
  std::string_view body;
  std::string_view authorization;  // value of Authorization, if any
  std::string_view origin;         // value of Origin, if any
  int version_minor = 1;           // HTTP/1.x
  bool keep_alive = true;          // after Connection and the version's default
  bool expect_continue = false;    // Expect: 100-continue
  size_t content_length = 0;
  size_t header_bytes = 0;         // request line + headers + blank line
};

enum class ParseStatus { NeedMore, HeadersDone, Complete, Error };

struct ParseResult {
  ParseStatus status = ParseStatus::NeedMore;
  int http_status = 0;        // Error: the status to answer
  const char* message = "";   // Error: why (a static string)
  size_t consumed = 0;        // Complete: bytes of this request (headers + body)
};

struct HttpLimits {
  size_t max_header_bytes = 16 * 1024;
  size_t max_body_bytes = 4 * 1024 * 1024;
};

// Parses data[0, size). HeadersDone means the header block is complete and valid but the body
// is not all there yet (req's header fields are filled: the caller may answer 100 Continue).
ParseResult parse_http_request(const char* data, size_t size, const HttpLimits& limits,
                               HttpRequest& req) noexcept;

// Case-insensitive ASCII comparison.
bool iequals(std::string_view a, std::string_view b) noexcept;

}  // namespace tickinfer::serving
