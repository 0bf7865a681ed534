#pragma once
// The signal message: what `tickinfer run` sends over UDP and writes into the shared-memory ring,
// one per model run. Fixed size (kSignalBytes = 96), little-endian, byte layout in
// docs/signal-format.md. The last 4 bytes are a CRC-32 (zlib polynomial) of the first 92, so a
// reader can tell a torn or corrupted message from a good one.
//
// encode_signal never fails (names longer than 15 bytes are cut); decode_signal returns a
// SignalStatus and leaves `out` untouched unless the status is Ok. Both are noexcept, allocation
// free and safe on any input bytes (fuzzed by tests/fuzz/signal_fuzz.cpp).
#include <cstddef>
#include <cstdint>

namespace tickinfer::pipeline {

inline constexpr std::size_t kSignalBytes = 96;
// A UDP signal datagram carries 1..15 messages back to back (1440 bytes: one Ethernet frame).
inline constexpr std::size_t kMaxSignalsPerDatagram = 15;
inline constexpr std::uint8_t kSignalVersion = 1;
inline constexpr int kMaxScores = 4;
inline constexpr std::size_t kModelNameBytes = 16;  // NUL-padded, at most 15 characters

// flags
inline constexpr std::uint8_t kSignalDegraded = 1;  // the feed reported loss since the last signal
// The triggering tick came by re-request, not live: it is history (a late joiner's catch-up, a
// filled gap), and a strategy may want to act on live ticks only.
inline constexpr std::uint8_t kSignalRecovered = 2;

struct Signal {
  std::uint64_t signal_seq = 0;     // per sender, from 1, no gaps: a reader sees what it missed
  std::uint64_t tick_seq = 0;       // MoldUDP64 sequence of the triggering tick
  std::uint32_t instrument = 0;
  std::uint32_t model_version = 0;
  char model_name[kModelNameBytes] = {};
  std::int64_t exchange_ts_ns = 0;  // the triggering tick's exchange timestamp
  std::int64_t kernel_rx_ns = 0;    // when the kernel received the tick's datagram (CLOCK_REALTIME)
  std::int64_t sent_ns = 0;         // stamped just before the message leaves (CLOCK_REALTIME)
  std::uint32_t rx_to_signal_ns = 0;  // sent_ns - kernel_rx_ns, saturated at 2^32-1
  std::int8_t decision = 0;         // +1 / -1 / 0 from score 0, the model's center and threshold
  std::uint8_t score_count = 0;     // 1..4
  std::uint8_t flags = 0;
  float scores[kMaxScores] = {};
};

enum class SignalStatus : std::uint8_t { Ok, TooShort, BadMagic, BadVersion, BadScoreCount, BadChecksum };
const char* to_string(SignalStatus s) noexcept;

// Writes exactly kSignalBytes bytes.
void encode_signal(const Signal& s, std::uint8_t* out) noexcept;
SignalStatus decode_signal(const std::uint8_t* data, std::size_t len, Signal& out) noexcept;

// FNV-1a 64 over the bytes of n floats: the decision log's input fingerprint.
std::uint64_t fingerprint(const float* values, std::size_t n) noexcept;

}  // namespace tickinfer::pipeline
