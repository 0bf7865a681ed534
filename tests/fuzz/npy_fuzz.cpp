// libFuzzer target: arbitrary bytes as a .npy file. Parsing must either succeed or throw
// tickinfer::Error (never crash, hang or over-allocate); whatever parses must survive a
// write/read round trip unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "formats/npy.hpp"
#include "tickinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tickinfer::formats;
  NpyArray array;
  try {
    array = parse_npy(data, size, "fuzz");
  } catch (const tickinfer::Error&) {
    return 0;
  }
  const std::string bytes = serialize_npy(array.shape, array.data);
  const NpyArray again = parse_npy(bytes.data(), bytes.size(), "fuzz-round-trip");
  if (again.shape != array.shape || again.data.size() != array.data.size() ||
      std::memcmp(again.data.data(), array.data.data(), array.data.size() * sizeof(float)) != 0) {
    std::abort();
  }
  return 0;
}
