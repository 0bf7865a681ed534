#pragma once
// The feature-vector datagram: how `tickinfer run` ([features] udp = "GROUP:PORT") sends feature
// vectors to consumers on other hosts, several records per UDP datagram (docs/features.md
// "Feature vectors over UDP"). Little-endian:
//   header (32 bytes)  magic "TIFV" | version u16 = 1 | width u16 | count u16 | 0 u16 |
//                      first record number u64 | feature-set id u64 | 0 u32
//   record (32 + 8 * width bytes), count of them:
//                      instrument u32 | flags u32 | tick sequence u64 | exchange ts i64 |
//                      published ns i64 (sender's CLOCK_REALTIME) | width x f64 (raw values)
// Records are numbered from 0 by the sender, so a receiver counts exactly how many it lost (a
// gap in the numbering) and how many came twice or late (a number below the next expected).
// decode_feature_datagram() checks every length and field and never reads outside the bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "features/shm_feature_ring.hpp"

namespace tickinfer::features {

inline constexpr std::size_t kFeatureDatagramHeaderBytes = 32;
inline constexpr std::size_t kFeatureDatagramMaxBytes = 1472;  // one Ethernet frame of UDP payload
inline constexpr std::size_t feature_record_bytes(std::size_t width) { return 32 + 8 * width; }
// Records that fit one datagram of that width (>= 1 for every width up to kMaxFeatures).
inline constexpr std::size_t feature_records_per_datagram(std::size_t width) {
  return (kFeatureDatagramMaxBytes - kFeatureDatagramHeaderBytes) / feature_record_bytes(width);
}

// Writes the header for `count` records starting at record number `first` into out[0..32).
void encode_feature_header(std::uint8_t* out, std::size_t width, std::size_t count, std::uint64_t first,
                           std::uint64_t feature_set_id) noexcept;
// Writes one record at out (feature_record_bytes(width) bytes).
void encode_feature_record(std::uint8_t* out, const RingRecord& r, const double* values, std::size_t width) noexcept;

struct FeatureDatagram {
  std::size_t width = 0, count = 0;
  std::uint64_t first = 0, feature_set_id = 0;
  const std::uint8_t* records = nullptr;  // count records, feature_record_bytes(width) each
};
// false (with `error` saying what) for anything that is not a whole, well-formed datagram.
bool decode_feature_datagram(const std::uint8_t* data, std::size_t size, FeatureDatagram& d, std::string* error = nullptr);
// Record i of a decoded datagram.
void decode_feature_record(const FeatureDatagram& d, std::size_t i, RingRecord& r, double* values) noexcept;

}  // namespace tickinfer::features
