// Offline sequencing of captures: what `tickinfer features` reads from a .cap file must be the
// ordered, de-duplicated union of lines A and B, with losses counted, exactly as live.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "feed/capture_events.hpp"
#include "feed/messages.hpp"
#include "feed/moldudp64.hpp"

namespace tickinfer::feed {
namespace {

// One quote per sequence number; its instrument is the sequence, so order is checkable.
std::vector<std::uint8_t> quote_packet(std::uint64_t first, int count) {
  std::vector<std::uint8_t> bytes(kHeaderBytes + count * (2 + kQuoteBytes));
  PacketBuilder b(bytes.data(), bytes.size());
  b.start(Session::from("CAP1"), first);
  for (int i = 0; i < count; ++i) {
    md::Quote q;
    q.instrument = static_cast<std::uint32_t>(first + i);
    q.exchange_ts_ns = 1000 + static_cast<std::int64_t>(first + i);
    q.bid_price = 100 * md::kPriceScale;
    q.ask_price = 101 * md::kPriceScale;
    q.bid_size = q.ask_size = 5;
    std::uint8_t msg[kQuoteBytes];
    encode_quote(q, msg);
    b.add(msg, kQuoteBytes);
  }
  bytes.resize(b.finish());
  return bytes;
}

CaptureRecord record(std::int64_t rx, std::uint8_t line, std::vector<std::uint8_t> payload) {
  CaptureRecord r;
  r.rx_ns = rx;
  r.line = line;
  r.payload = std::move(payload);
  return r;
}

TEST(CaptureEvents, DeliversTheOrderedUnionOfBothLinesOnceAndCountsWhatNeitherHad) {
  CaptureContents cap;
  std::int64_t t = 0;
  // Packets of 2 messages: seqs 1-2, 3-4, ..., 19-20. Line A misses 5-6 and 9-10, line B misses
  // 9-10 and 13-14 and delivers 15-16 before 11-12; both miss 9-10.
  for (std::uint64_t s = 1; s <= 19; s += 2) {
    if (s != 5 && s != 9) cap.records.push_back(record(++t, 0, quote_packet(s, 2)));
  }
  for (std::uint64_t s : {1, 3, 5, 7, 15, 11, 17, 19}) cap.records.push_back(record(++t, 1, quote_packet(s, 2)));
  cap.records.push_back(record(++t, 1, {1, 2, 3}));  // not a packet

  std::vector<std::uint64_t> seqs;
  std::vector<std::uint32_t> instruments;
  const CaptureSequenceStats st = sequence_capture(cap, [&](const md::Event& e, std::uint64_t seq, std::int64_t) {
    seqs.push_back(seq);
    instruments.push_back(e.instrument());
  });
  std::vector<std::uint64_t> want;
  for (std::uint64_t s = 1; s <= 20; ++s) {
    if (s != 9 && s != 10) want.push_back(s);
  }
  EXPECT_EQ(seqs, want);
  for (std::size_t i = 0; i < seqs.size(); ++i) EXPECT_EQ(instruments[i], seqs[i]);
  EXPECT_EQ(st.delivered, 18u);
  EXPECT_EQ(st.lost, 2u);
  EXPECT_EQ(st.lost_ranges, 1u);
  EXPECT_EQ(st.bad_packets, 1u);
  EXPECT_EQ(st.records, cap.records.size());
  EXPECT_EQ(st.undecodable, 0u);
}

TEST(CaptureEvents, CountsUnknownMessageBlocksWithoutDeliveringThem) {
  CaptureContents cap;
  std::vector<std::uint8_t> bytes(64);
  PacketBuilder b(bytes.data(), bytes.size());
  b.start(Session::from("CAP1"), 1);
  const std::uint8_t junk[3] = {'Z', 1, 2};
  b.add(junk, 3);
  bytes.resize(b.finish());
  cap.records.push_back(record(1, 0, bytes));
  cap.records.push_back(record(2, 0, quote_packet(2, 1)));
  int delivered = 0;
  const CaptureSequenceStats st = sequence_capture(cap, [&](const md::Event&, std::uint64_t seq, std::int64_t) {
    EXPECT_EQ(seq, 2u);
    ++delivered;
  });
  EXPECT_EQ(delivered, 1);
  EXPECT_EQ(st.undecodable, 1u);
  EXPECT_EQ(st.delivered, 1u);
}

}  // namespace
}  // namespace tickinfer::feed
