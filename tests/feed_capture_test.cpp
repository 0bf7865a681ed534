// Capture files: round trip, CRC against the standard CRC-32 check value, truncated tails at
// every cut point, and corruption in the middle (only the damaged record is lost).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>

#include "feed/capture_file.hpp"
#include "stats/crc32.hpp"
#include "tickinfer/error.hpp"
#include "support/source_paths.hpp"

namespace tickinfer::feed {
namespace {

std::string temp_path(const char* name) {
  return std::string(::tickinfer::test::binary_dir()) + "/feed_capture_" + name + ".cap";
}
std::vector<std::uint8_t> slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<CaptureRecord> sample_records(int n) {
  std::mt19937 rng(11);
  std::vector<CaptureRecord> out;
  for (int i = 0; i < n; ++i) {
    CaptureRecord r;
    r.rx_ns = 1'700'000'000'000'000'000LL + i * 1000;
    r.line = static_cast<std::uint8_t>(i % 3);
    r.payload.resize(rng() % 200);
    for (auto& b : r.payload) b = static_cast<std::uint8_t>(rng());
    out.push_back(r);
  }
  return out;
}

void write_all(const std::string& path, const std::vector<CaptureRecord>& rs) {
  CaptureWriter w(path);
  for (const auto& r : rs) w.write(r.rx_ns, r.line, r.payload.data(), r.payload.size());
  w.flush();
}

void expect_prefix(const CaptureContents& got, const std::vector<CaptureRecord>& want, std::size_t n) {
  ASSERT_EQ(got.records.size(), n);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(got.records[i].rx_ns, want[i].rx_ns);
    EXPECT_EQ(got.records[i].line, want[i].line);
    EXPECT_EQ(got.records[i].payload, want[i].payload);
  }
}

TEST(FeedCapture, Crc32IsTheStandardIeeeCrc) {
  const char* check = "123456789";  // the published CRC-32 check value is 0xCBF43926
  EXPECT_EQ(stats::crc32(reinterpret_cast<const std::uint8_t*>(check), 9), 0xCBF43926u);
}

TEST(FeedCapture, RecordsRoundTrip) {
  const auto rs = sample_records(100);
  const std::string p = temp_path("roundtrip");
  write_all(p, rs);
  const CaptureContents c = read_capture(p);
  expect_prefix(c, rs, rs.size());
  EXPECT_FALSE(c.truncated_tail);
  EXPECT_EQ(c.corrupt_records, 0u);
}

TEST(FeedCapture, ATruncatedTailIsDetectedAndEverythingBeforeItKept) {
  const auto rs = sample_records(5);
  const std::string p = temp_path("trunc");
  write_all(p, rs);
  const auto bytes = slurp(p);
  std::vector<std::size_t> ends = {16};  // record boundaries
  for (const auto& r : rs) ends.push_back(ends.back() + 24 + r.payload.size());
  for (std::size_t cut = 16; cut < bytes.size(); ++cut) {
    const CaptureContents c = parse_capture(bytes.data(), cut, "cut");
    std::size_t complete = 0;
    while (complete + 1 < ends.size() && ends[complete + 1] <= cut) ++complete;
    expect_prefix(c, rs, complete);
    EXPECT_EQ(c.truncated_tail, ends[complete] != cut) << cut;
    EXPECT_EQ(c.corrupt_records, 0u) << cut;
  }
}

TEST(FeedCapture, ACorruptRecordLosesOnlyItself) {
  const auto rs = sample_records(10);
  const std::string p = temp_path("corrupt");
  write_all(p, rs);
  auto bytes = slurp(p);
  std::size_t off = 16;
  for (int i = 0; i < 4; ++i) off += 24 + rs[i].payload.size();
  bytes[off + 30 < bytes.size() ? off + 24 : off + 5] ^= 0x40;  // damage record 4
  const CaptureContents c = parse_capture(bytes.data(), bytes.size(), "corrupt");
  EXPECT_EQ(c.corrupt_records, 1u);
  EXPECT_FALSE(c.truncated_tail);
  ASSERT_EQ(c.records.size(), 9u);
  for (std::size_t i = 0, j = 0; i < rs.size(); ++i) {
    if (i == 4) continue;
    EXPECT_EQ(c.records[j].payload, rs[i].payload);
    EXPECT_EQ(c.records[j].rx_ns, rs[i].rx_ns);
    ++j;
  }
}

TEST(FeedCapture, NotACaptureFileIsAClearError) {
  const std::uint8_t junk[20] = {'n', 'o', 'p', 'e'};
  try {
    parse_capture(junk, sizeof junk, "junk.cap");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("junk.cap"), std::string::npos);
  }
  EXPECT_THROW(read_capture(temp_path("does_not_exist_dir/x")), Error);
}

}  // namespace
}  // namespace tickinfer::feed
