// libFuzzer: the request log reader (`tickinfer replay`'s input). Any bytes after the file magic
// must end in records or a reported torn tail, never a crash; a payload decodes or is refused.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "serving/request_log_format.hpp"
#include "tickinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tickinfer::serving;
  try {
    const RequestLogContents c = parse_request_log(data, size, "fuzz");
    if (c.good_bytes + c.tail_bytes != size && c.torn_tail) __builtin_trap();
    for (const auto& r : c.requests) {
      for (const auto& t : r.inputs) {
        if (r.has_inputs && t.values.size() != size_t{r.batch} * t.floats_per_row) __builtin_trap();
      }
    }
  } catch (const tickinfer::Error&) {
  }
  // The same bytes as a payload (the reader checks the checksum first; this skips it).
  LoggedRequest r;
  std::string error;
  if (!decode_logged_request(data, size, r, error) && error.empty()) __builtin_trap();
  return 0;
}
