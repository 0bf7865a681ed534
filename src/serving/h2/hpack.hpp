#pragma once
// HPACK (RFC 7541), the header compression of HTTP/2, for the server's own h2c gRPC endpoint.
//
// What this module does:
//  - Decoder: decodes the complete header blocks of one connection (HEADERS + CONTINUATION
//    payloads concatenated by the caller) into name/value lists: indexed fields (6.1), literals
//    with incremental indexing, without indexing and never indexed (6.2), dynamic table size
//    updates (6.3), the static table (Appendix A), the dynamic table with its eviction rules (4),
//    raw and Huffman-coded strings (5.2, Appendix B).
//    It treats its input as hostile: every length is checked against the bytes left, integers
//    must fit in 32 bits, strings and whole header lists are bounded by max_header_list_bytes
//    before anything is copied, invalid Huffman (EOS, bad padding) is refused. A refusal comes
//    with a short reason; the connection must then end with COMPRESSION_ERROR.
//  - Stateless encoding helpers for responses: integers, strings (raw or Huffman), indexed fields
//    and literals without indexing (literal or static-table name).
//
// What it does not do:
//  - No encoder dynamic table: responses never insert into the peer's table (no literal with
//    incremental indexing is emitted), so the peer's decoder state never has to be mirrored here
//    and there is no encoder object. A few bytes per response are the price.
//  - No HTTP/2 field validation (lowercase names, pseudo-header order, connection-specific
//    fields): any octets are accepted as names and values here; that is the HTTP/2 layer's job.
//  - No partial blocks: decode() takes a whole header block, never half of one.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace tickinfer::serving::hpack {

struct Header {
  std::string name, value;
  bool operator==(const Header&) const = default;
};

// Every table entry is charged its name and value plus 32 octets of bookkeeping (4.1); the same
// sum bounds a decoded header list (RFC 7540's SETTINGS_MAX_HEADER_LIST_SIZE counts the same way).
inline constexpr size_t kEntryOverhead = 32;
inline constexpr size_t kStaticTableSize = 61;  // Appendix A, indexes 1..61

struct StaticEntry {
  std::string_view name, value;
};
// Entry `index` (1..kStaticTableSize) of the static table; anything else gives an empty entry.
StaticEntry static_table_entry(size_t index) noexcept;
// The static index whose name and value both match, or 0 (for indexed response fields).
size_t static_index(std::string_view name, std::string_view value) noexcept;
// The first static index with this name, or 0 (for literals with an indexed name).
size_t static_name_index(std::string_view name) noexcept;

// The dynamic table of one decoding context (2.3.2, 4): newest entry first, evicting the oldest
// whenever the sum of entry sizes would exceed the capacity.
class DynamicTable {
 public:
  explicit DynamicTable(size_t capacity) noexcept : capacity_(capacity) {}
  // Appends as the newest entry after evicting what it must; an entry larger than the whole
  // capacity empties the table and is not added (4.4).
  void add(Header entry);
  void set_capacity(size_t capacity) noexcept;  // evicts down to the new capacity
  // 0 = newest; nullptr when out of range.
  const Header* at(size_t i) const noexcept { return i < entries_.size() ? &entries_[i] : nullptr; }
  size_t size() const noexcept { return size_; }  // RFC bytes: sum of name + value + 32
  size_t capacity() const noexcept { return capacity_; }
  size_t count() const noexcept { return entries_.size(); }

 private:
  void evict_to(size_t limit) noexcept;
  std::deque<Header> entries_;
  size_t size_ = 0;
  size_t capacity_;
};

// Decoding context of one HTTP/2 connection (its dynamic table persists across header blocks).
class Decoder {
 public:
  // max_table_size: the SETTINGS_HEADER_TABLE_SIZE this endpoint advertised (4096 default);
  // the dynamic table starts with that capacity, and a size update above it is an error.
  // max_header_list_bytes: sum over decoded headers of name+value+32 allowed per block; beyond
  // it decode() fails (protects memory; the server answers with an error).
  explicit Decoder(size_t max_table_size = 4096, size_t max_header_list_bytes = 16384);

  // Decodes one complete header block (HEADERS + CONTINUATION payloads concatenated), appending
  // to `out`. On malformed input returns false and sets `error` to a short English reason; the
  // connection must then be closed with COMPRESSION_ERROR (the decoder's state is undefined, and
  // `out` may hold the fields decoded before the error).
  bool decode(const uint8_t* data, size_t size, std::vector<Header>& out, std::string& error);

  // A new SETTINGS_HEADER_TABLE_SIZE (once acknowledged). When it is below the table's current
  // capacity, the peer's next header block must start with a size update (4.2); until then the
  // old entries stay addressable, since the peer's encoder has not evicted them yet.
  void set_max_table_size(size_t max_table_size) noexcept;

  size_t table_size() const noexcept { return table_.size(); }  // current size in RFC bytes
  size_t table_capacity() const noexcept { return table_.capacity(); }
  size_t table_entries() const noexcept { return table_.count(); }
  size_t max_table_size() const noexcept { return max_table_size_; }

 private:
  struct Input;
  const char* decode_block(Input& in, std::vector<Header>& out);
  const char* read_literal(Input& in, int prefix_bits, Header& field);
  const char* read_string(Input& in, std::string& s);
  bool lookup(uint32_t index, std::string_view& name, std::string_view& value) const noexcept;

  DynamicTable table_;
  size_t max_table_size_;
  size_t max_header_list_bytes_;
  bool size_update_required_ = false;
};

// --- encoding (no dynamic table use, so no encoder state is needed) ---------------------------

// 5.1: `value` in a prefix of `prefix_bits` (1..8) low bits of the first octet, whose high bits
// are `first_byte_flags` (the representation's pattern).
void encode_integer(std::string& out, uint8_t first_byte_flags, int prefix_bits, uint64_t value);
// 5.2: a string literal, Huffman-coded when `huffman` is set.
void encode_string(std::string& out, std::string_view s, bool huffman);
void encode_indexed(std::string& out, size_t index);                      // 6.1
void encode_literal_without_indexing(std::string& out, std::string_view name, std::string_view value,
                                     bool huffman = false);                // 6.2.2, new name
void encode_literal_without_indexing(std::string& out, size_t name_index, std::string_view value,
                                     bool huffman = false);                // 6.2.2, indexed name
void encode_table_size_update(std::string& out, size_t max_size);          // 6.3

// --- Huffman code (Appendix B), in hpack_huffman.cpp -----------------------------------------

// Appends the decoding of `data`; false on an invalid code, the EOS symbol, or padding that is
// longer than 7 bits or not all ones (5.2). `out` may then hold a partial decoding.
bool huffman_decode(const uint8_t* data, size_t size, std::string& out);
// Appends the Huffman coding of `in`, padded with ones to an octet boundary.
void huffman_encode(std::string_view in, std::string& out);
size_t huffman_encoded_size(std::string_view in) noexcept;  // octets huffman_encode appends

}  // namespace tickinfer::serving::hpack
