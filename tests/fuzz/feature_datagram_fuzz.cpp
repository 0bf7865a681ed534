// libFuzzer: the feature-vector datagram decoder on arbitrary bytes. Invariants: never crash or
// read outside the input; a decoded datagram's records re-encode to exactly the input bytes.
#include <cstdint>
#include <cstring>
#include <vector>

#include "features/feature_datagram.hpp"

using namespace tickinfer::features;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FeatureDatagram d;
  if (!decode_feature_datagram(data, size, d)) return 0;
  std::vector<std::uint8_t> again(size);
  encode_feature_header(again.data(), d.width, d.count, d.first, d.feature_set_id);
  double v[kMaxFeatures];
  for (std::size_t i = 0; i < d.count; ++i) {
    RingRecord r;
    decode_feature_record(d, i, r, v);
    if (r.flags > 0xFFFFFFFFull) __builtin_trap();
    encode_feature_record(again.data() + kFeatureDatagramHeaderBytes + i * feature_record_bytes(d.width), r, v, d.width);
  }
  if (std::memcmp(again.data(), data, size) != 0) __builtin_trap();
  return 0;
}
