#include "formats/savedmodel/sstable.hpp"

#include <cstdint>
#include <cstring>

#include "formats/crc32c.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

constexpr size_t kFooterBytes = 48;
constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
constexpr size_t kBlockTrailerBytes = 5;  // type byte + fixed32 masked crc32c
constexpr uint8_t kRawBlock = 0;
constexpr uint8_t kSnappyBlock = 1;

uint32_t load_fixed32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // little-endian hosts only (the build targets x86-64 / aarch64 LE)
}

// Reads a varint of at most `max_bytes` bytes from s[pos..]; advances pos.
bool read_varint(std::string_view s, size_t& pos, uint64_t& out, int max_bytes) {
  out = 0;
  for (int i = 0; i < max_bytes; ++i) {
    if (pos >= s.size()) return false;
    const auto byte = static_cast<uint8_t>(s[pos++]);
    out |= uint64_t{byte & 0x7Fu} << (7 * i);
    if ((byte & 0x80u) == 0) return true;
  }
  return false;
}

struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;
};

BlockHandle read_handle(std::string_view s, size_t& pos, const std::string& where) {
  BlockHandle h;
  if (!read_varint(s, pos, h.offset, 10) || !read_varint(s, pos, h.size, 10)) {
    throw Error(where + ": malformed block handle");
  }
  return h;
}

// The block's contents (without trailer) after checking bounds, type and checksum.
std::string_view block_contents(std::string_view file, const BlockHandle& h, const std::string& label,
                                const char* what) {
  const std::string where = label + ": " + what + " at offset " + std::to_string(h.offset);
  const uint64_t data_end = file.size() - kFooterBytes;
  if (h.offset > data_end || h.size > data_end - h.offset || data_end - h.offset - h.size < kBlockTrailerBytes) {
    throw Error(where + " (" + std::to_string(h.size) + " bytes) lies outside the file");
  }
  const char* p = file.data() + h.offset;
  const auto type = static_cast<uint8_t>(p[h.size]);
  const uint32_t stored = load_fixed32(p + h.size + 1);
  // The checksum covers the block contents and the type byte.
  const uint32_t actual = mask_crc32c(crc32c_extend(crc32c(p, h.size), p + h.size, 1));
  if (stored != actual) throw Error(where + ": block checksum mismatch (the file is corrupt)");
  if (type == kSnappyBlock) {
    throw Error(where + ": Snappy-compressed table block is not supported (tensor bundles are written uncompressed)");
  }
  if (type != kRawBlock) throw Error(where + ": unknown block compression type " + std::to_string(type));
  return {p, static_cast<size_t>(h.size)};
}

// Decodes one block: prefix-compressed entries followed by the restart array.
void read_block(std::string_view block, const std::string& where, std::vector<TableEntry>& out) {
  if (block.size() < 4) throw Error(where + ": block shorter than its restart count");
  const uint32_t restarts = load_fixed32(block.data() + block.size() - 4);
  if (restarts == 0 || restarts > (block.size() - 4) / 4) throw Error(where + ": bad restart count " + std::to_string(restarts));
  const size_t entries_end = block.size() - 4 - size_t{restarts} * 4;
  for (uint32_t r = 0; r < restarts; ++r) {
    const uint32_t off = load_fixed32(block.data() + entries_end + size_t{r} * 4);
    if (off >= entries_end && !(off == 0 && entries_end == 0)) throw Error(where + ": restart offset outside the entries");
  }
  std::string_view entries = block.substr(0, entries_end);
  std::string key;
  size_t pos = 0;
  while (pos < entries.size()) {
    uint64_t shared = 0, non_shared = 0, value_len = 0;
    if (!read_varint(entries, pos, shared, 5) || !read_varint(entries, pos, non_shared, 5) ||
        !read_varint(entries, pos, value_len, 5)) {
      throw Error(where + ": malformed entry header at byte " + std::to_string(pos));
    }
    if (shared > key.size()) throw Error(where + ": entry shares more key bytes than the previous key has");
    if (non_shared > entries.size() - pos || value_len > entries.size() - pos - non_shared) {
      throw Error(where + ": entry runs past the end of its block");
    }
    std::string next = key.substr(0, shared);
    next.append(entries.data() + pos, non_shared);
    pos += non_shared;
    if (!out.empty() && !key.empty() && next <= key) throw Error(where + ": keys out of order at '" + next + "'");
    key = std::move(next);
    out.push_back({key, std::string(entries.data() + pos, value_len)});
    pos += value_len;
  }
}

}  // namespace

std::vector<TableEntry> read_sstable(std::string_view file, const std::string& label) {
  if (file.size() < kFooterBytes) throw Error(label + ": too short for a table footer (" + std::to_string(file.size()) + " bytes)");
  const std::string_view footer = file.substr(file.size() - kFooterBytes);
  const uint64_t magic = uint64_t{load_fixed32(footer.data() + 40)} | (uint64_t{load_fixed32(footer.data() + 44)} << 32);
  if (magic != kTableMagic) throw Error(label + ": not a TensorFlow table file (bad footer magic)");
  size_t pos = 0;
  const std::string_view handles = footer.substr(0, 40);
  (void)read_handle(handles, pos, label + ": footer");  // the metaindex block: no filters are read
  const BlockHandle index_handle = read_handle(handles, pos, label + ": footer");

  std::vector<TableEntry> index;
  read_block(block_contents(file, index_handle, label, "index block"), label + ": index block", index);
  std::vector<TableEntry> entries;
  std::string last_key;
  for (const TableEntry& ie : index) {
    size_t hp = 0;
    const BlockHandle h = read_handle(ie.value, hp, label + ": index entry '" + ie.key + "'");
    const std::string where = label + ": data block at offset " + std::to_string(h.offset);
    const size_t before = entries.size();
    read_block(block_contents(file, h, label, "data block"), where, entries);
    if (before > 0 && entries.size() > before && entries[before].key <= entries[before - 1].key) {
      throw Error(where + ": keys out of order across blocks");
    }
    if (entries.size() > before && entries.back().key > ie.key) {
      throw Error(where + ": holds keys beyond its index key '" + ie.key + "'");
    }
  }
  return entries;
}

}  // namespace tickinfer::formats
