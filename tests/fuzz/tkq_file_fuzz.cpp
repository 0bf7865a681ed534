// libFuzzer target: arbitrary bytes as a .tkq file. Loading must either succeed or throw
// tickinfer::Error (never crash, hang or over-allocate). Each input is tried twice: as given,
// and with both CRC-32s recomputed, because random mutations almost never keep a checksum
// valid and the structural checks behind it are what needs the exploring. Whatever loads must
// serialize and load again to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "formats/tkq/tkq_file.hpp"
#include "stats/crc32.hpp"
#include "tickinfer/error.hpp"

namespace {

void try_load(const uint8_t* data, size_t size) {
  using namespace tickinfer::formats;
  tickinfer::tfl::Program p;
  try {
    p = load_tkq(data, size, "fuzz");
  } catch (const tickinfer::Error&) {
    return;
  }
  const auto bytes = serialize_tkq(p);
  const auto again = serialize_tkq(load_tkq(bytes.data(), bytes.size(), "fuzz-round-trip"));
  if (again != bytes) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try_load(data, size);
  if (size >= 64) {
    std::vector<uint8_t> sealed(data, data + size);
    const uint32_t payload = tickinfer::stats::crc32(sealed.data() + 64, size - 64);
    std::memcpy(sealed.data() + 36, &payload, 4);
    const uint32_t header = tickinfer::stats::crc32(sealed.data(), 60);
    std::memcpy(sealed.data() + 60, &header, 4);
    try_load(sealed.data(), sealed.size());
  }
  return 0;
}
