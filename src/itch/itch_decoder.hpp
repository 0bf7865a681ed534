#pragma once
// The ITCH 5.0 decoder: one message's bytes (as framed by a day-file record, a MoldUDP64 block or
// a SoupBinTCP packet) to a host-order itch::Message.
//
// What it validates, and what it leaves to its callers:
//  - the type byte must be one of the 23 types of the 5.0 spec (Type), else UnknownType;
//  - the length must equal that type's fixed length (message_length), else WrongLength. A longer
//    block is refused as well as a shorter one: the carrier's length is authoritative, and a
//    length that disagrees with the type means the framing or the file is not what we think;
//  - nothing else. Enumerated values (sides, event codes, trading states, cross types, printable
//    flags...) are copied as they are, unchecked: the spec adds values inside "5.0" (NOII 'A' and
//    'P', for example), and the order book counts the sides it cannot use. Timestamps are not
//    checked against 24 h either.
// On any status but Ok, `out` is left untouched: nothing partial is delivered.
//
// Hot path: a switch on the type byte and fixed-offset loads, no tables, no allocation, no
// exceptions. It reads only [msg, msg + len).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "itch/itch_messages.hpp"

namespace tickinfer::itch {

enum class DecodeStatus : std::uint8_t {
  Ok,           // `out` holds every field of the message
  Empty,        // len == 0: no type byte at all
  UnknownType,  // the first byte is none of the 23 types; skip it by the carrier's length
  WrongLength,  // a known type, but len differs from its fixed length
};

std::string_view to_string(DecodeStatus s) noexcept;

// Decodes the message in [msg, msg + len) into `out`. See the header comment for what is checked.
DecodeStatus decode(const std::uint8_t* msg, std::size_t len, Message& out) noexcept;

// What a stream of decode() calls produced, by the message's first byte (its type byte). The
// caller passes each call's first byte and status to count(); nothing is counted implicitly.
struct DecodeCounters {
  // decoded[t]: calls that returned Ok for a message whose type byte is t (only the 23 type
  // bytes can be non-zero).
  std::array<std::uint64_t, 256> decoded{};
  // unknown_type[b]: calls that returned UnknownType for a message whose first byte is b (the 23
  // type bytes stay zero).
  std::array<std::uint64_t, 256> unknown_type{};
  // wrong_length[t]: calls that returned WrongLength for a message of known type byte t.
  std::array<std::uint64_t, 256> wrong_length{};
  std::uint64_t total_decoded = 0;       // sum of decoded[]
  std::uint64_t total_unknown_type = 0;  // sum of unknown_type[]
  std::uint64_t total_wrong_length = 0;  // sum of wrong_length[]
  std::uint64_t total_empty = 0;         // calls that returned Empty (they have no type byte)

  // Adds one call's outcome. `type` is the message's first byte; it is ignored for Empty.
  void count(std::uint8_t type, DecodeStatus s) noexcept {
    switch (s) {
      case DecodeStatus::Ok:
        ++decoded[type];
        ++total_decoded;
        break;
      case DecodeStatus::UnknownType:
        ++unknown_type[type];
        ++total_unknown_type;
        break;
      case DecodeStatus::WrongLength:
        ++wrong_length[type];
        ++total_wrong_length;
        break;
      case DecodeStatus::Empty:
        ++total_empty;
        break;
    }
  }
  // Every call counted, whatever its status.
  std::uint64_t total() const noexcept {
    return total_decoded + total_unknown_type + total_wrong_length + total_empty;
  }
  // Calls that delivered nothing (every status but Ok).
  std::uint64_t total_rejected() const noexcept { return total() - total_decoded; }
};

}  // namespace tickinfer::itch
