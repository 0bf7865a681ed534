#pragma once
// Capture files: every received datagram with its kernel receive time and line, so a session
// can be replayed with its original pacing. Layout (little-endian; docs/feed-wire-format.md):
//
//   file header, 16 bytes: magic "TICAPv01" (8) | version u32 = 1 | reserved u32 = 0
//   record, 24 + n bytes:  marker u32 = 0x52434554 ("TECR") | length u32 = n | rx_ns i64 |
//                          line u8 | reserved 3 bytes | crc u32 (CRC-32 of the 16 bytes from
//                          length through reserved, then the payload) | payload n bytes
//
// The reader checks every record. A record whose CRC fails, or whose length is impossible, is
// counted as corrupt and the reader resynchronises on the next marker that starts a valid record,
// so one damaged record loses only itself. A record cut short by the end of the file (a writer
// killed mid-write) is reported as a truncated tail, and everything before it is returned.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace tickinfer::feed {

inline constexpr std::uint32_t kCaptureMaxRecord = 65507;

struct CaptureRecord {
  std::int64_t rx_ns = 0;
  std::uint8_t line = 0;
  std::vector<std::uint8_t> payload;
};

class CaptureWriter {
 public:
  // Creates/truncates path and writes the header. Throws tickinfer::Error naming the path.
  explicit CaptureWriter(const std::string& path);
  ~CaptureWriter();
  CaptureWriter(const CaptureWriter&) = delete;
  CaptureWriter& operator=(const CaptureWriter&) = delete;
  // Appends one record (buffered). Throws tickinfer::Error if len > kCaptureMaxRecord or the
  // write fails.
  void write(std::int64_t rx_ns, std::uint8_t line, const std::uint8_t* data, std::size_t len);
  void flush();
  std::uint64_t records() const noexcept { return records_; }

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
  std::uint64_t records_ = 0;
};

struct CaptureContents {
  std::vector<CaptureRecord> records;
  std::uint64_t corrupt_records = 0;    // CRC or length failures skipped by resynchronising
  std::uint64_t skipped_bytes = 0;      // bytes passed over while resynchronising
  bool truncated_tail = false;          // the file ends inside a record
};

// Reads a whole capture file. Throws tickinfer::Error naming the path if it cannot be read or
// does not start with a capture header; damage after the header is reported, never thrown.
CaptureContents read_capture(const std::string& path);
// The same over bytes in memory (used by the reader and the fuzz target).
CaptureContents parse_capture(const std::uint8_t* data, std::size_t len, const std::string& name);

}  // namespace tickinfer::feed
