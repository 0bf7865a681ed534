// The signal message against a hand-written byte layout (docs/signal-format.md), corruption
// detection, and the shared-memory ring: in process (order, lapping) and read by a real second
// process (`tickinfer signals shm:NAME`).
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cstring>
#include <random>

#include "pipeline/signal_format.hpp"
#include "pipeline/signal_ring.hpp"
#include "pipeline_test_support.hpp"
#include "tickinfer/error.hpp"
#include "support/source_paths.hpp"

using namespace tickinfer::pipeline;
using namespace pipeline_test;

namespace {

Signal sample() {
  Signal s;
  s.signal_seq = 0x0102030405060708ull;
  s.tick_seq = 42;
  s.instrument = 7;
  s.model_version = 3;
  std::strcpy(s.model_name, "default");
  s.exchange_ts_ns = 1'700'000'000'000'000'001;
  s.kernel_rx_ns = 1'700'000'000'000'002'000;
  s.sent_ns = 1'700'000'000'000'003'500;
  s.rx_to_signal_ns = 1500;
  s.decision = -1;
  s.flags = kSignalDegraded;
  s.score_count = 2;
  s.scores[0] = 0.25f;
  s.scores[1] = -2.0f;
  return s;
}

std::uint64_t le(const std::uint8_t* p, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace

TEST(PipelineSignal, ByteLayoutMatchesTheDocument) {
  std::uint8_t b[kSignalBytes];
  encode_signal(sample(), b);
  EXPECT_EQ(std::memcmp(b, "TKSG", 4), 0);
  EXPECT_EQ(b[4], 1);                     // version
  EXPECT_EQ(b[5], 2);                     // score count
  EXPECT_EQ(static_cast<std::int8_t>(b[6]), -1);  // decision
  EXPECT_EQ(b[7], 1);                     // flags: degraded
  EXPECT_EQ(le(b + 8, 8), 0x0102030405060708ull);
  EXPECT_EQ(b[8], 0x08);                  // little-endian
  EXPECT_EQ(le(b + 16, 8), 42u);
  EXPECT_EQ(le(b + 24, 4), 7u);
  EXPECT_EQ(le(b + 28, 4), 3u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(b + 32)), "default");
  for (int i = 32 + 7; i < 48; ++i) EXPECT_EQ(b[i], 0) << i;  // NUL padding
  EXPECT_EQ(le(b + 48, 8), 1'700'000'000'000'000'001ull);
  EXPECT_EQ(le(b + 56, 8), 1'700'000'000'000'002'000ull);
  EXPECT_EQ(le(b + 64, 8), 1'700'000'000'000'003'500ull);
  EXPECT_EQ(le(b + 72, 4), 1500u);
  EXPECT_EQ(le(b + 76, 4), 0x3E800000u);  // 0.25f
  EXPECT_EQ(le(b + 80, 4), 0xC0000000u);  // -2.0f
  EXPECT_EQ(le(b + 84, 4), 0u);           // unused scores are zero
  EXPECT_EQ(le(b + 88, 4), 0u);
  // CRC-32 (zlib) of bytes 0..91, computed bit by bit here (independent of the library's table).
  std::uint32_t crc = 0xFFFFFFFFu;
  for (int i = 0; i < 92; ++i) {
    crc ^= b[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  EXPECT_EQ(le(b + 92, 4), crc ^ 0xFFFFFFFFu);
}

TEST(PipelineSignal, RoundTrip) {
  std::uint8_t b[kSignalBytes];
  const Signal s = sample();
  encode_signal(s, b);
  Signal d;
  ASSERT_EQ(decode_signal(b, sizeof b, d), SignalStatus::Ok);
  EXPECT_EQ(d.signal_seq, s.signal_seq);
  EXPECT_EQ(d.tick_seq, s.tick_seq);
  EXPECT_EQ(d.instrument, s.instrument);
  EXPECT_EQ(d.model_version, s.model_version);
  EXPECT_STREQ(d.model_name, "default");
  EXPECT_EQ(d.exchange_ts_ns, s.exchange_ts_ns);
  EXPECT_EQ(d.kernel_rx_ns, s.kernel_rx_ns);
  EXPECT_EQ(d.sent_ns, s.sent_ns);
  EXPECT_EQ(d.rx_to_signal_ns, s.rx_to_signal_ns);
  EXPECT_EQ(d.decision, -1);
  EXPECT_EQ(d.flags, kSignalDegraded);
  EXPECT_EQ(d.score_count, 2);
  EXPECT_EQ(d.scores[0], 0.25f);
  EXPECT_EQ(d.scores[1], -2.0f);
}

TEST(PipelineSignal, EveryCorruptionIsDetected) {
  std::uint8_t good[kSignalBytes];
  encode_signal(sample(), good);
  Signal d;
  EXPECT_EQ(decode_signal(good, kSignalBytes - 1, d), SignalStatus::TooShort);
  for (std::size_t i = 0; i < kSignalBytes; ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::uint8_t b[kSignalBytes];
      std::memcpy(b, good, sizeof b);
      b[i] ^= static_cast<std::uint8_t>(1 << bit);
      EXPECT_NE(decode_signal(b, sizeof b, d), SignalStatus::Ok) << "byte " << i << " bit " << bit;
    }
  }
  std::uint8_t b[kSignalBytes];
  std::memcpy(b, good, sizeof b);
  b[0] = 'X';
  EXPECT_EQ(decode_signal(b, sizeof b, d), SignalStatus::BadMagic);
  std::memcpy(b, good, sizeof b);
  b[4] = 2;
  EXPECT_EQ(decode_signal(b, sizeof b, d), SignalStatus::BadVersion);
  std::memcpy(b, good, sizeof b);
  b[5] = 5;
  EXPECT_EQ(decode_signal(b, sizeof b, d), SignalStatus::BadScoreCount);
}

TEST(PipelineSignalRing, InOrderThenLappedReaderCountsWhatItMissed) {
  const std::string name = "tickinfer-test-" + std::to_string(getpid());
  SignalRingWriter w(name, 8);
  SignalRingReader r(name, false);
  std::uint8_t msg[kSignalBytes], got[kSignalBytes];
  Signal s = sample();
  for (int i = 1; i <= 5; ++i) {
    s.signal_seq = static_cast<std::uint64_t>(i);
    encode_signal(s, msg);
    w.publish(msg);
  }
  Signal d;
  for (int i = 1; i <= 5; ++i) {
    ASSERT_TRUE(r.poll(got));
    ASSERT_EQ(decode_signal(got, sizeof got, d), SignalStatus::Ok);
    EXPECT_EQ(d.signal_seq, static_cast<std::uint64_t>(i));
  }
  EXPECT_FALSE(r.poll(got));
  for (int i = 6; i <= 30; ++i) {  // 25 more into 8 slots: the reader is lapped
    s.signal_seq = static_cast<std::uint64_t>(i);
    encode_signal(s, msg);
    w.publish(msg);
  }
  EXPECT_EQ(r.lag(), 25u);  // it knows how far behind it is before it reads on
  std::vector<std::uint64_t> seen;
  while (r.poll(got)) {
    ASSERT_EQ(decode_signal(got, sizeof got, d), SignalStatus::Ok);
    seen.push_back(d.signal_seq);
  }
  ASSERT_EQ(seen.size(), 8u);  // the newest capacity messages
  EXPECT_EQ(seen.front(), 23u);
  EXPECT_EQ(seen.back(), 30u);
  EXPECT_EQ(r.missed(), 17u);
  EXPECT_EQ(r.lag(), 0u);
  shm_unlink(("/" + name).c_str());
}

TEST(PipelineSignalRing, OpeningSomethingElseIsAClearError) {
  try {
    SignalRingReader r("tickinfer-no-such-ring-" + std::to_string(getpid()), false);
    FAIL();
  } catch (const tickinfer::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
  }
  EXPECT_THROW(SignalRingWriter("x", 6), tickinfer::Error);
}

TEST(PipelineSignalRing, ASecondProcessReadsEveryMessage) {
  const std::string name = "tickinfer-test2-" + std::to_string(getpid());
  SignalRingWriter w(name, 1024);
  const std::string attached = temp("reader.attached");
  Process reader = start({"signals", "shm:" + name, "--count", "5000", "--summary", "--seconds", "60", "--ready-file", attached},
                         temp("reader.out"));
  ASSERT_TRUE(wait_file(attached, 30));
  std::uint8_t msg[kSignalBytes];
  Signal s = sample();
  for (int i = 1; i <= 5000; ++i) {
    s.signal_seq = static_cast<std::uint64_t>(i);
    encode_signal(s, msg);
    w.publish(msg);
    if (i % 500 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));  // 1024 slots: never lap it
  }
  ASSERT_EQ(wait_for(reader, 60), 0);
  const std::string out = slurp(reader.out_path);
  EXPECT_NE(out.find("signals: 5000 received, 0 malformed, 0 sequence gaps, 0 out of order, 0 overwritten"), std::string::npos) << out;
  shm_unlink(("/" + name).c_str());
}

// Files written by an independent encoder (Python struct + zlib.crc32, following the documents):
// our decoders read them field for field.
TEST(PipelineSignal, ReadsFilesWrittenFromTheDocumentByAnotherImplementation) {
  const std::string sig = slurp(std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/pipeline/signal.bin");
  ASSERT_EQ(sig.size(), kSignalBytes);
  Signal s;
  ASSERT_EQ(decode_signal(reinterpret_cast<const std::uint8_t*>(sig.data()), sig.size(), s), SignalStatus::Ok);
  EXPECT_EQ(s.signal_seq, 7u);
  EXPECT_EQ(s.tick_seq, 12345u);
  EXPECT_EQ(s.instrument, 3u);
  EXPECT_EQ(s.model_version, 1u);
  EXPECT_STREQ(s.model_name, "default");
  EXPECT_EQ(s.decision, 1);
  EXPECT_EQ(s.score_count, 2);
  EXPECT_EQ(s.scores[0], 0.75f);
  EXPECT_EQ(s.scores[1], -1.0f);
  EXPECT_EQ(s.rx_to_signal_ns, 1500u);
  EXPECT_EQ(s.sent_ns, 1'700'000'000'000'003'500);
}
