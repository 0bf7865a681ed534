#include "pipeline/signal_format.hpp"

#include <cstring>

#include "stats/crc32.hpp"

namespace tickinfer::pipeline {
namespace {

// Explicit little-endian stores/loads: the format does not depend on the host.
template <typename T>
void put(std::uint8_t* p, T v) noexcept {
  std::uint64_t u = 0;
  std::memcpy(&u, &v, sizeof(T));
  for (std::size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<std::uint8_t>(u >> (8 * i));
}
template <typename T>
T get(const std::uint8_t* p) noexcept {
  std::uint64_t u = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) u |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  T v;
  std::memcpy(&v, &u, sizeof(T));
  return v;
}

constexpr std::uint8_t kMagic[4] = {'T', 'K', 'S', 'G'};

}  // namespace

const char* to_string(SignalStatus s) noexcept {
  switch (s) {
    case SignalStatus::Ok: return "ok";
    case SignalStatus::TooShort: return "too short";
    case SignalStatus::BadMagic: return "bad magic";
    case SignalStatus::BadVersion: return "unsupported version";
    case SignalStatus::BadScoreCount: return "score count not in 1..4";
    case SignalStatus::BadChecksum: return "checksum mismatch";
  }
  return "?";
}

void encode_signal(const Signal& s, std::uint8_t* o) noexcept {
  std::memcpy(o, kMagic, 4);
  o[4] = kSignalVersion;
  o[5] = s.score_count;
  o[6] = static_cast<std::uint8_t>(s.decision);
  o[7] = s.flags;
  put<std::uint64_t>(o + 8, s.signal_seq);
  put<std::uint64_t>(o + 16, s.tick_seq);
  put<std::uint32_t>(o + 24, s.instrument);
  put<std::uint32_t>(o + 28, s.model_version);
  std::memset(o + 32, 0, kModelNameBytes);
  for (std::size_t i = 0; i + 1 < kModelNameBytes && s.model_name[i]; ++i) o[32 + i] = static_cast<std::uint8_t>(s.model_name[i]);
  put<std::int64_t>(o + 48, s.exchange_ts_ns);
  put<std::int64_t>(o + 56, s.kernel_rx_ns);
  put<std::int64_t>(o + 64, s.sent_ns);
  put<std::uint32_t>(o + 72, s.rx_to_signal_ns);
  for (int i = 0; i < kMaxScores; ++i) put<float>(o + 76 + 4 * i, i < s.score_count ? s.scores[i] : 0.0f);
  put<std::uint32_t>(o + 92, stats::crc32(o, 92));
}

SignalStatus decode_signal(const std::uint8_t* d, std::size_t len, Signal& out) noexcept {
  if (len < kSignalBytes) return SignalStatus::TooShort;
  if (std::memcmp(d, kMagic, 4) != 0) return SignalStatus::BadMagic;
  if (d[4] != kSignalVersion) return SignalStatus::BadVersion;
  if (d[5] < 1 || d[5] > kMaxScores) return SignalStatus::BadScoreCount;
  if (get<std::uint32_t>(d + 92) != stats::crc32(d, 92)) return SignalStatus::BadChecksum;
  Signal s;
  s.score_count = d[5];
  s.decision = static_cast<std::int8_t>(d[6]);
  s.flags = d[7];
  s.signal_seq = get<std::uint64_t>(d + 8);
  s.tick_seq = get<std::uint64_t>(d + 16);
  s.instrument = get<std::uint32_t>(d + 24);
  s.model_version = get<std::uint32_t>(d + 28);
  std::memcpy(s.model_name, d + 32, kModelNameBytes);
  s.model_name[kModelNameBytes - 1] = '\0';
  s.exchange_ts_ns = get<std::int64_t>(d + 48);
  s.kernel_rx_ns = get<std::int64_t>(d + 56);
  s.sent_ns = get<std::int64_t>(d + 64);
  s.rx_to_signal_ns = get<std::uint32_t>(d + 72);
  for (int i = 0; i < kMaxScores; ++i) s.scores[i] = get<float>(d + 76 + 4 * i);
  out = s;
  return SignalStatus::Ok;
}

std::uint64_t fingerprint(const float* values, std::size_t n) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ull;
  const auto* b = reinterpret_cast<const std::uint8_t*>(values);
  for (std::size_t i = 0; i < n * sizeof(float); ++i) {
    h ^= b[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace tickinfer::pipeline
