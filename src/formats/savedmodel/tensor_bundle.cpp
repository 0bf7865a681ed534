#include "formats/savedmodel/tensor_bundle.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "formats/crc32c.hpp"
#include "formats/savedmodel/sstable.hpp"
#include "tensorflow/core/protobuf/tensor_bundle.pb.h"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

constexpr int kMaxShards = 1 << 16;

bool read_whole_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = std::move(s).str();
  return static_cast<bool>(in) || in.eof();
}

std::string shard_name(const std::string& prefix, int i, int n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, ".data-%05d-of-%05d", i, n);
  return prefix + buf;
}

bool read_varint64(std::string_view s, size_t& pos, uint64_t& out) {
  out = 0;
  for (int i = 0; i < 10; ++i) {
    if (pos >= s.size()) return false;
    const auto b = static_cast<uint8_t>(s[pos++]);
    out |= uint64_t{b & 0x7Fu} << (7 * i);
    if ((b & 0x80u) == 0) return true;
  }
  return false;
}

int header_shards(const std::vector<TableEntry>& table, const std::string& label) {
  if (table.empty() || !table.front().key.empty()) throw Error(label + ": the bundle header (key \"\") is missing");
  tensorflow::BundleHeaderProto header;
  if (!header.ParseFromString(table.front().value)) throw Error(label + ": malformed bundle header");
  if (header.endianness() != tensorflow::BundleHeaderProto::LITTLE) throw Error(label + ": big-endian bundles are not supported");
  if (header.num_shards() < 1 || header.num_shards() > kMaxShards) {
    throw Error(label + ": bad shard count " + std::to_string(header.num_shards()));
  }
  return header.num_shards();
}

}  // namespace

TensorBundle TensorBundle::open(const std::string& prefix) {
  const std::string index_path = prefix + ".index";
  std::string index;
  if (!read_whole_file(index_path, index)) throw Error(index_path + ": cannot read the variables index");
  const int n = header_shards(read_sstable(index, index_path), index_path);
  std::vector<std::string> shards(static_cast<size_t>(n)), names;
  for (int i = 0; i < n; ++i) {
    names.push_back(shard_name(prefix, i, n));
    if (!read_whole_file(names.back(), shards[static_cast<size_t>(i)])) {
      throw Error(names.back() + ": variables shard " + std::to_string(i) + " of " + std::to_string(n) + " is missing or unreadable");
    }
  }
  return from_index(index, index_path, std::move(shards), std::move(names));
}

TensorBundle TensorBundle::from_index(const std::string& index_bytes, const std::string& label,
                                      std::vector<std::string> shard_bytes, std::vector<std::string> shard_names) {
  TensorBundle b;
  b.label_ = label;
  const std::vector<TableEntry> table = read_sstable(index_bytes, label);
  const int n = header_shards(table, label);
  if (static_cast<int>(shard_bytes.size()) != n || shard_names.size() != shard_bytes.size()) {
    throw Error(label + ": the header names " + std::to_string(n) + " shards, " + std::to_string(shard_bytes.size()) + " given");
  }
  for (size_t i = 1; i < table.size(); ++i) {
    tensorflow::BundleEntryProto proto;
    const std::string where = label + ": entry '" + table[i].key + "'";
    if (!proto.ParseFromString(table[i].value)) throw Error(where + ": malformed BundleEntryProto");
    Entry e;
    e.dtype = proto.dtype();
    e.shape = tf_shape_of(proto.shape());
    e.partitioned = proto.slices_size() > 0;
    e.shard = proto.shard_id();
    if (proto.offset() < 0 || proto.size() < 0) throw Error(where + ": negative offset or size");
    e.offset = static_cast<uint64_t>(proto.offset());
    e.size = static_cast<uint64_t>(proto.size());
    e.masked_crc = proto.crc32c();
    if (!e.partitioned && (e.shard < 0 || e.shard >= n)) throw Error(where + ": shard id " + std::to_string(e.shard) + " out of range");
    b.entries_.emplace(table[i].key, std::move(e));
  }
  b.shards_ = std::move(shard_bytes);
  b.shard_names_ = std::move(shard_names);
  return b;
}

std::vector<std::string> TensorBundle::keys() const {
  std::vector<std::string> out;
  for (const auto& [k, e] : entries_) out.push_back(k);
  return out;
}

const TensorBundle::Entry& TensorBundle::entry(const std::string& key) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) throw Error(label_ + ": no checkpoint entry '" + key + "'");
  if (it->second.partitioned) throw Error(label_ + ": entry '" + key + "' is partitioned into slices (not supported)");
  return it->second;
}

std::string_view TensorBundle::entry_bytes(const std::string& key, const Entry& e) const {
  const std::string& shard = shards_[static_cast<size_t>(e.shard)];
  const std::string& name = shard_names_[static_cast<size_t>(e.shard)];
  if (e.offset > shard.size() || e.size > shard.size() - e.offset) {
    throw Error(name + ": entry '" + key + "' (" + std::to_string(e.size) + " bytes at " + std::to_string(e.offset) +
                ") lies outside the shard (" + std::to_string(shard.size()) + " bytes; truncated?)");
  }
  std::string_view bytes(shard.data() + e.offset, static_cast<size_t>(e.size));
  // String entries hash their lengths as fixed-width integers, checked in read_string.
  if (e.dtype != kTfString && masked_crc32c(bytes.data(), bytes.size()) != e.masked_crc) {
    throw Error(name + ": checksum mismatch for entry '" + key + "' (the variables data is corrupt)");
  }
  return bytes;
}

TfTensor TensorBundle::read(const std::string& key) const {
  const Entry& e = entry(key);
  TfTensor t;
  t.dtype = e.dtype;
  t.shape = e.shape;
  const int64_t count = tf_element_count(e.shape);
  const std::string_view bytes = entry_bytes(key, e);
  t.values = tf_decode_raw(e.dtype, bytes.data(), bytes.size(), count, label_ + ": entry '" + key + "'");
  return t;
}

std::string TensorBundle::read_string(const std::string& key) const {
  const Entry& e = entry(key);
  const std::string where = label_ + ": entry '" + key + "'";
  if (e.dtype != kTfString || !e.shape.empty()) throw Error(where + ": expected a scalar string");
  const std::string_view bytes = entry_bytes(key, e);
  // One element: varint64 length, masked crc32c of that length (hashed as uint32 or uint64), bytes.
  size_t pos = 0;
  uint64_t len = 0;
  if (!read_varint64(bytes, pos, len) || bytes.size() - pos < 4 || len != bytes.size() - pos - 4) {
    throw Error(where + ": malformed string entry");
  }
  uint32_t stored;
  std::memcpy(&stored, bytes.data() + pos, 4);
  // The writer's CRC runs over the length (as uint32 when it fits, else uint64), then the
  // masked length CRC, then the string bytes; the entry stores it masked.
  uint32_t crc;
  if (len <= 0xFFFFFFFFu) {
    const auto l32 = static_cast<uint32_t>(len);
    crc = crc32c(&l32, 4);
  } else {
    crc = crc32c(&len, 8);
  }
  if (stored != mask_crc32c(crc)) throw Error(where + ": string length checksum mismatch");
  crc = crc32c_extend(crc, bytes.data() + pos, 4);
  crc = crc32c_extend(crc, bytes.data() + pos + 4, bytes.size() - pos - 4);
  if (mask_crc32c(crc) != e.masked_crc) {
    throw Error(shard_names_[static_cast<size_t>(e.shard)] + ": checksum mismatch for entry '" + key + "' (the variables data is corrupt)");
  }
  return std::string(bytes.substr(pos + 4));
}

}  // namespace tickinfer::formats
