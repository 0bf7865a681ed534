// MoldUDP64 framing and the Quote/Trade codec, checked against byte layouts written out by hand
// from the specification (docs/feed-wire-format.md), and every malformed case of the parser.
#include <gtest/gtest.h>

#include <vector>

#include "feed/messages.hpp"
#include "feed/moldudp64.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::feed {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes header(const char* session, std::uint64_t seq, std::uint16_t count) {
  Bytes b(session, session + 10);
  for (int i = 7; i >= 0; --i) b.push_back(static_cast<std::uint8_t>(seq >> (8 * i)));
  b.push_back(static_cast<std::uint8_t>(count >> 8));
  b.push_back(static_cast<std::uint8_t>(count));
  return b;
}
void block(Bytes& b, const Bytes& payload) {
  b.push_back(static_cast<std::uint8_t>(payload.size() >> 8));
  b.push_back(static_cast<std::uint8_t>(payload.size()));
  b.insert(b.end(), payload.begin(), payload.end());
}

TEST(FeedMoldUdp64, ParsesAHandWrittenPacketAtTheSpecOffsets) {
  Bytes p = header("SESSION001", 0x0102030405060708ull, 2);
  block(p, {0xAA});
  block(p, {0xBB, 0xCC, 0xDD});
  ASSERT_EQ(p.size(), 20u + 3 + 5);
  PacketView v;
  ASSERT_EQ(parse_packet(p.data(), p.size(), v), ParseStatus::Ok);
  EXPECT_EQ(v.session.str(), "SESSION001");
  EXPECT_EQ(v.seq, 0x0102030405060708ull);
  EXPECT_EQ(v.count, 2);
  EXPECT_EQ(v.kind, PacketKind::Data);
  EXPECT_EQ(v.end_seq(), 0x0102030405060708ull + 2);
  MessageCursor c(v);
  const std::uint8_t* m;
  std::uint16_t len;
  ASSERT_TRUE(c.next(m, len));
  EXPECT_EQ(len, 1);
  EXPECT_EQ(m[0], 0xAA);
  ASSERT_TRUE(c.next(m, len));
  EXPECT_EQ(len, 3);
  EXPECT_EQ(m[2], 0xDD);
  EXPECT_FALSE(c.next(m, len));
}

TEST(FeedMoldUdp64, BuilderProducesTheSameBytesAsTheHandLayout) {
  Bytes expect = header("ABC       ", 42, 2);
  block(expect, {1, 2, 3});
  block(expect, {});
  std::uint8_t buf[128];
  PacketBuilder b(buf, sizeof buf);
  b.start(Session::from("ABC"), 42);
  const std::uint8_t m[] = {1, 2, 3};
  ASSERT_TRUE(b.add(m, 3));
  ASSERT_TRUE(b.add(nullptr, 0));
  const std::size_t n = b.finish();
  EXPECT_EQ(Bytes(buf, buf + n), expect);
}

TEST(FeedMoldUdp64, HeartbeatAndEndOfSessionCarryTheNextSequence) {
  std::uint8_t buf[20];
  encode_control(buf, Session::from("S1"), 77, false);
  EXPECT_EQ(Bytes(buf, buf + 20), header("S1        ", 77, 0));
  PacketView v;
  ASSERT_EQ(parse_packet(buf, 20, v), ParseStatus::Ok);
  EXPECT_EQ(v.kind, PacketKind::Heartbeat);
  EXPECT_EQ(v.seq, 77u);
  encode_control(buf, Session::from("S1"), 78, true);
  EXPECT_EQ(Bytes(buf, buf + 20), header("S1        ", 78, 0xFFFF));
  ASSERT_EQ(parse_packet(buf, 20, v), ParseStatus::Ok);
  EXPECT_EQ(v.kind, PacketKind::EndOfSession);
}

TEST(FeedMoldUdp64, RequestPacketRoundTripsAndRejectsBadCounts) {
  std::uint8_t buf[20];
  encode_request(buf, Session::from("S1"), 1000, 25);
  EXPECT_EQ(Bytes(buf, buf + 20), header("S1        ", 1000, 25));
  Session s;
  std::uint64_t first;
  std::uint16_t count;
  ASSERT_EQ(parse_request(buf, 20, s, first, count), ParseStatus::Ok);
  EXPECT_EQ(first, 1000u);
  EXPECT_EQ(count, 25);
  EXPECT_EQ(parse_request(buf, 19, s, first, count), ParseStatus::TooShort);
  Bytes longer(buf, buf + 20);
  longer.push_back(0);
  EXPECT_EQ(parse_request(longer.data(), longer.size(), s, first, count), ParseStatus::TrailingBytes);
  Bytes zero = header("S1        ", 5, 0);
  EXPECT_EQ(parse_request(zero.data(), 20, s, first, count), ParseStatus::ControlWithData);
  Bytes seq0 = header("S1        ", 0, 5);
  EXPECT_EQ(parse_request(seq0.data(), 20, s, first, count), ParseStatus::SequenceOverflow);
  Bytes wrap = header("S1        ", UINT64_MAX, 5);
  EXPECT_EQ(parse_request(wrap.data(), 20, s, first, count), ParseStatus::SequenceOverflow);
}

TEST(FeedMoldUdp64, EveryMalformedPacketIsRejectedWithItsReason) {
  PacketView v;
  Bytes good = header("S1        ", 1, 1);
  block(good, {9, 9});
  for (std::size_t n = 0; n < 20; ++n) EXPECT_EQ(parse_packet(good.data(), n, v), ParseStatus::TooShort) << n;
  // Cut inside the block header and inside the payload.
  EXPECT_EQ(parse_packet(good.data(), 21, v), ParseStatus::BlockHeaderTruncated);
  EXPECT_EQ(parse_packet(good.data(), 23, v), ParseStatus::BlockTruncated);
  // Count says 2 but one block.
  Bytes more = header("S1        ", 1, 2);
  block(more, {9});
  EXPECT_EQ(parse_packet(more.data(), more.size(), v), ParseStatus::BlockHeaderTruncated);
  // Count says 1 but two blocks.
  Bytes trailing = header("S1        ", 1, 1);
  block(trailing, {9});
  block(trailing, {9});
  EXPECT_EQ(parse_packet(trailing.data(), trailing.size(), v), ParseStatus::TrailingBytes);
  // A block length far past the datagram (impossible length).
  Bytes huge = header("S1        ", 1, 1);
  huge.push_back(0xFF);
  huge.push_back(0xFF);
  huge.push_back(1);
  EXPECT_EQ(parse_packet(huge.data(), huge.size(), v), ParseStatus::BlockTruncated);
  // Longer than the configured message limit.
  Bytes big = header("S1        ", 1, 1);
  block(big, Bytes(65, 1));
  EXPECT_EQ(parse_packet(big.data(), big.size(), v, 64), ParseStatus::MessageTooLong);
  EXPECT_EQ(parse_packet(big.data(), big.size(), v, 65), ParseStatus::Ok);
  // Oversized datagram.
  Bytes oversize(2000, 0);
  EXPECT_EQ(parse_packet(oversize.data(), oversize.size(), v, 64, 1500), ParseStatus::TooLong);
  // seq + count wraps.
  Bytes wrap = header("S1        ", UINT64_MAX, 1);
  block(wrap, {1});
  EXPECT_EQ(parse_packet(wrap.data(), wrap.size(), v), ParseStatus::SequenceOverflow);
  // Heartbeat / end of session with bytes after the header.
  Bytes hb = header("S1        ", 5, 0);
  hb.push_back(0);
  EXPECT_EQ(parse_packet(hb.data(), hb.size(), v), ParseStatus::ControlWithData);
  Bytes eos = header("S1        ", 5, 0xFFFF);
  block(eos, {1});
  EXPECT_EQ(parse_packet(eos.data(), eos.size(), v), ParseStatus::ControlWithData);
  for (int s = 0; s < kParseStatusCount; ++s) EXPECT_STRNE(to_string(static_cast<ParseStatus>(s)), "unknown");
}

TEST(FeedMoldUdp64, SessionNamesAreCheckedAndPadded) {
  EXPECT_EQ(Session::from("X").str(), "X");
  EXPECT_EQ(Session::from("0123456789").str(), "0123456789");
  EXPECT_THROW(Session::from("01234567890"), Error);
  EXPECT_THROW(Session::from("a-b"), Error);
  EXPECT_NE(Session::from("A"), Session::from("B"));
}

TEST(FeedMessages, QuoteMatchesTheHandLayout) {
  md::Quote q;
  q.instrument = 0x01020304;
  q.exchange_ts_ns = 0x1112131415161718;
  q.bid_price = 10'050'000'000;  // 100.5
  q.ask_price = -3;
  q.bid_size = 7;
  q.ask_size = 0xA0B0C0D0;
  std::uint8_t buf[kQuoteBytes];
  ASSERT_EQ(encode_quote(q, buf), 37u);
  const Bytes expect = {'Q', 1, 2, 3, 4, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,
                        0, 0, 0, 2, 0x57, 0x06, 0xD4, 0x80,  // 10050000000 = 0x2_5706_D480
                        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFD,
                        0, 0, 0, 7, 0xA0, 0xB0, 0xC0, 0xD0};
  EXPECT_EQ(Bytes(buf, buf + 37), expect);
  md::Event e;
  ASSERT_EQ(decode_message(expect.data(), expect.size(), e), DecodeStatus::Ok);
  ASSERT_EQ(e.kind, md::Event::Kind::Quote);
  EXPECT_EQ(e.quote.instrument, q.instrument);
  EXPECT_EQ(e.quote.exchange_ts_ns, q.exchange_ts_ns);
  EXPECT_EQ(e.quote.bid_price, q.bid_price);
  EXPECT_EQ(e.quote.ask_price, -3);
  EXPECT_EQ(e.quote.bid_size, 7u);
  EXPECT_EQ(e.quote.ask_size, 0xA0B0C0D0u);
}

TEST(FeedMessages, TradeRoundTripsAndMatchesTheHandLayout) {
  md::Trade t;
  t.instrument = 9;
  t.exchange_ts_ns = 1;
  t.price = 256;
  t.size = 65536;
  t.aggressor = md::Side::Sell;
  std::uint8_t buf[kTradeBytes];
  ASSERT_EQ(encode_trade(t, buf), 26u);
  const Bytes expect = {'T', 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 'S'};
  EXPECT_EQ(Bytes(buf, buf + 26), expect);
  md::Event e;
  ASSERT_EQ(decode_message(buf, 26, e), DecodeStatus::Ok);
  ASSERT_EQ(e.kind, md::Event::Kind::Trade);
  EXPECT_EQ(e.trade.price, 256);
  EXPECT_EQ(e.trade.size, 65536u);
  EXPECT_EQ(e.trade.aggressor, md::Side::Sell);
}

TEST(FeedMessages, MalformedMessagesAreRejected) {
  md::Event e;
  std::uint8_t q[kQuoteBytes + 1] = {'Q'};
  EXPECT_EQ(decode_message(q, 0, e), DecodeStatus::Empty);
  EXPECT_EQ(decode_message(q, kQuoteBytes - 1, e), DecodeStatus::WrongLength);
  EXPECT_EQ(decode_message(q, kQuoteBytes + 1, e), DecodeStatus::WrongLength);
  std::uint8_t t[kTradeBytes] = {'T'};
  t[25] = 'X';
  EXPECT_EQ(decode_message(t, kTradeBytes, e), DecodeStatus::BadSide);
  t[25] = 0;
  EXPECT_EQ(decode_message(t, kTradeBytes, e), DecodeStatus::Ok);
  EXPECT_EQ(e.trade.aggressor, md::Side::Unknown);
  EXPECT_EQ(decode_message(t, kTradeBytes - 1, e), DecodeStatus::WrongLength);
  std::uint8_t z[5] = {'Z'};
  EXPECT_EQ(decode_message(z, 5, e), DecodeStatus::UnknownType);
}

}  // namespace
}  // namespace tickinfer::feed
