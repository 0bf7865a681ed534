#pragma once
// Nasdaq's historical ITCH day files (the BinaryFILE format): no file header, then one record
// after another, each a 2-byte big-endian length (not counting itself) followed by that many
// bytes holding one ITCH message. Plain or gzip-compressed (recognised by its magic 1f 8b, not by
// the name), streamed a chunk at a time: never the whole day in memory.
//
// The reader frames records; it does not decode them (itch::decode does, and its counters count
// unknown types and wrong lengths). How a day ends:
//  - end of file exactly after a record: the normal end; error() stays "".
//  - a record of length 0: end of session (some BinaryFILE writers mark it so); reading stops
//    there, ended_by_zero_length() is true, and nothing after it is read.
//  - end of file inside a record (its prefix or its body): every complete record before it is
//    delivered, then error() names the byte offset where the cut record starts.
//  - corrupt or truncated gzip data: the records inflated before it are delivered, then error()
//    says what zlib reported and where.
// An empty file (0 bytes, raw or gzip) is an empty day: no records, no error.
//
// The constructor refuses (tickinfer::Error) a file it cannot open, a pcap or pcapng capture (the
// common mix-up: some copies of day files are named ".pcap"; real captures go through the
// capture reader), gzip data corrupt from the start, and a file whose first record is not an
// ITCH 5.0 message (unknown type byte, or a length that differs from that type's length).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace tickinfer::itch {

namespace detail {
class ByteSource;
}

struct DayRecord {
  std::uint64_t seq;         // 1-based position in the file, counting every record
  const std::uint8_t* msg;   // the ITCH message (type byte first); valid until the next read()
  std::uint16_t len;         // bytes at msg, as the record's length prefix says
};

class DayFileReader {
 public:
  static constexpr std::size_t kDefaultChunkBytes = std::size_t{1} << 20;

  // Opens `path` (raw or gzip). `chunk_bytes` (clamped to 1 B .. 1 GiB) is how much is read (or
  // inflated) at a time; records may straddle chunks. Throws tickinfer::Error, see the header comment.
  explicit DayFileReader(const std::string& path, std::size_t chunk_bytes = kDefaultChunkBytes);
  // The same over a copy of `bytes` (raw or gzip), for tests and fuzzing.
  static DayFileReader from_memory(std::span<const std::uint8_t> bytes,
                                   std::size_t chunk_bytes = kDefaultChunkBytes);

  DayFileReader(DayFileReader&&) noexcept;
  DayFileReader& operator=(DayFileReader&&) noexcept;
  ~DayFileReader();

  // Calls f(const DayRecord&) for each of the next records, up to `max_records`; returns how
  // many it delivered, 0 once the day has ended (at_end()). The loop walks the chunk buffer in
  // place: one length load and a bounds check per record. If f throws, the record it was given
  // counts as delivered and the next read() continues after it.
  template <class F>
  std::size_t read(F&& f, std::size_t max_records = SIZE_MAX);

  bool at_end() const noexcept { return at_end_; }
  bool ended_by_zero_length() const noexcept { return zero_length_end_; }
  // Uncompressed bytes consumed: every delivered record with its 2-byte prefix, plus the 2 bytes
  // of a zero-length end marker. At a truncation it is the offset of the cut record.
  std::uint64_t bytes_read() const noexcept { return buffer_offset_ + pos_; }
  std::uint64_t records() const noexcept { return records_; }
  // Why reading stopped early (truncated record, corrupt gzip, read error); "" otherwise.
  const std::string& error() const noexcept { return error_; }

 private:
  DayFileReader(std::unique_ptr<detail::ByteSource> raw, std::string name, std::size_t chunk_bytes);
  void check_start();
  std::size_t fill(std::size_t n);
  // Called when the buffer holds no complete record at pos_: stops at a zero-length record,
  // compacts and reads another chunk, or ends the day (clean end, truncation, source error).
  // Returns false once the day has ended.
  bool refill();

  std::unique_ptr<detail::ByteSource> source_;
  std::string name_;                 // the path, or "<memory>", for error messages
  std::unique_ptr<std::uint8_t[]> buffer_;
  std::size_t chunk_bytes_ = 0;
  std::size_t capacity_ = 0;         // chunk_bytes_ plus room for one partial record
  std::size_t pos_ = 0;              // next record's prefix in buffer_
  std::size_t end_ = 0;              // bytes held in buffer_
  std::uint64_t buffer_offset_ = 0;  // file offset (uncompressed) of buffer_[0]
  std::uint64_t records_ = 0;
  bool at_end_ = false;
  bool zero_length_end_ = false;
  std::string error_;
};

template <class F>
std::size_t DayFileReader::read(F&& f, std::size_t max_records) {
  std::size_t delivered = 0;
  while (delivered < max_records && !at_end_) {
    const std::uint8_t* const base = buffer_.get();
    const std::size_t end = end_;
    std::size_t pos = pos_;
    std::uint64_t seq = records_;
    while (delivered < max_records && end - pos >= 2) {
      const std::size_t len = (std::size_t{base[pos]} << 8) | base[pos + 1];
      if (len == 0 || end - pos - 2 < len) break;  // the end marker, or a record not all here
      const DayRecord record{++seq, base + pos + 2, static_cast<std::uint16_t>(len)};
      pos += 2 + len;
      pos_ = pos;
      records_ = seq;
      ++delivered;
      f(record);
    }
    if (delivered < max_records && !refill()) break;
  }
  return delivered;
}

}  // namespace tickinfer::itch
