// libFuzzer target: arbitrary bytes as a tensor bundle's .index table (and as its one data
// shard). Every entry is read. Must either succeed or throw tickinfer::Error. Each input is tried
// twice: as given, and with the footer's index block checksum recomputed, since random mutations
// almost never keep a CRC valid and the block decoding behind it needs exploring too.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "formats/crc32c.hpp"
#include "formats/savedmodel/sstable.hpp"
#include "formats/savedmodel/tensor_bundle.hpp"
#include "tickinfer/error.hpp"

namespace {

void try_read(const std::string& bytes) {
  using namespace tickinfer::formats;
  try {
    read_sstable(bytes, "fuzz.index");
    const TensorBundle b = TensorBundle::from_index(bytes, "fuzz.index", {bytes}, {"fuzz.data"});
    for (const std::string& k : b.keys()) {
      try {
        if (k == "_CHECKPOINTABLE_OBJECT_GRAPH") (void)b.read_string(k);
        else (void)b.read(k);
      } catch (const tickinfer::Error&) {
      }
    }
  } catch (const tickinfer::Error&) {
  }
}

bool varint(const std::string& s, size_t& pos, uint64_t& v) {
  v = 0;
  for (int i = 0; i < 10 && pos < s.size(); ++i) {
    const auto b = static_cast<uint8_t>(s[pos++]);
    v |= uint64_t{b & 0x7Fu} << (7 * i);
    if (!(b & 0x80u)) return true;
  }
  return false;
}

// Rewrites the index block's trailer CRC (footer: metaindex handle, index handle).
std::string reseal(std::string s) {
  if (s.size() < 48) return s;
  size_t pos = s.size() - 48;
  uint64_t meta_off, meta_len, idx_off, idx_len;
  if (!varint(s, pos, meta_off) || !varint(s, pos, meta_len) || !varint(s, pos, idx_off) || !varint(s, pos, idx_len)) return s;
  if (idx_off > s.size() || idx_len > s.size() - idx_off || s.size() - idx_off - idx_len < 5) return s;
  using namespace tickinfer::formats;
  const uint32_t crc = mask_crc32c(crc32c_extend(crc32c(s.data() + idx_off, idx_len), s.data() + idx_off + idx_len, 1));
  std::memcpy(s.data() + idx_off + idx_len + 1, &crc, 4);
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try_read(bytes);
  try_read(reseal(bytes));
  return 0;
}
