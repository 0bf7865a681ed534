// The feature-vector datagram (features/feature_datagram.hpp): the byte layout the document
// gives, written out here by hand; a round trip of several records; and every kind of damage
// refused with its reason, never read past the bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "features/feature_datagram.hpp"

namespace tickinfer::features {
namespace {

TEST(FeatureDatagram, LayoutIsTheDocumentedOne) {
  std::vector<std::uint8_t> b(kFeatureDatagramHeaderBytes + feature_record_bytes(2));
  encode_feature_header(b.data(), 2, 1, 0x0102030405060708ull, 0x1122334455667788ull);
  RingRecord r;
  r.instrument = 0xA1B2C3D4;
  r.flags = 3;
  r.tick_seq = 9;
  r.ts_ns = -2;
  r.published_ns = 7;
  const double v[2] = {1.0, -0.5};
  encode_feature_record(b.data() + kFeatureDatagramHeaderBytes, r, v, 2);
  const std::uint8_t header[32] = {'T', 'I', 'F', 'V', 1, 0, 2, 0, 1, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1,
                                   0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0, 0, 0, 0};
  EXPECT_EQ(std::memcmp(b.data(), header, 32), 0);
  const std::uint8_t record_head[32] = {0xD4, 0xC3, 0xB2, 0xA1, 3, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0,
                                        0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 7, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(std::memcmp(b.data() + 32, record_head, 32), 0);
  const std::uint8_t one[8] = {0, 0, 0, 0, 0, 0, 0xF0, 0x3F};  // 1.0 as IEEE-754 little-endian
  EXPECT_EQ(std::memcmp(b.data() + 64, one, 8), 0);
  EXPECT_EQ(feature_records_per_datagram(10), 12u);  // (1472 - 32) / 112
  EXPECT_GE(feature_records_per_datagram(kMaxFeatures), 1u);
}

TEST(FeatureDatagram, RecordsRoundTrip) {
  const std::size_t w = 3, n = 5;
  std::vector<std::uint8_t> b(kFeatureDatagramHeaderBytes + n * feature_record_bytes(w));
  encode_feature_header(b.data(), w, n, 100, 42);
  for (std::size_t i = 0; i < n; ++i) {
    RingRecord r;
    r.instrument = static_cast<std::uint32_t>(i + 1);
    r.tick_seq = 1000 + i;
    const double v[3] = {static_cast<double>(i), 0.25, -1e300};
    encode_feature_record(b.data() + kFeatureDatagramHeaderBytes + i * feature_record_bytes(w), r, v, w);
  }
  FeatureDatagram d;
  std::string why;
  ASSERT_TRUE(decode_feature_datagram(b.data(), b.size(), d, &why)) << why;
  EXPECT_EQ(d.first, 100u);
  EXPECT_EQ(d.feature_set_id, 42u);
  ASSERT_EQ(d.count, n);
  for (std::size_t i = 0; i < n; ++i) {
    RingRecord r;
    double v[3];
    decode_feature_record(d, i, r, v);
    EXPECT_EQ(r.instrument, i + 1);
    EXPECT_EQ(r.tick_seq, 1000 + i);
    EXPECT_EQ(v[0], static_cast<double>(i));
    EXPECT_EQ(v[2], -1e300);
  }
}

TEST(FeatureDatagram, DamageIsRefusedWithItsReason) {
  std::vector<std::uint8_t> good(kFeatureDatagramHeaderBytes + 2 * feature_record_bytes(4));
  encode_feature_header(good.data(), 4, 2, 0, 1);
  auto why = [](std::vector<std::uint8_t> b) {
    FeatureDatagram d;
    std::string w;
    return decode_feature_datagram(b.data(), b.size(), d, &w) ? std::string("accepted") : w;
  };
  EXPECT_EQ(why(good), "accepted");
  EXPECT_NE(why(std::vector<std::uint8_t>(good.begin(), good.begin() + 31)).find("shorter than its 32-byte header"),
            std::string::npos);
  auto b = good;
  b[0] = 'X';
  EXPECT_NE(why(b).find("bad magic"), std::string::npos);
  b = good;
  b[4] = 2;
  EXPECT_NE(why(b).find("version 2"), std::string::npos);
  b = good;
  b[6] = 65;
  EXPECT_NE(why(b).find("width 65"), std::string::npos);
  b = good;
  b[8] = 0;
  EXPECT_NE(why(b).find("no record"), std::string::npos);
  b = good;
  b[8] = 3;  // claims a third record the bytes do not hold
  EXPECT_NE(why(b).find("3 records of 4 features need"), std::string::npos);
  b = good;
  b.push_back(0);
  EXPECT_NE(why(b).find("need"), std::string::npos);
  b = good;
  b[29] = 1;
  EXPECT_NE(why(b).find("reserved header bytes"), std::string::npos);
}

}  // namespace
}  // namespace tickinfer::features
