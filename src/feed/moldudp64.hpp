#pragma once
// MoldUDP64 framing (Nasdaq's session layer over UDP), byte for byte as docs/feed-wire-format.md
// describes it:
//
//   offset 0  Session         10 bytes, ASCII alphanumeric (space padded): names the sequence space
//   offset 10 Sequence Number  8 bytes, big-endian: the sequence number of the FIRST message block
//   offset 18 Message Count    2 bytes, big-endian: 0 = heartbeat, 0xFFFF = end of session
//   offset 20 message blocks:  2-byte big-endian length (not counting itself), then that many bytes
//
// A heartbeat / end-of-session packet carries, in its Sequence Number, the NEXT expected
// sequence number. A re-request packet has the same 20-byte layout, with the first missing
// sequence number and the number of messages wanted.
//
// parse_packet() validates the whole packet before it returns Ok: every block length fits inside
// the datagram, there are exactly `count` blocks and no trailing bytes, and seq + count does not
// wrap. After Ok, MessageCursor can walk the blocks without further bounds checks. Nothing here
// ever reads outside [data, data + len).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tickinfer/feed_stats.hpp"

namespace tickinfer::feed {

inline constexpr std::size_t kHeaderBytes = 20;
inline constexpr std::size_t kSessionBytes = 10;
inline constexpr std::uint16_t kEndOfSessionCount = 0xFFFF;
// The largest UDP payload over IPv4 (65535 - 20 IP - 8 UDP).
inline constexpr std::size_t kMaxDatagramBytes = 65507;

// The 10-byte session name, kept as raw bytes (comparison is a 10-byte memcmp).
struct Session {
  std::array<char, kSessionBytes> bytes{' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};

  // Pads `name` with spaces on the right. Throws tickinfer::Error if it is longer than 10
  // characters or contains anything but ASCII letters and digits.
  static Session from(std::string_view name);
  std::string str() const;  // trailing spaces removed
  bool operator==(const Session& o) const noexcept { return bytes == o.bytes; }
  bool operator!=(const Session& o) const noexcept { return !(bytes == o.bytes); }
};

enum class PacketKind : std::uint8_t { Data, Heartbeat, EndOfSession };

// A validated packet. `blocks` points into the caller's buffer, which must outlive the view.
struct PacketView {
  Session session;
  std::uint64_t seq = 0;      // Data: seq of the first block; control: the next expected seq
  std::uint16_t count = 0;    // number of message blocks (0 for control packets)
  PacketKind kind = PacketKind::Data;
  const std::uint8_t* blocks = nullptr;
  std::size_t blocks_len = 0;
  std::uint64_t end_seq() const noexcept { return seq + count; }  // one past the last message
};

// Validates and decodes one datagram. max_message_bytes bounds a single block (the sequencer's
// slot size); max_packet_bytes bounds the datagram. Never throws, never reads out of bounds.
ParseStatus parse_packet(const std::uint8_t* data, std::size_t len, PacketView& out,
                         std::size_t max_message_bytes = 0xFFFF,
                         std::size_t max_packet_bytes = kMaxDatagramBytes) noexcept;

// Walks the blocks of a packet that parse_packet() accepted.
class MessageCursor {
 public:
  explicit MessageCursor(const PacketView& p) noexcept : p_(p.blocks), end_(p.blocks + p.blocks_len) {}
  // Sets msg/len to the next block and returns true, or returns false at the end.
  bool next(const std::uint8_t*& msg, std::uint16_t& len) noexcept {
    if (end_ - p_ < 2) return false;
    len = static_cast<std::uint16_t>((p_[0] << 8) | p_[1]);
    msg = p_ + 2;
    p_ += 2 + len;
    return true;
  }

 private:
  const std::uint8_t* p_;
  const std::uint8_t* end_;
};

// Builds one downstream packet into a caller-owned buffer (no allocation).
class PacketBuilder {
 public:
  PacketBuilder(std::uint8_t* buffer, std::size_t capacity) noexcept : buf_(buffer), cap_(capacity) {}
  void start(const Session& session, std::uint64_t first_seq) noexcept;
  // Appends one block; false (and nothing written) if it would not fit or the packet already
  // holds 65534 blocks.
  bool add(const std::uint8_t* msg, std::uint16_t len) noexcept;
  std::uint16_t count() const noexcept { return count_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t room() const noexcept { return cap_ - size_; }
  // Writes the message count and returns the packet size in bytes.
  std::size_t finish() noexcept;

 private:
  std::uint8_t* buf_;
  std::size_t cap_;
  std::size_t size_ = 0;
  std::uint16_t count_ = 0;
};

// Heartbeat (end_of_session = false) or End of Session packet announcing next_seq. Writes 20
// bytes; out must have room for them.
std::size_t encode_control(std::uint8_t* out, const Session& session, std::uint64_t next_seq,
                           bool end_of_session) noexcept;

// Re-request packet: 20 bytes asking for `count` messages from `first`.
std::size_t encode_request(std::uint8_t* out, const Session& session, std::uint64_t first,
                           std::uint16_t count) noexcept;

// Parses a re-request. Ok only for exactly 20 bytes, count in [1, 0xFFFE], first >= 1 and no
// wrap; otherwise TooShort/TrailingBytes/SequenceOverflow/ControlWithData (count 0 or 0xFFFF).
ParseStatus parse_request(const std::uint8_t* data, std::size_t len, Session& session,
                          std::uint64_t& first, std::uint16_t& count) noexcept;

}  // namespace tickinfer::feed
