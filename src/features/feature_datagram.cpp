#include "features/feature_datagram.hpp"

#include <cstring>

namespace tickinfer::features {
namespace {

constexpr std::uint8_t kMagic[4] = {'T', 'I', 'F', 'V'};
constexpr std::uint16_t kVersion = 1;

template <class T>
void put(std::uint8_t* p, T v) noexcept {
  std::memcpy(p, &v, sizeof v);  // little-endian hosts only (static_assert below)
}
template <class T>
T get(const std::uint8_t* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the feature datagram is little-endian on the wire");

bool fail(std::string* error, const std::string& what) {
  if (error) *error = what;
  return false;
}

}  // namespace

void encode_feature_header(std::uint8_t* out, std::size_t width, std::size_t count, std::uint64_t first,
                           std::uint64_t feature_set_id) noexcept {
  std::memcpy(out, kMagic, 4);
  put<std::uint16_t>(out + 4, kVersion);
  put<std::uint16_t>(out + 6, static_cast<std::uint16_t>(width));
  put<std::uint16_t>(out + 8, static_cast<std::uint16_t>(count));
  put<std::uint16_t>(out + 10, 0);
  put<std::uint64_t>(out + 12, first);
  put<std::uint64_t>(out + 20, feature_set_id);
  put<std::uint32_t>(out + 28, 0);
}

void encode_feature_record(std::uint8_t* out, const RingRecord& r, const double* values, std::size_t width) noexcept {
  put<std::uint32_t>(out, r.instrument);
  put<std::uint32_t>(out + 4, static_cast<std::uint32_t>(r.flags));
  put<std::uint64_t>(out + 8, r.tick_seq);
  put<std::int64_t>(out + 16, r.ts_ns);
  put<std::int64_t>(out + 24, r.published_ns);
  std::memcpy(out + 32, values, 8 * width);
}

bool decode_feature_datagram(const std::uint8_t* data, std::size_t size, FeatureDatagram& d, std::string* error) {
  if (size < kFeatureDatagramHeaderBytes)
    return fail(error, "feature datagram of " + std::to_string(size) + " bytes: shorter than its 32-byte header");
  if (std::memcmp(data, kMagic, 4) != 0) return fail(error, "not a feature datagram (bad magic)");
  if (get<std::uint16_t>(data + 4) != kVersion)
    return fail(error, "feature datagram version " + std::to_string(get<std::uint16_t>(data + 4)) + ", this build reads 1");
  const std::size_t width = get<std::uint16_t>(data + 6), count = get<std::uint16_t>(data + 8);
  if (width == 0 || width > kMaxFeatures)
    return fail(error, "feature datagram width " + std::to_string(width) + " (1 to 64)");
  if (count == 0) return fail(error, "feature datagram with no record");
  if (get<std::uint16_t>(data + 10) != 0 || get<std::uint32_t>(data + 28) != 0)
    return fail(error, "feature datagram: reserved header bytes are not zero");
  if (size != kFeatureDatagramHeaderBytes + count * feature_record_bytes(width))
    return fail(error, "feature datagram of " + std::to_string(size) + " bytes: " + std::to_string(count) + " records of " +
                           std::to_string(width) + " features need " +
                           std::to_string(kFeatureDatagramHeaderBytes + count * feature_record_bytes(width)));
  d.width = width;
  d.count = count;
  d.first = get<std::uint64_t>(data + 12);
  d.feature_set_id = get<std::uint64_t>(data + 20);
  d.records = data + kFeatureDatagramHeaderBytes;
  return true;
}

void decode_feature_record(const FeatureDatagram& d, std::size_t i, RingRecord& r, double* values) noexcept {
  const std::uint8_t* p = d.records + i * feature_record_bytes(d.width);
  r.instrument = get<std::uint32_t>(p);
  r.flags = get<std::uint32_t>(p + 4);
  r.tick_seq = get<std::uint64_t>(p + 8);
  r.ts_ns = get<std::int64_t>(p + 16);
  r.published_ns = get<std::int64_t>(p + 24);
  std::memcpy(values, p + 32, 8 * d.width);
}

}  // namespace tickinfer::features
