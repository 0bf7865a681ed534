// libFuzzer: arbitrary bytes through the ITCH 5.0 decoder, whole and as every prefix (each in a
// buffer of exactly its size, so the sanitizer sees any read past the end). Invariants are
// checked with __builtin_trap: the status agrees with the length table, an accepted message's
// header matches its bytes, and the counters add up.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "itch/itch_decoder.hpp"
#include "itch/itch_messages.hpp"

namespace {

using tickinfer::itch::DecodeCounters;
using tickinfer::itch::DecodeStatus;
using tickinfer::itch::Message;

void check_one(const std::uint8_t* p, std::size_t n, DecodeCounters& counters) {
  Message m;
  m.header.locate = 0xBEEF;
  const DecodeStatus s = tickinfer::itch::decode(p, n, m);
  const std::size_t want = n > 0 ? tickinfer::itch::message_length(p[0]) : 0;
  switch (s) {
    case DecodeStatus::Empty:
      if (n != 0) __builtin_trap();
      break;
    case DecodeStatus::UnknownType:
      if (n == 0 || want != 0) __builtin_trap();
      break;
    case DecodeStatus::WrongLength:
      if (n == 0 || want == 0 || want == n) __builtin_trap();
      if (m.header.locate != 0xBEEF) __builtin_trap();  // nothing delivered
      break;
    case DecodeStatus::Ok: {
      if (want != n || n > tickinfer::itch::kMaxMessageBytes) __builtin_trap();
      if (static_cast<std::uint8_t>(m.type()) != p[0]) __builtin_trap();
      if (m.header.locate != ((p[1] << 8) | p[2])) __builtin_trap();
      if (m.header.tracking != ((p[3] << 8) | p[4])) __builtin_trap();
      std::uint64_t ts = 0;
      for (int i = 5; i < 11; ++i) ts = (ts << 8) | p[i];
      if (m.header.timestamp_ns != ts) __builtin_trap();
      break;
    }
  }
  counters.count(n > 0 ? p[0] : 0, s);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  DecodeCounters counters;
  check_one(data, size, counters);
  const std::size_t prefixes = size < 64 ? size : 64;
  for (std::size_t n = 0; n <= prefixes; ++n) {
    std::unique_ptr<std::uint8_t[]> exact(new std::uint8_t[n > 0 ? n : 1]);
    if (n > 0) std::memcpy(exact.get(), data, n);
    check_one(exact.get(), n, counters);
  }
  std::uint64_t per_type = 0;
  for (int t = 0; t < 256; ++t) per_type += counters.decoded[t] + counters.unknown_type[t] + counters.wrong_length[t];
  if (per_type + counters.total_empty != counters.total() || counters.total() != prefixes + 2) __builtin_trap();
  return 0;
}
