// libFuzzer: arbitrary bytes as a Nasdaq day file (raw, or gzip when they start 1f 8b), read
// through DayFileReader::from_memory with a chunk size and batch size taken from the first two
// bytes, so records straddle chunks. Refusals (tickinfer::Error) are fine; a crash, a hang or a
// record that is not exactly the next bytes of the decoded stream is not (__builtin_trap).
// The decoded stream is worked out here independently: the input itself, or zlib's inflate of
// it, member after member, capped so a gzip bomb cannot exhaust memory.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "itch/day_file.hpp"
#include "tickinfer/error.hpp"

namespace {

constexpr std::size_t kInflateCap = 16u << 20;

// Inflates every gzip member of `in`; `complete` is false when the cap cut it short.
std::vector<std::uint8_t> inflate_all(std::span<const std::uint8_t> in, bool& complete) {
  std::vector<std::uint8_t> out;
  complete = true;
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) __builtin_trap();
  zs.next_in = const_cast<Bytef*>(in.data());
  zs.avail_in = static_cast<uInt>(in.size());
  std::uint8_t buf[65536];
  for (;;) {
    zs.next_out = buf;
    zs.avail_out = sizeof buf;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    out.insert(out.end(), buf, buf + (sizeof buf - zs.avail_out));
    if (out.size() > kInflateCap) {
      complete = false;
      break;
    }
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      inflateReset(&zs);
    } else if (rc != Z_OK) {
      break;  // corrupt or truncated: the reader must stop at the same place
    }
  }
  inflateEnd(&zs);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t chunk = data[0] < 200 ? 1 + data[0] % 64 : std::size_t{1} << 16;
  const std::size_t batch = 1 + data[1] % 16;
  const std::span<const std::uint8_t> file(data + 2, size - 2);
  const bool gzip = file.size() >= 2 && file[0] == 0x1f && file[1] == 0x8b;
  bool complete = true;
  std::vector<std::uint8_t> inflated;
  if (gzip) inflated = inflate_all(file, complete);
  const std::span<const std::uint8_t> stream = gzip ? std::span<const std::uint8_t>(inflated) : file;
  try {
    auto reader = tickinfer::itch::DayFileReader::from_memory(file, chunk);
    std::uint64_t next_seq = 1, offset = 0;
    std::size_t got;
    do {
      got = reader.read(
          [&](const tickinfer::itch::DayRecord& r) {
            if (r.seq != next_seq++ || r.len == 0) __builtin_trap();
            const std::uint64_t end = offset + 2 + r.len;
            if (end <= stream.size()) {
              if (((stream[offset] << 8) | stream[offset + 1]) != r.len) __builtin_trap();
              if (std::memcmp(stream.data() + offset + 2, r.msg, r.len) != 0) __builtin_trap();
            } else if (complete) {
              __builtin_trap();  // a record the input does not hold
            }
            offset = end;
          },
          batch);
      if (got > batch) __builtin_trap();
    } while (got > 0);
    if (!reader.at_end() || reader.records() != next_seq - 1) __builtin_trap();
    const std::uint64_t consumed = offset + (reader.ended_by_zero_length() ? 2 : 0);
    if (reader.bytes_read() != consumed) __builtin_trap();
    if (!gzip && reader.error().empty() && !reader.ended_by_zero_length() && consumed != file.size()) {
      __builtin_trap();  // a raw file read cleanly to its end is consumed exactly
    }
  } catch (const tickinfer::Error&) {
  }
  return 0;
}
