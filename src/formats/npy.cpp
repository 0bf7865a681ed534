#include "formats/npy.hpp"

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// Any dimension (and the element count) above this is refused before arithmetic can overflow;
// real arrays are limited far earlier by the data actually present.
constexpr int64_t kMaxDim = int64_t{1} << 48;

[[noreturn]] void fail(std::string_view source, const std::string& what) {
  throw Error("npy '" + std::string(source) + "': " + what);
}

// The header is a Python dict literal, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// This parser accepts exactly what NumPy writes (any key order, either quote, optional trailing
// commas, Python 2 'L' suffixes on ints) and nothing else.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view source) : s_(text), source_(source) {}

  struct Fields {
    std::string descr;
    bool fortran_order = false;
    std::vector<int64_t> shape;
  };

  Fields parse() {
    Fields f;
    bool have_descr = false, have_order = false, have_shape = false;
    skip_ws();
    expect('{');
    skip_ws();
    while (peek() != '}') {
      const std::string key = parse_string();
      skip_ws();
      expect(':');
      skip_ws();
      if (key == "descr") {
        if (have_descr) bad("duplicate key 'descr'");
        f.descr = parse_string();
        have_descr = true;
      } else if (key == "fortran_order") {
        if (have_order) bad("duplicate key 'fortran_order'");
        f.fortran_order = parse_bool();
        have_order = true;
      } else if (key == "shape") {
        if (have_shape) bad("duplicate key 'shape'");
        f.shape = parse_shape();
        have_shape = true;
      } else {
        bad("unexpected key '" + key + "'");
      }
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        skip_ws();
      } else if (peek() != '}') {
        bad("expected ',' or '}'");
      }
    }
    ++pos_;
    skip_ws();
    if (pos_ != s_.size()) bad("unexpected text after the closing '}'");
    if (!have_descr || !have_order || !have_shape) {
      bad("header needs keys 'descr', 'fortran_order' and 'shape'");
    }
    return f;
  }

 private:
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' ||
                                s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  [[noreturn]] void bad(const std::string& what) const {
    fail(source_, "malformed header (" + what + " at offset " + std::to_string(pos_) + ")");
  }
  void expect(char c) {
    if (peek() != c) bad(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string parse_string() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') bad("expected a quoted string");
    ++pos_;
    const size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      if (s_[pos_] == '\\') bad("escapes are not supported in header strings");
      ++pos_;
    }
    if (pos_ >= s_.size()) bad("unterminated string");
    std::string out(s_.substr(start, pos_ - start));
    ++pos_;
    return out;
  }
  bool parse_bool() {
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    bad("expected True or False");
  }
  int64_t parse_dim() {
    if (peek() < '0' || peek() > '9') bad("expected a non-negative integer");
    int64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      v = v * 10 + (peek() - '0');
      if (v > kMaxDim) fail(source_, "absurd dimension in shape (over 2^48)");
      ++pos_;
    }
    if (peek() == 'L') ++pos_;  // Python 2 long literal
    return v;
  }
  std::vector<int64_t> parse_shape() {
    std::vector<int64_t> shape;
    expect('(');
    skip_ws();
    while (peek() != ')') {
      if (shape.size() >= 64) bad("more than 64 dimensions");
      shape.push_back(parse_dim());
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        skip_ws();
      } else if (peek() != ')') {
        bad("expected ',' or ')' in shape");
      }
    }
    ++pos_;
    return shape;
  }

  std::string_view s_;
  std::string_view source_;
  size_t pos_ = 0;
};

uint32_t read_le(const unsigned char* p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

template <typename T>
T load_le(const unsigned char* p) {
  static_assert(std::endian::native == std::endian::little || std::endian::native == std::endian::big);
  unsigned char b[sizeof(T)];
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(b, p, sizeof(T));
  } else {
    for (size_t i = 0; i < sizeof(T); ++i) b[i] = p[sizeof(T) - 1 - i];
  }
  T v;
  std::memcpy(&v, b, sizeof(T));
  return v;
}

}  // namespace

NpyArray parse_npy(const void* bytes, size_t size, std::string_view source) {
  const auto* p = static_cast<const unsigned char*>(bytes);
  if (size < kMagicSize + 2 || std::memcmp(p, kMagic, kMagicSize) != 0) {
    fail(source, "bad magic (not a .npy file)");
  }
  const int major = p[6], minor = p[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    fail(source, "unsupported format version " + std::to_string(major) + "." +
                     std::to_string(minor) + " (1.0, 2.0 and 3.0 are supported)");
  }
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t prefix = kMagicSize + 2 + len_bytes;
  if (size < prefix) fail(source, "truncated header");
  const size_t header_len = read_le(p + kMagicSize + 2, static_cast<int>(len_bytes));
  if (header_len > size - prefix) {
    fail(source, "truncated header: it claims " + std::to_string(header_len) + " bytes, the file has " +
                     std::to_string(size - prefix) + " after the prefix");
  }
  const std::string_view header(reinterpret_cast<const char*>(p + prefix), header_len);
  const auto fields = HeaderParser(header, source).parse();

  size_t item_size = 0;
  if (fields.descr == "<f4" || fields.descr == "<i4") {
    item_size = 4;
  } else if (fields.descr == "<f8") {
    item_size = 8;
  } else if (fields.descr == "|i1") {
    item_size = 1;
  } else if (fields.descr == "<i2") {
    item_size = 2;
  } else {
    fail(source, "unsupported dtype '" + fields.descr + "' (supported: '<f4', '<f8', '|i1', '<i2', '<i4')");
  }
  if (fields.fortran_order) fail(source, "fortran_order True is not supported (save C-order arrays)");

  int64_t count = 1;
  for (int64_t d : fields.shape) {
    if (d != 0 && count > kMaxDim / d) fail(source, "absurd array size (over 2^48 elements)");
    count *= d;
  }
  const size_t data_bytes = size - prefix - header_len;
  const auto want_bytes = static_cast<unsigned long long>(count) * item_size;
  if (data_bytes < want_bytes) {
    fail(source, "truncated data: shape needs " + std::to_string(want_bytes) + " bytes, file has " +
                     std::to_string(data_bytes));
  }
  if (data_bytes > want_bytes) {
    fail(source, "size mismatch: shape needs " + std::to_string(want_bytes) + " bytes of data, file has " +
                     std::to_string(data_bytes));
  }

  NpyArray out;
  out.shape = fields.shape;
  out.dtype = fields.descr;
  out.data.resize(static_cast<size_t>(count));
  const unsigned char* d = p + prefix + header_len;
  if (fields.descr == "|i1") {
    for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = static_cast<float>(static_cast<int8_t>(d[i]));
  } else if (fields.descr == "<i2") {
    for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = static_cast<float>(load_le<int16_t>(d + 2 * i));
  } else if (fields.descr == "<i4") {
    for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = static_cast<float>(load_le<int32_t>(d + 4 * i));
  } else if (item_size == 4) {
    for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = load_le<float>(d + 4 * i);
  } else {
    for (size_t i = 0; i < out.data.size(); ++i) {
      out.data[i] = static_cast<float>(load_le<double>(d + 8 * i));
    }
  }
  return out;
}

namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

std::string read_whole_file(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) fail(path, std::string("cannot open: ") + std::strerror(errno));
  std::string bytes;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) bytes.append(buf, n);
  if (std::ferror(f.get())) fail(path, "read error");
  return bytes;
}

}  // namespace

NpyArray read_npy(const std::string& path) {
  const std::string bytes = read_whole_file(path);
  return parse_npy(bytes.data(), bytes.size(), path);
}

std::string serialize_npy(const std::vector<int64_t>& shape, const std::vector<float>& data) {
  int64_t count = 1;
  std::string shape_text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) throw Error("npy write: negative dimension in shape");
    count *= shape[i];
    shape_text += std::to_string(shape[i]);
    shape_text += (shape.size() == 1 || i + 1 < shape.size()) ? "," : "";
    if (i + 1 < shape.size()) shape_text += " ";
  }
  shape_text += ")";
  if (static_cast<size_t>(count) != data.size()) {
    throw Error("npy write: shape holds " + std::to_string(count) + " values but " +
                std::to_string(data.size()) + " were given");
  }
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape_text + ", }";
  // NumPy pads with spaces and ends with '\n' so that the data starts 64-byte aligned.
  const size_t prefix = kMagicSize + 2 + 2;
  const size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';
  if (header.size() > std::numeric_limits<uint16_t>::max()) {
    throw Error("npy write: header too long for format version 1.0");
  }

  std::string out(kMagic, kMagicSize);
  out += static_cast<char>(1);
  out += static_cast<char>(0);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  const size_t data_start = out.size();
  out.resize(data_start + 4 * data.size());
  for (size_t i = 0; i < data.size(); ++i) {
    unsigned char b[4];
    std::memcpy(b, &data[i], 4);
    if constexpr (std::endian::native == std::endian::big) {
      std::swap(b[0], b[3]);
      std::swap(b[1], b[2]);
    }
    std::memcpy(&out[data_start + 4 * i], b, 4);
  }
  return out;
}

void write_npy(const std::string& path, const std::vector<int64_t>& shape,
               const std::vector<float>& data) {
  const std::string bytes = serialize_npy(shape, data);
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "wb"));
  if (!f) fail(path, std::string("cannot create: ") + std::strerror(errno));
  if (std::fwrite(bytes.data(), 1, bytes.size(), f.get()) != bytes.size()) {
    fail(path, "write failed");
  }
  if (std::fclose(f.release()) != 0) fail(path, "write failed on close");
}

}  // namespace tickinfer::formats
