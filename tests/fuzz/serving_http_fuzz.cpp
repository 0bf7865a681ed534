// libFuzzer: the HTTP/1.1 request parser on arbitrary bytes, including pipelined requests:
// every view it returns must lie inside the input and `consumed` must never exceed it.
#include <cstddef>
#include <cstdint>

#include "serving/http1/http_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tickinfer::serving;
  const char* p = reinterpret_cast<const char*>(data);
  HttpLimits limits;
  limits.max_header_bytes = 1024;
  limits.max_body_bytes = 4096;
  size_t offset = 0;
  for (int i = 0; i < 64 && offset <= size; ++i) {
    HttpRequest req;
    const ParseResult r = parse_http_request(p + offset, size - offset, limits, req);
    auto inside = [&](std::string_view v) {
      if (!v.empty() && (v.data() < p + offset || v.data() + v.size() > p + size)) __builtin_trap();
    };
    inside(req.method);
    inside(req.target);
    inside(req.body);
    inside(req.authorization);
    if (r.status != ParseStatus::Complete) break;
    if (r.consumed == 0 || r.consumed > size - offset) __builtin_trap();
    offset += r.consumed;
  }
  return 0;
}
