#include "itch/day_file.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "itch/day_file_source.hpp"
#include "itch/itch_messages.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::itch {
namespace {

constexpr std::size_t kMaxRecordBytes = 2 + 65535;
constexpr std::size_t kMaxChunkBytes = std::size_t{1} << 30;  // zlib counts its buffers in 32 bits

std::string hex_byte(std::uint8_t b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", b);
  return buf;
}

// The capture formats a day file is mistaken for, by their first four bytes as written.
const char* capture_kind(const std::uint8_t* p) {
  const std::uint32_t be = (std::uint32_t{p[0]} << 24) | (p[1] << 16) | (p[2] << 8) | p[3];
  switch (be) {
    case 0xa1b2c3d4: case 0xd4c3b2a1: case 0xa1b23c4d: case 0x4d3cb2a1: return "pcap";
    case 0x0a0d0d0a: return "pcapng";
    default: return nullptr;
  }
}

}  // namespace

DayFileReader::DayFileReader(const std::string& path, std::size_t chunk_bytes)
    : DayFileReader(detail::open_file_source(path), path, chunk_bytes) {}

DayFileReader DayFileReader::from_memory(std::span<const std::uint8_t> bytes, std::size_t chunk_bytes) {
  return DayFileReader(detail::memory_source(bytes), "<memory>", chunk_bytes);
}

DayFileReader::DayFileReader(std::unique_ptr<detail::ByteSource> raw, std::string name, std::size_t chunk_bytes)
    : name_(std::move(name)), chunk_bytes_(std::clamp<std::size_t>(chunk_bytes, 1, kMaxChunkBytes)) {
  capacity_ = chunk_bytes_ + kMaxRecordBytes;
  buffer_.reset(new std::uint8_t[capacity_]);
  source_ = detail::decompressing_source(std::move(raw), chunk_bytes_);
  check_start();
}

DayFileReader::DayFileReader(DayFileReader&&) noexcept = default;
DayFileReader& DayFileReader::operator=(DayFileReader&&) noexcept = default;
DayFileReader::~DayFileReader() = default;

// Reads until at least `n` bytes are buffered or the source ends; returns what is buffered.
std::size_t DayFileReader::fill(std::size_t n) {
  while (end_ < n) {
    const std::size_t got = source_->read(buffer_.get() + end_, std::min(chunk_bytes_, capacity_ - end_));
    if (got == 0) break;
    end_ += got;
  }
  return end_;
}

void DayFileReader::check_start() {
  const std::string where = "day file '" + name_ + "': ";
  const std::size_t have = fill(4);
  // Unreadable or corrupt from the first byte: refuse. Damage further in is reported by error()
  // after the records before it have been delivered.
  if (have == 0 && !source_->error().empty()) throw Error(where + source_->error());
  if (have == 0) {  // an empty day
    at_end_ = true;
    return;
  }
  const std::uint8_t* b = buffer_.get();
  if (have >= 4) {
    if (const char* kind = capture_kind(b)) {
      char magic[16];
      std::snprintf(magic, sizeof magic, "%02x%02x%02x%02x", b[0], b[1], b[2], b[3]);
      throw Error("'" + name_ + "' is a " + kind + " capture (magic " + magic +
                  "), not a Nasdaq day file; read it as a capture");
    }
  }
  if (have >= 2 && b[0] == 0 && b[1] == 0) return;  // a zero-length record: the session ends at once
  if (have < 3) {
    throw Error(where + "not an ITCH 5.0 day file: first record is cut short (the file holds " +
                std::to_string(have) + " byte(s))");
  }
  const std::size_t len = (std::size_t{b[0]} << 8) | b[1];
  const std::uint8_t type = b[2];
  const std::size_t expect = message_length(type);
  if (expect == 0) {
    throw Error(where + "not an ITCH 5.0 day file: first record (length " + std::to_string(len) +
                ") starts with byte " + hex_byte(type) + ", which is no ITCH 5.0 message type");
  }
  if (len != expect) {
    throw Error(where + "not an ITCH 5.0 day file: first record is a '" + std::string(1, char(type)) +
                "' message of " + std::to_string(len) + " bytes, but '" + std::string(1, char(type)) +
                "' messages are " + std::to_string(expect) + " bytes");
  }
}

bool DayFileReader::refill() {
  std::uint8_t* const b = buffer_.get();
  const std::size_t held = end_ - pos_;
  if (held >= 2 && b[pos_] == 0 && b[pos_ + 1] == 0) {
    pos_ += 2;  // the end-of-session marker is consumed; nothing after it is read
    zero_length_end_ = true;
    at_end_ = true;
    return false;
  }
  if (pos_ > 0) {  // keep the partial record, at the front, and make room for a chunk after it
    std::memmove(b, b + pos_, held);
    buffer_offset_ += pos_;
    pos_ = 0;
    end_ = held;
  }
  const std::size_t got = source_->read(b + end_, std::min(chunk_bytes_, capacity_ - end_));
  if (got > 0) {
    end_ += got;
    return true;
  }
  at_end_ = true;
  const std::uint64_t offset = buffer_offset_ + pos_;
  if (!source_->error().empty()) {
    error_ = "day file '" + name_ + "': " + source_->error() + " (after record " + std::to_string(records_) +
             ", uncompressed byte offset " + std::to_string(offset) + ")";
  } else if (held > 0) {
    const std::string need = held >= 2 ? std::to_string(2 + ((std::size_t{b[0]} << 8) | b[1])) : "at least 2";
    error_ = "day file '" + name_ + "': truncated record " + std::to_string(records_ + 1) + " at byte offset " +
             std::to_string(offset) + ": the file ends after " + std::to_string(held) + " of its " + need +
             " bytes";
  }
  return false;
}

}  // namespace tickinfer::itch
