// libFuzzer: the `tickinfer run` configuration parser on arbitrary text: a configuration or a
// tickinfer::Error, never a crash.
#include <cstdint>
#include <string_view>

#include "pipeline/config.hpp"
#include "tickinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    tickinfer::pipeline::parse_pipeline_config(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const tickinfer::Error&) {
  }
  return 0;
}
