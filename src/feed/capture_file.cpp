#include "feed/capture_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "stats/crc32.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::feed {

namespace {
constexpr char kMagic[8] = {'T', 'I', 'C', 'A', 'P', 'v', '0', '1'};
constexpr std::uint32_t kVersion = 1;
constexpr std::uint32_t kMarker = 0x52434554;  // "TECR" little-endian
constexpr std::size_t kFileHeader = 16;
constexpr std::size_t kRecordHeader = 24;

void put32(std::uint8_t* p, std::uint32_t v) { std::memcpy(p, &v, 4); }  // x86: little-endian
std::uint32_t get32(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
}  // namespace

CaptureWriter::CaptureWriter(const std::string& path) : path_(path) {
  f_ = std::fopen(path.c_str(), "wb");
  if (!f_) throw Error("capture '" + path + "': cannot create: " + std::strerror(errno));
  std::uint8_t h[kFileHeader] = {};
  std::memcpy(h, kMagic, 8);
  put32(h + 8, kVersion);
  if (std::fwrite(h, 1, sizeof h, f_) != sizeof h) throw Error("capture '" + path + "': write failed");
}

CaptureWriter::~CaptureWriter() {
  if (f_) std::fclose(f_);
}

void CaptureWriter::write(std::int64_t rx_ns, std::uint8_t line, const std::uint8_t* data, std::size_t len) {
  if (len > kCaptureMaxRecord) {
    throw Error("capture '" + path_ + "': record of " + std::to_string(len) + " bytes exceeds 65507");
  }
  std::uint8_t h[kRecordHeader] = {};
  put32(h, kMarker);
  put32(h + 4, static_cast<std::uint32_t>(len));
  std::memcpy(h + 8, &rx_ns, 8);
  h[16] = line;
  std::uint32_t crc = stats::crc32(h + 4, 16);
  crc = stats::crc32(data, len, crc);
  put32(h + 20, crc);
  if (std::fwrite(h, 1, sizeof h, f_) != sizeof h || (len && std::fwrite(data, 1, len, f_) != len)) {
    throw Error("capture '" + path_ + "': write failed: " + std::strerror(errno));
  }
  ++records_;
}

void CaptureWriter::flush() {
  if (std::fflush(f_) != 0) throw Error("capture '" + path_ + "': flush failed: " + std::strerror(errno));
}

CaptureContents parse_capture(const std::uint8_t* data, std::size_t len, const std::string& name) {
  if (len < kFileHeader || std::memcmp(data, kMagic, 8) != 0) {
    throw Error("capture '" + name + "': not a tickinfer capture file (bad magic)");
  }
  if (get32(data + 8) != kVersion) {
    throw Error("capture '" + name + "': unsupported version " + std::to_string(get32(data + 8)));
  }
  CaptureContents out;
  std::size_t pos = kFileHeader;
  bool resyncing = false;
  while (pos < len) {
    const std::size_t left = len - pos;
    if (left < kRecordHeader) {  // a header cut short
      if (!resyncing) out.truncated_tail = true;
      else out.skipped_bytes += left;
      break;
    }
    const std::uint8_t* h = data + pos;
    const std::uint32_t n = get32(h + 4);
    bool valid = get32(h) == kMarker && n <= kCaptureMaxRecord;
    if (valid && left - kRecordHeader < n) {  // payload cut short by the end of the file
      if (!resyncing) {
        out.truncated_tail = true;
        break;
      }
      valid = false;
    }
    if (valid) {
      std::uint32_t crc = stats::crc32(h + 4, 16);
      crc = stats::crc32(h + kRecordHeader, n, crc);
      valid = crc == get32(h + 20);
    }
    if (!valid) {
      if (!resyncing) {
        ++out.corrupt_records;
        resyncing = true;
      }
      ++pos;  // look for the next marker
      ++out.skipped_bytes;
      continue;
    }
    resyncing = false;
    CaptureRecord r;
    std::memcpy(&r.rx_ns, h + 8, 8);
    r.line = h[16];
    r.payload.assign(h + kRecordHeader, h + kRecordHeader + n);
    out.records.push_back(std::move(r));
    pos += kRecordHeader + n;
  }
  return out;
}

CaptureContents read_capture(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("capture '" + path + "': cannot open");
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_capture(bytes.data(), bytes.size(), path);
}

}  // namespace tickinfer::feed
