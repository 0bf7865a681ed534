#pragma once
// A TensorFlow checkpoint ("tensor bundle"): `<prefix>.index` (a table of key -> BundleEntryProto,
// see sstable.hpp) and the data shards `<prefix>.data-NNNNN-of-MMMMM`. Entries are read on demand;
// each one's bytes are checked against its masked CRC-32C.
#include <map>
#include <string>
#include <vector>

#include "formats/savedmodel/tf_tensor.hpp"

namespace tickinfer::formats {

class TensorBundle {
 public:
  // Reads and checks the index and the header; every shard file must exist. `prefix` is e.g.
  // "dir/variables/variables". Throws tickinfer::Error naming the file on any problem.
  static TensorBundle open(const std::string& prefix);
  // Same from the index bytes and a shard reader (tests, fuzzing): shard i -> its bytes.
  static TensorBundle from_index(const std::string& index_bytes, const std::string& label,
                                 std::vector<std::string> shard_bytes, std::vector<std::string> shard_names);

  bool has(const std::string& key) const { return entries_.count(key) != 0; }
  std::vector<std::string> keys() const;
  // A numeric entry (float32, float64, int32, int64, ...). Throws on a checksum mismatch,
  // a partitioned entry, a dtype that is not numeric, or bytes outside the shard.
  TfTensor read(const std::string& key) const;
  // A scalar DT_STRING entry (e.g. _CHECKPOINTABLE_OBJECT_GRAPH): its bytes, length-CRC checked.
  std::string read_string(const std::string& key) const;

 private:
  struct Entry {
    int dtype = 0;
    std::vector<int64_t> shape;
    int shard = 0;
    uint64_t offset = 0, size = 0;
    uint32_t masked_crc = 0;
    bool partitioned = false;
  };
  std::string_view entry_bytes(const std::string& key, const Entry& e) const;
  const Entry& entry(const std::string& key) const;

  std::string label_;
  std::map<std::string, Entry> entries_;
  std::vector<std::string> shards_;       // contents
  std::vector<std::string> shard_names_;  // paths, for messages
};

}  // namespace tickinfer::formats
