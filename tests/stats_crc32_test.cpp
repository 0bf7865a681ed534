// stats::crc32 (slicing-by-8) against the published CRC-32 check values and against the
// definition itself: a bit-at-a-time division by the reflected polynomial, at every length and
// alignment the 8-byte steps and the byte tail can meet.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "stats/crc32.hpp"

namespace {

std::uint32_t crc32_bitwise(const std::uint8_t* p, std::size_t n, std::uint32_t crc = 0) {
  crc = ~crc;
  for (std::size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

const std::uint8_t* bytes(const char* s) { return reinterpret_cast<const std::uint8_t*>(s); }

TEST(Crc32, PublishedCheckValues) {
  EXPECT_EQ(tickinfer::stats::crc32(bytes("123456789"), 9), 0xCBF43926u);
  EXPECT_EQ(tickinfer::stats::crc32(bytes("The quick brown fox jumps over the lazy dog"), 43), 0x414FA339u);
  EXPECT_EQ(tickinfer::stats::crc32(bytes(""), 0), 0u);
}

TEST(Crc32, EqualsTheBitwiseDefinitionAtEveryLengthAndAlignment) {
  std::mt19937 rng(7);
  std::vector<std::uint8_t> buf(600);
  for (auto& b : buf) b = static_cast<std::uint8_t>(rng());
  for (std::size_t off = 0; off < 8; ++off)
    for (std::size_t n = 0; n <= 300; ++n)
      ASSERT_EQ(tickinfer::stats::crc32(buf.data() + off, n), crc32_bitwise(buf.data() + off, n)) << off << " " << n;
}

TEST(Crc32, ChainsAcrossCalls) {
  std::vector<std::uint8_t> buf(257);
  for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<std::uint8_t>(i * 31 + 7);
  for (std::size_t cut : {0u, 1u, 7u, 8u, 13u, 96u, 256u}) {
    const std::uint32_t first = tickinfer::stats::crc32(buf.data(), cut);
    EXPECT_EQ(tickinfer::stats::crc32(buf.data() + cut, buf.size() - cut, first), crc32_bitwise(buf.data(), buf.size()));
  }
}

}  // namespace
