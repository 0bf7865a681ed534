// Nasdaq BinaryFILE day files: raw and gzip (written here with zlib's gz* API) frame the same
// records, whatever the chunk size; the zero-length end, truncation, captures and other files
// given by mistake. Expected records are the ones the test wrote, with their own offsets.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "itch/day_file.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::itch {
namespace {

using Bytes = std::vector<std::uint8_t>;

struct Got {
  std::uint64_t seq;
  Bytes msg;
};

// One ITCH-shaped message: type byte, then `len - 1` bytes derived from `salt`.
Bytes message(char type, std::size_t len, unsigned salt) {
  Bytes m(len);
  m[0] = static_cast<std::uint8_t>(type);
  for (std::size_t i = 1; i < len; ++i) m[i] = static_cast<std::uint8_t>(salt * 31 + i);
  return m;
}

void append_record(Bytes& file, const Bytes& msg) {
  file.push_back(static_cast<std::uint8_t>(msg.size() >> 8));
  file.push_back(static_cast<std::uint8_t>(msg.size()));
  file.insert(file.end(), msg.begin(), msg.end());
}

// A day: S first (a valid start), then a mix of lengths including an unknown type and one
// record of the largest length a 2-byte prefix allows.
std::vector<Bytes> day_messages() {
  std::vector<Bytes> out{message('S', 12, 0), message('R', 39, 1)};
  for (unsigned i = 0; i < 300; ++i) {
    const char types[] = {'A', 'F', 'D', 'E', 'U', 'Z'};
    const std::size_t lens[] = {36, 40, 19, 31, 35, 5};
    out.push_back(message(types[i % 6], lens[i % 6], i + 2));
    if (i == 150) out.push_back(message('Z', 65535, 9));
  }
  out.push_back(message('S', 12, 7));
  return out;
}

Bytes file_of(const std::vector<Bytes>& msgs) {
  Bytes f;
  for (const Bytes& m : msgs) append_record(f, m);
  return f;
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "tickinfer_itch_day_" + std::to_string(::getpid()) + "_" + name;
}

std::string write_raw(const std::string& name, const Bytes& bytes) {
  const std::string p = temp_path(name);
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                           static_cast<std::streamsize>(bytes.size()));
  return p;
}

std::string write_gzip(const std::string& name, const Bytes& bytes) {
  const std::string p = temp_path(name);
  gzFile g = gzopen(p.c_str(), "wb6");
  EXPECT_NE(g, nullptr);
  if (!bytes.empty()) {
    EXPECT_EQ(gzwrite(g, bytes.data(), static_cast<unsigned>(bytes.size())), int(bytes.size()));
  }
  EXPECT_EQ(gzclose(g), Z_OK);
  return p;
}

Bytes slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

std::vector<Got> read_all(DayFileReader& r, std::size_t batch = SIZE_MAX) {
  std::vector<Got> out;
  while (r.read([&](const DayRecord& rec) { out.push_back({rec.seq, Bytes(rec.msg, rec.msg + rec.len)}); },
                batch) > 0) {
  }
  return out;
}

void expect_records(const std::vector<Got>& got, const std::vector<Bytes>& want, std::size_t count) {
  ASSERT_EQ(got.size(), count);
  for (std::size_t i = 0; i < count; ++i) {
    EXPECT_EQ(got[i].seq, i + 1);
    ASSERT_EQ(got[i].msg, want[i]) << "record " << i + 1;
  }
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ItchDayFile, RawAndGzipGiveTheSameRecordsAtEveryChunkSize) {
  const auto msgs = day_messages();
  const Bytes raw = file_of(msgs);
  const std::string raw_path = write_raw("day.bin", raw);
  const std::string gz_path = write_gzip("day.bin.gz", raw);
  const Bytes gz = slurp(gz_path);
  ASSERT_GT(gz.size(), 2u);
  ASSERT_EQ(gz[0], 0x1f);
  for (const std::size_t chunk : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{13},
                                  std::size_t{4096}, DayFileReader::kDefaultChunkBytes}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    for (int kind = 0; kind < 4; ++kind) {
      DayFileReader r = kind == 0   ? DayFileReader(raw_path, chunk)
                        : kind == 1 ? DayFileReader(gz_path, chunk)
                        : kind == 2 ? DayFileReader::from_memory(raw, chunk)
                                    : DayFileReader::from_memory(gz, chunk);
      const auto got = read_all(r);
      expect_records(got, msgs, msgs.size());
      EXPECT_TRUE(r.at_end());
      EXPECT_FALSE(r.ended_by_zero_length());
      EXPECT_EQ(r.error(), "");
      EXPECT_EQ(r.records(), msgs.size());
      EXPECT_EQ(r.bytes_read(), raw.size());
      EXPECT_EQ(r.read([](const DayRecord&) {}), 0u);
    }
  }
  std::remove(raw_path.c_str());
  std::remove(gz_path.c_str());
}

TEST(ItchDayFile, ReadsInBatchesAndNumbersEveryRecord) {
  const auto msgs = day_messages();
  DayFileReader r = DayFileReader::from_memory(file_of(msgs), 7);
  std::size_t n = r.read([](const DayRecord&) {}, 3);
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(r.records(), 3u);
  EXPECT_EQ(r.bytes_read(), 14u + 41u + 38u);  // S(12), R(39), A(36), each with its prefix
  std::vector<std::uint64_t> seqs;
  n = r.read([&](const DayRecord& rec) { seqs.push_back(rec.seq); }, 2);
  EXPECT_EQ(n, 2u);
  EXPECT_EQ(seqs, (std::vector<std::uint64_t>{4, 5}));
  const auto rest = read_all(r, 5);
  EXPECT_EQ(rest.size(), msgs.size() - 5);
  EXPECT_EQ(rest.front().seq, 6u);
  EXPECT_EQ(rest.back().seq, msgs.size());
}

TEST(ItchDayFile, AZeroLengthRecordEndsTheSession) {
  const std::vector<Bytes> msgs{message('S', 12, 1), message('A', 36, 2), message('D', 19, 3)};
  Bytes f = file_of(msgs);
  f.push_back(0);
  f.push_back(0);
  append_record(f, message('D', 19, 4));  // after the end: never read
  for (const std::size_t chunk : {std::size_t{1}, std::size_t{7}, std::size_t{1} << 20}) {
    DayFileReader r = DayFileReader::from_memory(f, chunk);
    expect_records(read_all(r), msgs, 3);
    EXPECT_TRUE(r.at_end());
    EXPECT_TRUE(r.ended_by_zero_length());
    EXPECT_EQ(r.error(), "");
    EXPECT_EQ(r.bytes_read(), 14u + 38u + 21u + 2u);
  }
  const Bytes only_end{0, 0};
  DayFileReader r = DayFileReader::from_memory(only_end);
  EXPECT_EQ(read_all(r).size(), 0u);
  EXPECT_TRUE(r.ended_by_zero_length());
}

TEST(ItchDayFile, ATruncatedLastRecordIsAnErrorNamingItsOffset) {
  const std::vector<Bytes> msgs{message('S', 12, 1), message('A', 36, 2), message('E', 31, 3)};
  const Bytes whole = file_of(msgs);
  const std::size_t last_at = 14 + 38;  // where the E record's prefix starts
  for (const std::size_t cut : {last_at + 1, last_at + 2, last_at + 20, whole.size() - 1}) {
    for (const std::size_t chunk : {std::size_t{7}, std::size_t{1} << 20}) {
      SCOPED_TRACE("cut " + std::to_string(cut) + " chunk " + std::to_string(chunk));
      DayFileReader r = DayFileReader::from_memory(std::span(whole.data(), cut), chunk);
      expect_records(read_all(r), msgs, 2);
      EXPECT_TRUE(r.at_end());
      EXPECT_FALSE(r.ended_by_zero_length());
      EXPECT_NE(r.error().find("truncated record 3 at byte offset 52"), std::string::npos) << r.error();
      EXPECT_EQ(r.bytes_read(), last_at);
    }
  }
}

TEST(ItchDayFile, ATruncatedGzipStreamDeliversWhatCameBeforeAndSaysSo) {
  const auto msgs = day_messages();
  const std::string gz_path = write_gzip("cut.gz", file_of(msgs));
  Bytes gz = slurp(gz_path);
  std::remove(gz_path.c_str());
  gz.resize(gz.size() - 20);  // the trailer and some data
  DayFileReader r = DayFileReader::from_memory(gz, 4096);
  const auto got = read_all(r);
  ASSERT_LE(got.size(), msgs.size());
  expect_records(got, msgs, got.size());
  EXPECT_TRUE(r.at_end());
  EXPECT_NE(r.error().find("gzip"), std::string::npos) << r.error();
}

TEST(ItchDayFile, CorruptGzipMidwayStopsWithAnErrorAfterTheGoodRecords) {
  const auto msgs = day_messages();
  const std::string gz_path = write_gzip("bad.gz", file_of(msgs));
  Bytes gz = slurp(gz_path);
  std::remove(gz_path.c_str());
  for (std::size_t i = gz.size() / 2; i < gz.size() / 2 + 64; ++i) gz[i] ^= 0x5a;
  DayFileReader r = DayFileReader::from_memory(gz, 1024);
  const auto got = read_all(r);
  // The records inflated from the undamaged first part come out intact; zlib may emit some
  // damaged output before its checks fail, so only the start is compared.
  ASSERT_GE(got.size(), 10u);
  expect_records(std::vector<Got>(got.begin(), got.begin() + 10), msgs, 10);
  EXPECT_TRUE(r.at_end());
  EXPECT_NE(r.error().find("corrupt gzip data near compressed byte"), std::string::npos) << r.error();
}

TEST(ItchDayFile, ConcatenatedGzipMembersAreOneDay) {
  const auto msgs = day_messages();
  const std::vector<Bytes> first(msgs.begin(), msgs.begin() + 100), second(msgs.begin() + 100, msgs.end());
  const std::string a = write_gzip("m1.gz", file_of(first)), b = write_gzip("m2.gz", file_of(second));
  Bytes both = slurp(a);
  const Bytes tail = slurp(b);
  both.insert(both.end(), tail.begin(), tail.end());
  std::remove(a.c_str());
  std::remove(b.c_str());
  for (const std::size_t chunk : {std::size_t{7}, std::size_t{1} << 20}) {
    DayFileReader r = DayFileReader::from_memory(both, chunk);
    expect_records(read_all(r), msgs, msgs.size());
    EXPECT_EQ(r.error(), "");
  }
}

TEST(ItchDayFile, AnEmptyFileIsAnEmptyDay) {
  const std::string raw = write_raw("empty.bin", {});
  const std::string gz = write_gzip("empty.gz", {});
  for (const std::string& p : {raw, gz}) {
    DayFileReader r(p);
    EXPECT_EQ(read_all(r).size(), 0u);
    EXPECT_TRUE(r.at_end());
    EXPECT_EQ(r.error(), "");
    EXPECT_EQ(r.records(), 0u);
    std::remove(p.c_str());
  }
}

TEST(ItchDayFile, RefusesCapturesTextAndOtherNonDayFiles) {
  const Bytes pcap{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0};
  const std::string pcap_path = write_raw("cap.pcap", pcap);
  EXPECT_EQ(error_of([&] { DayFileReader r(pcap_path); }),
            "'" + pcap_path + "' is a pcap capture (magic d4c3b2a1), not a Nasdaq day file; read it as a capture");
  std::remove(pcap_path.c_str());

  const Bytes pcap_be{0xa1, 0xb2, 0xc3, 0xd4, 0, 2, 0, 4};
  EXPECT_NE(error_of([&] { DayFileReader::from_memory(pcap_be); }).find("is a pcap capture (magic a1b2c3d4)"),
            std::string::npos);
  const Bytes pcapng{0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0, 0x4d, 0x3c, 0x2b, 0x1a};
  EXPECT_NE(error_of([&] { DayFileReader::from_memory(pcapng); }).find("is a pcapng capture (magic 0a0d0d0a)"),
            std::string::npos);
  const std::string gz_pcap = write_gzip("cap.pcap.gz", pcap);  // gzip is looked through
  EXPECT_NE(error_of([&] { DayFileReader r(gz_pcap); }).find("is a pcap capture"), std::string::npos);
  std::remove(gz_pcap.c_str());

  const std::string text = "timestamp,symbol,price\n1,AAPL,100\n";
  const Bytes text_bytes(text.begin(), text.end());
  EXPECT_EQ(error_of([&] { DayFileReader::from_memory(text_bytes); }),
            "day file '<memory>': not an ITCH 5.0 day file: first record (length 29801) starts with byte 0x6d, "
            "which is no ITCH 5.0 message type");  // "ti" = 0x7469, then 'm'
}

TEST(ItchDayFile, RefusesAFirstRecordWhoseLengthDoesNotFitItsType) {
  Bytes f;
  append_record(f, message('S', 13, 0));
  EXPECT_EQ(error_of([&] { DayFileReader::from_memory(f); }),
            "day file '<memory>': not an ITCH 5.0 day file: first record is a 'S' message of 13 bytes, but 'S' "
            "messages are 12 bytes");
  const Bytes one{0x00};
  EXPECT_NE(error_of([&] { DayFileReader::from_memory(one); }).find("first record is cut short"), std::string::npos);
}

TEST(ItchDayFile, MissingFilesAndBadGzipAreRefused) {
  const std::string missing = temp_path("no-such-file");
  EXPECT_EQ(error_of([&] { DayFileReader r(missing); }),
            "cannot open day file '" + missing + "': No such file or directory");
  const Bytes bad_gzip{0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef, 0x00, 0x03, 0xff, 0xff, 0xff, 0xff};
  const std::string e = error_of([&] { DayFileReader::from_memory(bad_gzip); });
  EXPECT_NE(e.find("day file '<memory>': corrupt gzip data"), std::string::npos) << e;
  const Bytes magic_only{0x1f, 0x8b};
  EXPECT_NE(error_of([&] { DayFileReader::from_memory(magic_only); }).find("gzip"), std::string::npos);
}

TEST(ItchDayFile, AThrowingConsumerKeepsItsPlace) {
  const auto msgs = day_messages();
  DayFileReader r = DayFileReader::from_memory(file_of(msgs), 7);
  EXPECT_THROW(r.read([](const DayRecord& rec) {
    if (rec.seq == 3) throw std::runtime_error("stop");
  }),
               std::runtime_error);
  EXPECT_EQ(r.records(), 3u);
  std::vector<std::uint64_t> seqs;
  r.read([&](const DayRecord& rec) { seqs.push_back(rec.seq); }, 2);
  EXPECT_EQ(seqs, (std::vector<std::uint64_t>{4, 5}));
}

}  // namespace
}  // namespace tickinfer::itch
