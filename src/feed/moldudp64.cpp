#include "feed/moldudp64.hpp"

#include <cstring>

#include "feed/byte_order.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::feed {

Session Session::from(std::string_view name) {
  if (name.size() > kSessionBytes) {
    throw Error("session '" + std::string(name) + "': longer than 10 characters");
  }
  Session s;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    if (!alnum) throw Error("session '" + std::string(name) + "': only ASCII letters and digits allowed");
    s.bytes[i] = c;
  }
  return s;
}

std::string Session::str() const {
  std::string s(bytes.begin(), bytes.end());
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

const char* to_string(ParseStatus status) noexcept {
  switch (status) {
    case ParseStatus::Ok: return "ok";
    case ParseStatus::TooShort: return "too short for a MoldUDP64 header";
    case ParseStatus::TooLong: return "datagram too long";
    case ParseStatus::BlockHeaderTruncated: return "message block length truncated";
    case ParseStatus::BlockTruncated: return "message block runs past the datagram";
    case ParseStatus::MessageTooLong: return "message block longer than the configured maximum";
    case ParseStatus::TrailingBytes: return "bytes after the last message block";
    case ParseStatus::SequenceOverflow: return "sequence number + count wraps";
    case ParseStatus::ControlWithData: return "heartbeat/end-of-session packet carries data";
  }
  return "unknown";
}

const char* key_of(ParseStatus status) noexcept {
  switch (status) {
    case ParseStatus::Ok: return "ok";
    case ParseStatus::TooShort: return "too_short";
    case ParseStatus::TooLong: return "too_long";
    case ParseStatus::BlockHeaderTruncated: return "block_header_truncated";
    case ParseStatus::BlockTruncated: return "block_truncated";
    case ParseStatus::MessageTooLong: return "message_too_long";
    case ParseStatus::TrailingBytes: return "trailing_bytes";
    case ParseStatus::SequenceOverflow: return "sequence_overflow";
    case ParseStatus::ControlWithData: return "control_with_data";
  }
  return "unknown";
}

ParseStatus parse_packet(const std::uint8_t* data, std::size_t len, PacketView& out,
                         std::size_t max_message_bytes, std::size_t max_packet_bytes) noexcept {
  if (len < kHeaderBytes) return ParseStatus::TooShort;
  if (len > max_packet_bytes || len > kMaxDatagramBytes) return ParseStatus::TooLong;
  std::memcpy(out.session.bytes.data(), data, kSessionBytes);
  out.seq = load_be64(data + 10);
  const std::uint16_t count = load_be16(data + 18);
  out.blocks = data + kHeaderBytes;
  out.blocks_len = len - kHeaderBytes;
  if (count == 0 || count == kEndOfSessionCount) {
    if (out.blocks_len != 0) return ParseStatus::ControlWithData;
    out.kind = count == 0 ? PacketKind::Heartbeat : PacketKind::EndOfSession;
    out.count = 0;
    return ParseStatus::Ok;
  }
  if (out.seq > UINT64_MAX - count) return ParseStatus::SequenceOverflow;
  // Walk every block once so the cursor later needs no checks.
  const std::uint8_t* p = out.blocks;
  const std::uint8_t* end = data + len;
  for (std::uint16_t i = 0; i < count; ++i) {
    if (end - p < 2) return ParseStatus::BlockHeaderTruncated;
    const std::size_t n = load_be16(p);
    if (n > max_message_bytes) return ParseStatus::MessageTooLong;
    if (static_cast<std::size_t>(end - p) - 2 < n) return ParseStatus::BlockTruncated;
    p += 2 + n;
  }
  if (p != end) return ParseStatus::TrailingBytes;
  out.kind = PacketKind::Data;
  out.count = count;
  return ParseStatus::Ok;
}

void PacketBuilder::start(const Session& session, std::uint64_t first_seq) noexcept {
  std::memcpy(buf_, session.bytes.data(), kSessionBytes);
  store_be64(buf_ + 10, first_seq);
  store_be16(buf_ + 18, 0);
  size_ = kHeaderBytes;
  count_ = 0;
}

bool PacketBuilder::add(const std::uint8_t* msg, std::uint16_t len) noexcept {
  if (count_ >= kEndOfSessionCount - 1 || cap_ - size_ < 2u + len) return false;
  store_be16(buf_ + size_, len);
  if (len) std::memcpy(buf_ + size_ + 2, msg, len);
  size_ += 2u + len;
  ++count_;
  return true;
}

std::size_t PacketBuilder::finish() noexcept {
  store_be16(buf_ + 18, count_);
  return size_;
}

std::size_t encode_control(std::uint8_t* out, const Session& session, std::uint64_t next_seq,
                           bool end_of_session) noexcept {
  std::memcpy(out, session.bytes.data(), kSessionBytes);
  store_be64(out + 10, next_seq);
  store_be16(out + 18, end_of_session ? kEndOfSessionCount : 0);
  return kHeaderBytes;
}

std::size_t encode_request(std::uint8_t* out, const Session& session, std::uint64_t first,
                           std::uint16_t count) noexcept {
  std::memcpy(out, session.bytes.data(), kSessionBytes);
  store_be64(out + 10, first);
  store_be16(out + 18, count);
  return kHeaderBytes;
}

ParseStatus parse_request(const std::uint8_t* data, std::size_t len, Session& session,
                          std::uint64_t& first, std::uint16_t& count) noexcept {
  if (len < kHeaderBytes) return ParseStatus::TooShort;
  if (len > kHeaderBytes) return ParseStatus::TrailingBytes;
  std::memcpy(session.bytes.data(), data, kSessionBytes);
  first = load_be64(data + 10);
  count = load_be16(data + 18);
  if (count == 0 || count == kEndOfSessionCount) return ParseStatus::ControlWithData;
  if (first == 0 || first > UINT64_MAX - count) return ParseStatus::SequenceOverflow;
  return ParseStatus::Ok;
}

}  // namespace tickinfer::feed
