// libFuzzer: tensorflow_model_server's command line (one argument per input line) and the
// --grpc_channel_arguments list on arbitrary bytes. Anything may be refused with
// tickinfer::Error; nothing may crash, hang or leak.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "serving/server_flags.hpp"
#include "tickinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == '\n') {
      args.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  try { tickinfer::serving::parse_server_flags(args); } catch (const tickinfer::Error&) {}
  try { tickinfer::serving::parse_grpc_channel_arguments(text); } catch (const tickinfer::Error&) {}
  return 0;
}
