// HPACK decoding (RFC 7541 sections 2-6) and the stateless encoding helpers; the Huffman code
// is in hpack_huffman.cpp. See hpack.hpp for what the module does and does not do.
#include "serving/h2/hpack.hpp"

#include <limits>
#include <utility>

namespace tickinfer::serving::hpack {
namespace {

// RFC 7541 Appendix A.
constexpr StaticEntry kStaticTable[kStaticTableSize] = {
    {":authority", ""},
    {":method", "GET"},
    {":method", "POST"},
    {":path", "/"},
    {":path", "/index.html"},
    {":scheme", "http"},
    {":scheme", "https"},
    {":status", "200"},
    {":status", "204"},
    {":status", "206"},
    {":status", "304"},
    {":status", "400"},
    {":status", "404"},
    {":status", "500"},
    {"accept-charset", ""},
    {"accept-encoding", "gzip, deflate"},
    {"accept-language", ""},
    {"accept-ranges", ""},
    {"accept", ""},
    {"access-control-allow-origin", ""},
    {"age", ""},
    {"allow", ""},
    {"authorization", ""},
    {"cache-control", ""},
    {"content-disposition", ""},
    {"content-encoding", ""},
    {"content-language", ""},
    {"content-length", ""},
    {"content-location", ""},
    {"content-range", ""},
    {"content-type", ""},
    {"cookie", ""},
    {"date", ""},
    {"etag", ""},
    {"expect", ""},
    {"expires", ""},
    {"from", ""},
    {"host", ""},
    {"if-match", ""},
    {"if-modified-since", ""},
    {"if-none-match", ""},
    {"if-range", ""},
    {"if-unmodified-since", ""},
    {"last-modified", ""},
    {"link", ""},
    {"location", ""},
    {"max-forwards", ""},
    {"proxy-authenticate", ""},
    {"proxy-authorization", ""},
    {"range", ""},
    {"referer", ""},
    {"refresh", ""},
    {"retry-after", ""},
    {"server", ""},
    {"set-cookie", ""},
    {"strict-transport-security", ""},
    {"transfer-encoding", ""},
    {"user-agent", ""},
    {"vary", ""},
    {"via", ""},
    {"www-authenticate", ""},
};

// An integer needs at most 5 continuation octets for 32 bits; encoders may pad with zero-valued
// continuation octets, which are tolerated up to this many (then the integer is refused, so a
// run of 0x80 octets cannot keep the decoder busy).
constexpr int kMaxIntegerContinuations = 10;

uint64_t entry_size(const Header& h) noexcept { return h.name.size() + h.value.size() + kEntryOverhead; }

}  // namespace

StaticEntry static_table_entry(size_t index) noexcept {
  if (index == 0 || index > kStaticTableSize) return {};
  return kStaticTable[index - 1];
}

size_t static_index(std::string_view name, std::string_view value) noexcept {
  for (size_t i = 0; i < kStaticTableSize; ++i)
    if (kStaticTable[i].name == name && kStaticTable[i].value == value) return i + 1;
  return 0;
}

size_t static_name_index(std::string_view name) noexcept {
  for (size_t i = 0; i < kStaticTableSize; ++i)
    if (kStaticTable[i].name == name) return i + 1;
  return 0;
}

// --- dynamic table -----------------------------------------------------------------------------

void DynamicTable::evict_to(size_t limit) noexcept {
  while (size_ > limit) {
    size_ -= entry_size(entries_.back());
    entries_.pop_back();
  }
}

void DynamicTable::add(Header entry) {
  const uint64_t need = entry_size(entry);
  if (need > capacity_) {  // 4.4: not an error; the table just ends up empty
    evict_to(0);
    return;
  }
  evict_to(capacity_ - need);
  size_ += need;
  entries_.push_front(std::move(entry));
}

void DynamicTable::set_capacity(size_t capacity) noexcept {
  capacity_ = capacity;
  evict_to(capacity);
}

// --- decoder -----------------------------------------------------------------------------------

// The unread rest of a header block.
struct Decoder::Input {
  const uint8_t* p;
  const uint8_t* end;
  size_t left() const noexcept { return static_cast<size_t>(end - p); }
};

namespace {

// 5.1. Returns nullptr or why the integer is refused.
const char* read_integer(const uint8_t*& p, const uint8_t* end, int prefix_bits, uint32_t& value) noexcept {
  if (p == end) return "truncated integer";
  const uint32_t prefix_max = (1u << prefix_bits) - 1;
  uint64_t v = *p++ & prefix_max;
  if (v < prefix_max) {
    value = static_cast<uint32_t>(v);
    return nullptr;
  }
  for (int shift = 0, n = 0;; shift += 7, ++n) {
    if (n == kMaxIntegerContinuations) return "integer with too many continuation octets";
    if (p == end) return "truncated integer";
    const uint8_t b = *p++;
    const uint64_t payload = b & 0x7F;
    // Past 32 bits of shift any nonzero payload overflows; below it the sum stays far under
    // 2^64, so the 32-bit check after each step is exact.
    if (payload != 0) {
      if (shift > 32) return "integer overflows 32 bits";
      v += payload << shift;
      if (v > std::numeric_limits<uint32_t>::max()) return "integer overflows 32 bits";
    }
    if ((b & 0x80) == 0) break;
  }
  value = static_cast<uint32_t>(v);
  return nullptr;
}

}  // namespace

Decoder::Decoder(size_t max_table_size, size_t max_header_list_bytes)
    : table_(max_table_size), max_table_size_(max_table_size), max_header_list_bytes_(max_header_list_bytes) {}

void Decoder::set_max_table_size(size_t max_table_size) noexcept {
  max_table_size_ = max_table_size;
  if (table_.capacity() > max_table_size) size_update_required_ = true;
}

bool Decoder::decode(const uint8_t* data, size_t size, std::vector<Header>& out, std::string& error) {
  Input in{data, data + size};
  if (const char* why = decode_block(in, out)) {
    error = why;
    return false;
  }
  return true;
}

// Index space (2.3.3): 1..61 static, then the dynamic table newest first. The views point into
// the tables; false when the index is 0 or past the dynamic table's end.
bool Decoder::lookup(uint32_t index, std::string_view& name, std::string_view& value) const noexcept {
  if (index == 0) return false;
  if (index <= kStaticTableSize) {
    name = kStaticTable[index - 1].name;
    value = kStaticTable[index - 1].value;
    return true;
  }
  const Header* entry = table_.at(index - kStaticTableSize - 1);
  if (entry == nullptr) return false;
  name = entry->name;
  value = entry->value;
  return true;
}

const char* Decoder::decode_block(Input& in, std::vector<Header>& out) {
  uint64_t list_bytes = 0;
  bool field_seen = false;
  auto account = [&](uint64_t name_size, uint64_t value_size) {
    list_bytes += name_size + value_size + kEntryOverhead;
    return list_bytes <= max_header_list_bytes_;
  };
  while (in.left() > 0) {
    const uint8_t first = *in.p;
    if ((first & 0xE0) == 0x20) {  // 6.3 dynamic table size update: 001xxxxx
      if (field_seen) return "dynamic table size update after a header field";
      uint32_t new_size = 0;
      if (const char* why = read_integer(in.p, in.end, 5, new_size)) return why;
      if (new_size > max_table_size_) return "dynamic table size update above the advertised maximum";
      table_.set_capacity(new_size);
      size_update_required_ = false;
      continue;
    }
    if (size_update_required_) return "missing dynamic table size update after a settings change";
    field_seen = true;

    if (first & 0x80) {  // 6.1 indexed header field: 1xxxxxxx
      uint32_t index = 0;
      if (const char* why = read_integer(in.p, in.end, 7, index)) return why;
      if (index == 0) return "indexed header field with index 0";
      std::string_view name, value;
      if (!lookup(index, name, value)) return "header field index out of range";
      if (!account(name.size(), value.size())) return "header list over the size limit";
      out.push_back(Header{std::string(name), std::string(value)});
      continue;
    }

    // 6.2.1 with incremental indexing: 01xxxxxx (6-bit index); 6.2.2 without indexing: 0000xxxx
    // and 6.2.3 never indexed: 0001xxxx (4-bit index). Never-indexed only matters to
    // intermediaries re-encoding the field, so both decode alike.
    const bool indexing = (first & 0xC0) == 0x40;
    Header field;
    if (const char* why = read_literal(in, indexing ? 6 : 4, field)) return why;
    if (!account(field.name.size(), field.value.size())) return "header list over the size limit";
    if (indexing) table_.add(field);  // a copy: `out` keeps the original
    out.push_back(std::move(field));
  }
  return nullptr;
}

const char* Decoder::read_literal(Input& in, int prefix_bits, Header& field) {
  uint32_t name_index = 0;
  if (const char* why = read_integer(in.p, in.end, prefix_bits, name_index)) return why;
  if (name_index == 0) {
    if (const char* why = read_string(in, field.name)) return why;
  } else {
    // The name is copied before anything is inserted, since inserting may evict the very entry
    // it refers to (4.4).
    std::string_view name, value;
    if (!lookup(name_index, name, value)) return "header name index out of range";
    field.name = name;
  }
  return read_string(in, field.value);
}

const char* Decoder::read_string(Input& in, std::string& s) {
  if (in.left() == 0) return "truncated string length";
  const bool huffman = (*in.p & 0x80) != 0;
  uint32_t length = 0;
  if (const char* why = read_integer(in.p, in.end, 7, length)) return why;
  if (length > in.left()) return "string longer than the rest of the block";
  // Before any copy: a string alone over the list limit can only fail later, so refuse it now.
  if (length > max_header_list_bytes_) return "string over the header list size limit";
  const uint8_t* data = in.p;
  in.p += length;
  if (!huffman) {
    s.assign(reinterpret_cast<const char*>(data), length);
    return nullptr;
  }
  s.clear();
  if (!huffman_decode(data, length, s)) return "invalid Huffman-coded string";
  return nullptr;
}

// --- encoding ----------------------------------------------------------------------------------

void encode_integer(std::string& out, uint8_t first_byte_flags, int prefix_bits, uint64_t value) {
  const uint64_t prefix_max = (uint64_t{1} << prefix_bits) - 1;
  const auto flags = static_cast<uint8_t>(first_byte_flags & ~prefix_max);
  if (value < prefix_max) {
    out.push_back(static_cast<char>(flags | value));
    return;
  }
  out.push_back(static_cast<char>(flags | prefix_max));
  value -= prefix_max;
  while (value >= 0x80) {
    out.push_back(static_cast<char>(0x80 | (value & 0x7F)));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void encode_string(std::string& out, std::string_view s, bool huffman) {
  if (huffman) {
    encode_integer(out, 0x80, 7, huffman_encoded_size(s));
    huffman_encode(s, out);
  } else {
    encode_integer(out, 0x00, 7, s.size());
    out.append(s);
  }
}

void encode_indexed(std::string& out, size_t index) { encode_integer(out, 0x80, 7, index); }

void encode_literal_without_indexing(std::string& out, std::string_view name, std::string_view value,
                                     bool huffman) {
  out.push_back(0x00);  // 0000 + name index 0: a literal name follows
  encode_string(out, name, huffman);
  encode_string(out, value, huffman);
}

void encode_literal_without_indexing(std::string& out, size_t name_index, std::string_view value,
                                     bool huffman) {
  encode_integer(out, 0x00, 4, name_index);
  encode_string(out, value, huffman);
}

void encode_table_size_update(std::string& out, size_t max_size) { encode_integer(out, 0x20, 5, max_size); }

}  // namespace tickinfer::serving::hpack
