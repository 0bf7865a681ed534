// libFuzzer: arbitrary bytes as a capture file. Bad headers are a tickinfer::Error; anything after
// the header is recovered or reported, never a crash or an out-of-bounds read.
#include <cstddef>
#include <cstdint>

#include "feed/capture_file.hpp"
#include "tickinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto c = tickinfer::feed::parse_capture(data, size, "fuzz");
    std::size_t total = 0;
    for (const auto& r : c.records) total += 24 + r.payload.size();
    if (total + c.skipped_bytes > size) __builtin_trap();
  } catch (const tickinfer::Error&) {
  }
  return 0;
}
