#pragma once
// Reader of the sorted string table TensorFlow writes as a tensor bundle's `.index` file (the
// LevelDB table format without filter blocks): footer -> index block -> data blocks. Every block's
// masked CRC-32C trailer is checked, every offset and length is bounds-checked against the file.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tickinfer::formats {

struct TableEntry {
  std::string key;
  std::string value;
};

// All key/value pairs of the table in file order. Throws tickinfer::Error starting with `label`
// on a bad footer magic, a block outside the file, a checksum mismatch, a Snappy-compressed block
// (not supported), malformed entries, restart arrays or keys out of order.
std::vector<TableEntry> read_sstable(std::string_view file, const std::string& label);

}  // namespace tickinfer::formats
