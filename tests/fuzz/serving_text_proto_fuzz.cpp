// libFuzzer: the config text-proto parser and the three config readers on arbitrary bytes.
// Anything may be refused with tickinfer::Error; nothing may crash, hang or leak.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "serving/server_config.hpp"
#include "tickinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try { tickinfer::serving::parse_model_server_config(text, "fuzz"); } catch (const tickinfer::Error&) {}
  try { tickinfer::serving::parse_monitoring_config(text, "fuzz"); } catch (const tickinfer::Error&) {}
  try { tickinfer::serving::parse_batching_parameters(text, "fuzz"); } catch (const tickinfer::Error&) {}
  return 0;
}
