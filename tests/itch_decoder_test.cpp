// The ITCH 5.0 decoder against messages laid out byte by byte from the spec's field tables
// (docs/itch.md): every field of every type, the length table, exact-length refusal, unknown
// types and the counters.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "itch/itch_decoder.hpp"
#include "itch/itch_messages.hpp"

namespace tickinfer::itch {
namespace {

// A message under construction: `len` zero bytes with the type byte at 0, fields written
// big-endian at the spec's offsets, one byte at a time (independently of the decoder's loads).
struct Wire {
  std::vector<std::uint8_t> b;
  Wire(char type, std::size_t len) : b(len, 0) { b[0] = static_cast<std::uint8_t>(type); }
  Wire& uint(std::size_t off, std::size_t width, std::uint64_t v) {
    for (std::size_t i = 0; i < width; ++i) b.at(off + i) = static_cast<std::uint8_t>(v >> (8 * (width - 1 - i)));
    return *this;
  }
  Wire& u16(std::size_t off, std::uint64_t v) { return uint(off, 2, v); }
  Wire& u32(std::size_t off, std::uint64_t v) { return uint(off, 4, v); }
  Wire& u64(std::size_t off, std::uint64_t v) { return uint(off, 8, v); }
  Wire& ch(std::size_t off, char c) {
    b.at(off) = static_cast<std::uint8_t>(c);
    return *this;
  }
  Wire& alpha(std::size_t off, const std::string& s) {
    for (std::size_t i = 0; i < s.size(); ++i) b.at(off + i) = static_cast<std::uint8_t>(s[i]);
    return *this;
  }
  // The common prefix: locate at 1, tracking at 3, 6-byte timestamp at 5.
  Wire& header(std::uint16_t locate, std::uint16_t tracking, std::uint64_t ts) {
    return u16(1, locate).u16(3, tracking).uint(5, 6, ts);
  }
};

Message decode_ok(const Wire& w) {
  Message m;
  EXPECT_EQ(decode(w.b.data(), w.b.size(), m), DecodeStatus::Ok);
  return m;
}

std::string str(const char* p, std::size_t n) { return std::string(p, n); }

// The spec's cross-check list, parsed from its own text.
std::map<char, std::size_t> spec_lengths() {
  std::istringstream in("S12 R39 H25 Y20 L26 V35 W12 K28 J35 h21 A36 F40 E31 C36 X23 D19 U35 P44 Q40 B19 I50 N20 O48");
  std::map<char, std::size_t> out;
  std::string w;
  while (in >> w) out[w[0]] = std::stoul(w.substr(1));
  return out;
}

TEST(ItchLengths, MatchTheSpecCrossCheckListAndNothingElseIsAType) {
  const auto spec = spec_lengths();
  ASSERT_EQ(spec.size(), 23u);
  for (int t = 0; t < 256; ++t) {
    const auto it = spec.find(static_cast<char>(t));
    EXPECT_EQ(message_length(static_cast<std::uint8_t>(t)), it == spec.end() ? 0u : it->second) << "type " << t;
  }
  EXPECT_EQ(kMaxMessageBytes, 50u);
}

TEST(ItchDecode, SystemEvent) {
  Wire w('S', 12);
  w.header(0, 0x0A0B, 11039687760787ull).ch(11, 'O');
  const Message m = decode_ok(w);
  EXPECT_EQ(m.type(), Type::SystemEvent);
  EXPECT_EQ(m.header.locate, 0);
  EXPECT_EQ(m.header.tracking, 0x0A0B);
  EXPECT_EQ(m.header.timestamp_ns, 11039687760787ull);
  EXPECT_EQ(m.system_event.event_code, 'O');
}

TEST(ItchDecode, TheReadmeHexOfTheFirstRecordOfA2019DayFile) {
  // 53 00 00 00 00 0a 0a 60 aa db 93 4f: 'S', locate 0, tracking 0, 03:03:59.69, 'O'.
  const std::uint8_t bytes[] = {0x53, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x0a, 0x60, 0xaa, 0xdb, 0x93, 0x4f};
  Message m;
  ASSERT_EQ(decode(bytes, sizeof bytes, m), DecodeStatus::Ok);
  EXPECT_EQ(m.header.timestamp_ns, 11'039'687'760'787ull);
  EXPECT_EQ(m.system_event.event_code, 'O');
}

TEST(ItchDecode, StockDirectory) {
  Wire w('R', 39);
  w.header(1, 2, 3).alpha(11, "AAPL    ").ch(19, 'Q').ch(20, 'N').u32(21, 100).ch(25, 'N').ch(26, 'C');
  w.alpha(27, "Z ").ch(29, 'P').ch(30, 'N').ch(31, ' ').ch(32, '1').ch(33, 'Y').u32(34, 0x01020304).ch(38, 'Y');
  const Message m = decode_ok(w);
  const StockDirectory& r = m.stock_directory;
  EXPECT_EQ(m.header.locate, 1);
  EXPECT_EQ(m.header.tracking, 2);
  EXPECT_EQ(m.header.timestamp_ns, 3u);
  EXPECT_EQ(str(r.stock, 8), "AAPL    ");
  EXPECT_EQ(symbol_view(r.stock), "AAPL");
  EXPECT_EQ(r.market_category, 'Q');
  EXPECT_EQ(r.financial_status, 'N');
  EXPECT_EQ(r.round_lot_size, 100u);
  EXPECT_EQ(r.round_lots_only, 'N');
  EXPECT_EQ(r.issue_classification, 'C');
  EXPECT_EQ(str(r.issue_sub_type, 2), "Z ");
  EXPECT_EQ(r.authenticity, 'P');
  EXPECT_EQ(r.short_sale_threshold, 'N');
  EXPECT_EQ(r.ipo_flag, ' ');
  EXPECT_EQ(r.luld_reference_tier, '1');
  EXPECT_EQ(r.etp_flag, 'Y');
  EXPECT_EQ(r.etp_leverage_factor, 0x01020304u);
  EXPECT_EQ(r.inverse_indicator, 'Y');
}

TEST(ItchDecode, StockTradingAction) {
  Wire w('H', 25);
  w.header(7, 8, 9).alpha(11, "MSFT    ").ch(19, 'H').ch(20, ' ').alpha(21, "LUDP");
  const Message m = decode_ok(w);
  EXPECT_EQ(m.type(), Type::StockTradingAction);
  EXPECT_EQ(m.header.locate, 7);
  EXPECT_EQ(str(m.trading_action.stock, 8), "MSFT    ");
  EXPECT_EQ(m.trading_action.trading_state, 'H');
  EXPECT_EQ(m.trading_action.reserved, ' ');
  EXPECT_EQ(str(m.trading_action.reason, 4), "LUDP");
}

TEST(ItchDecode, RegShoRestriction) {
  Wire w('Y', 20);
  w.header(300, 1, 5).alpha(11, "ABCDEFGH").ch(19, '1');
  const Message m = decode_ok(w);
  EXPECT_EQ(m.header.locate, 300);
  EXPECT_EQ(str(m.reg_sho.stock, 8), "ABCDEFGH");
  EXPECT_EQ(symbol_view(m.reg_sho.stock), "ABCDEFGH");
  EXPECT_EQ(m.reg_sho.action, '1');
}

TEST(ItchDecode, MarketParticipantPosition) {
  Wire w('L', 26);
  w.header(12, 13, 14).alpha(11, "GSCO").alpha(15, "IBM     ").ch(23, 'Y').ch(24, 'N').ch(25, 'A');
  const Message m = decode_ok(w);
  EXPECT_EQ(str(m.participant.mpid, 4), "GSCO");
  EXPECT_EQ(str(m.participant.stock, 8), "IBM     ");
  EXPECT_EQ(m.participant.primary_market_maker, 'Y');
  EXPECT_EQ(m.participant.mode, 'N');
  EXPECT_EQ(m.participant.state, 'A');
}

TEST(ItchDecode, MwcbDeclineLevelPrice8) {
  Wire w('V', 35);
  w.header(0, 1, 2).u64(11, 0x0102030405060708ull).u64(19, 0x1112131415161718ull).u64(27, 0xF1F2F3F4F5F6F7F8ull);
  const Message m = decode_ok(w);
  EXPECT_EQ(m.mwcb_decline.level1, 0x0102030405060708ull);
  EXPECT_EQ(m.mwcb_decline.level2, 0x1112131415161718ull);
  EXPECT_EQ(m.mwcb_decline.level3, 0xF1F2F3F4F5F6F7F8ull);
}

TEST(ItchDecode, MwcbStatus) {
  Wire w('W', 12);
  w.header(0, 3, 4).ch(11, '2');
  const Message m = decode_ok(w);
  EXPECT_EQ(m.type(), Type::MwcbStatus);
  EXPECT_EQ(m.mwcb_status.breached_level, '2');
}

TEST(ItchDecode, IpoQuotingPeriod) {
  Wire w('K', 28);
  w.header(0, 5, 6).alpha(11, "NEWCO   ").u32(19, 34200).ch(23, 'A').u32(24, 250000);
  const Message m = decode_ok(w);
  EXPECT_EQ(str(m.ipo.stock, 8), "NEWCO   ");
  EXPECT_EQ(m.ipo.release_time_s, 34200u);
  EXPECT_EQ(m.ipo.release_qualifier, 'A');
  EXPECT_EQ(m.ipo.ipo_price, 250000u);
}

TEST(ItchDecode, LuldAuctionCollar) {
  Wire w('J', 35);
  w.header(40, 41, 42).alpha(11, "XYZ     ").u32(19, 1000000).u32(23, 1100000).u32(27, 900000).u32(31, 3);
  const Message m = decode_ok(w);
  EXPECT_EQ(str(m.luld.stock, 8), "XYZ     ");
  EXPECT_EQ(m.luld.reference_price, 1000000u);
  EXPECT_EQ(m.luld.upper_price, 1100000u);
  EXPECT_EQ(m.luld.lower_price, 900000u);
  EXPECT_EQ(m.luld.extension, 3u);
}

TEST(ItchDecode, OperationalHaltIsLowerCaseH) {
  Wire w('h', 21);
  w.header(50, 51, 52).alpha(11, "QQQ     ").ch(19, 'B').ch(20, 'T');
  const Message m = decode_ok(w);
  EXPECT_EQ(m.type(), Type::OperationalHalt);
  EXPECT_EQ(str(m.operational_halt.stock, 8), "QQQ     ");
  EXPECT_EQ(m.operational_halt.market_code, 'B');
  EXPECT_EQ(m.operational_halt.action, 'T');
}

TEST(ItchDecode, AddOrderGetsFourSpacesForItsMpid) {
  Wire w('A', 36);
  w.header(0x1234, 0x5678, 0x123456789ABCull).u64(11, 0xFEDCBA9876543210ull).ch(19, 'B').u32(20, 0xDEADBEEF);
  w.alpha(24, "SPY     ").u32(32, 2000000000);
  const Message m = decode_ok(w);
  EXPECT_EQ(m.type(), Type::AddOrder);
  EXPECT_EQ(m.header.locate, 0x1234);
  EXPECT_EQ(m.header.tracking, 0x5678);
  EXPECT_EQ(m.header.timestamp_ns, 0x123456789ABCull);
  EXPECT_EQ(m.add.order_ref, 0xFEDCBA9876543210ull);
  EXPECT_EQ(m.add.side, 'B');
  EXPECT_EQ(m.add.shares, 0xDEADBEEFu);
  EXPECT_EQ(str(m.add.stock, 8), "SPY     ");
  EXPECT_EQ(m.add.price, 2000000000u);  // the largest Price(4), 200,000.0000
  EXPECT_EQ(str(m.add.mpid, 4), "    ");
}

TEST(ItchDecode, AddOrderWithMpid) {
  Wire w('F', 40);
  w.header(9, 10, 11).u64(11, 77).ch(19, 'S').u32(20, 300).alpha(24, "GOOGL   ").u32(32, 1234500).alpha(36, "NITE");
  const Message m = decode_ok(w);
  EXPECT_EQ(m.type(), Type::AddOrderMpid);
  EXPECT_EQ(m.add.order_ref, 77u);
  EXPECT_EQ(m.add.side, 'S');
  EXPECT_EQ(m.add.shares, 300u);
  EXPECT_EQ(symbol_view(m.add.stock), "GOOGL");
  EXPECT_EQ(m.add.price, 1234500u);
  EXPECT_EQ(str(m.add.mpid, 4), "NITE");
}

TEST(ItchDecode, OrderExecuted) {
  Wire w('E', 31);
  w.header(3, 4, 5).u64(11, 0x8000000000000001ull).u32(19, 150).u64(23, 0x0000FFFF0000FFFFull);
  const Message m = decode_ok(w);
  EXPECT_EQ(m.executed.order_ref, 0x8000000000000001ull);
  EXPECT_EQ(m.executed.shares, 150u);
  EXPECT_EQ(m.executed.match_number, 0x0000FFFF0000FFFFull);
}

TEST(ItchDecode, OrderExecutedWithPrice) {
  Wire w('C', 36);
  w.header(3, 4, 5).u64(11, 99).u32(19, 25).u64(23, 123456789).ch(31, 'N').u32(32, 1001000);
  const Message m = decode_ok(w);
  EXPECT_EQ(m.executed_with_price.order_ref, 99u);
  EXPECT_EQ(m.executed_with_price.shares, 25u);
  EXPECT_EQ(m.executed_with_price.match_number, 123456789u);
  EXPECT_EQ(m.executed_with_price.printable, 'N');
  EXPECT_EQ(m.executed_with_price.price, 1001000u);
}

TEST(ItchDecode, OrderCancel) {
  Wire w('X', 23);
  w.header(6, 7, 8).u64(11, 0x0102030405060708ull).u32(19, 0x0A0B0C0D);
  const Message m = decode_ok(w);
  EXPECT_EQ(m.cancel.order_ref, 0x0102030405060708ull);
  EXPECT_EQ(m.cancel.shares, 0x0A0B0C0Du);
}

TEST(ItchDecode, OrderDelete) {
  Wire w('D', 19);
  w.header(65535, 65535, 1).u64(11, 0xFFFFFFFFFFFFFFFEull);
  const Message m = decode_ok(w);
  EXPECT_EQ(m.header.locate, 65535);
  EXPECT_EQ(m.header.tracking, 65535);
  EXPECT_EQ(m.del.order_ref, 0xFFFFFFFFFFFFFFFEull);
}

TEST(ItchDecode, OrderReplace) {
  Wire w('U', 35);
  w.header(2, 3, 4).u64(11, 100).u64(19, 205).u32(27, 200).u32(31, 100100);
  const Message m = decode_ok(w);
  EXPECT_EQ(m.replace.original_ref, 100u);
  EXPECT_EQ(m.replace.new_ref, 205u);
  EXPECT_EQ(m.replace.shares, 200u);
  EXPECT_EQ(m.replace.price, 100100u);
}

TEST(ItchDecode, TradeHasFourByteShares) {
  Wire w('P', 44);
  w.header(2, 3, 4).u64(11, 0).ch(19, 'B').u32(20, 0x11223344).alpha(24, "TSLA    ").u32(32, 4200000);
  w.u64(36, 0x0102030405060708ull);
  const Message m = decode_ok(w);
  EXPECT_EQ(m.trade.order_ref, 0u);
  EXPECT_EQ(m.trade.side, 'B');
  EXPECT_EQ(m.trade.shares, 0x11223344u);
  EXPECT_EQ(str(m.trade.stock, 8), "TSLA    ");
  EXPECT_EQ(m.trade.price, 4200000u);
  EXPECT_EQ(m.trade.match_number, 0x0102030405060708ull);
}

TEST(ItchDecode, CrossTradeHasEightByteShares) {
  Wire w('Q', 40);
  w.header(2, 3, 4).u64(11, 0x0000000123456789ull).alpha(19, "AMZN    ").u32(27, 18500000);
  w.u64(31, 0xA0A1A2A3A4A5A6A7ull).ch(39, 'C');
  const Message m = decode_ok(w);
  EXPECT_EQ(m.cross.shares, 0x0000000123456789ull);  // above 2^32: all 8 bytes are read
  EXPECT_EQ(str(m.cross.stock, 8), "AMZN    ");
  EXPECT_EQ(m.cross.price, 18500000u);
  EXPECT_EQ(m.cross.match_number, 0xA0A1A2A3A4A5A6A7ull);
  EXPECT_EQ(m.cross.cross_type, 'C');
}

TEST(ItchDecode, BrokenTrade) {
  Wire w('B', 19);
  w.header(2, 3, 4).u64(11, 0x0F0E0D0C0B0A0908ull);
  EXPECT_EQ(decode_ok(w).broken.match_number, 0x0F0E0D0C0B0A0908ull);
}

TEST(ItchDecode, NoiiHasEightBytePairedAndImbalanceShares) {
  Wire w('I', 50);
  w.header(21, 22, 23).u64(11, 0x0000000500000001ull).u64(19, 0x0000000700000002ull).ch(27, 'P');
  w.alpha(28, "NVDA    ").u32(36, 1100).u32(40, 1200).u32(44, 1300).ch(48, 'A').ch(49, 'L');
  const Message m = decode_ok(w);
  EXPECT_EQ(m.noii.paired_shares, 0x0000000500000001ull);
  EXPECT_EQ(m.noii.imbalance_shares, 0x0000000700000002ull);
  EXPECT_EQ(m.noii.direction, 'P');
  EXPECT_EQ(str(m.noii.stock, 8), "NVDA    ");
  EXPECT_EQ(m.noii.far_price, 1100u);
  EXPECT_EQ(m.noii.near_price, 1200u);
  EXPECT_EQ(m.noii.reference_price, 1300u);
  EXPECT_EQ(m.noii.cross_type, 'A');
  EXPECT_EQ(m.noii.price_variation, 'L');
}

TEST(ItchDecode, RetailPriceImprovement) {
  Wire w('N', 20);
  w.header(31, 32, 33).alpha(11, "T       ").ch(19, 'A');
  const Message m = decode_ok(w);
  EXPECT_EQ(symbol_view(m.rpii.stock), "T");
  EXPECT_EQ(m.rpii.interest, 'A');
}

TEST(ItchDecode, DirectListingCapitalRaise) {
  Wire w('O', 48);
  w.header(61, 62, 63).alpha(11, "DLST    ").ch(19, 'Y').u32(20, 100000).u32(24, 200000).u32(28, 150000);
  w.u64(32, 0x0000123456789ABCull).u32(40, 140000).u32(44, 160000);
  const Message m = decode_ok(w);
  const DirectListingCapitalRaise& o = m.direct_listing;
  EXPECT_EQ(str(o.stock, 8), "DLST    ");
  EXPECT_EQ(o.open_eligibility, 'Y');
  EXPECT_EQ(o.min_price, 100000u);
  EXPECT_EQ(o.max_price, 200000u);
  EXPECT_EQ(o.near_price, 150000u);
  EXPECT_EQ(o.near_time, 0x0000123456789ABCull);
  EXPECT_EQ(o.lower_collar, 140000u);
  EXPECT_EQ(o.upper_collar, 160000u);
}

TEST(ItchDecode, TheLargestFortyEightBitTimestamp) {
  Wire w('D', 19);
  w.header(1, 1, 0xFFFFFFFFFFFFull).u64(11, 5);
  EXPECT_EQ(decode_ok(w).header.timestamp_ns, 281474976710655ull);
}

TEST(ItchDecode, SidesAndEnumsAreNotValidated) {
  Wire w('A', 36);
  w.header(1, 0, 0).ch(19, 'Z');
  EXPECT_EQ(decode_ok(w).add.side, 'Z');
}

TEST(ItchDecode, EveryTypeOneByteShortOrLongIsWrongLengthAndLeavesOutAlone) {
  for (const auto& [type, len] : spec_lengths()) {
    for (const std::size_t n : {len - 1, len + 1}) {
      std::vector<std::uint8_t> b(n, 0x41);
      b[0] = static_cast<std::uint8_t>(type);
      Message m;
      m.header.locate = 0xBEEF;
      m.header.timestamp_ns = 42;
      EXPECT_EQ(decode(b.data(), b.size(), m), DecodeStatus::WrongLength) << type << " len " << n;
      EXPECT_EQ(m.header.locate, 0xBEEF);
      EXPECT_EQ(m.header.timestamp_ns, 42u);
    }
    std::vector<std::uint8_t> one{static_cast<std::uint8_t>(type)};
    Message m;
    EXPECT_EQ(decode(one.data(), 1, m), DecodeStatus::WrongLength) << type;
  }
}

TEST(ItchDecode, UnknownTypesAndEmpty) {
  Message m;
  for (const std::uint8_t t : {std::uint8_t{'Z'}, std::uint8_t{'a'}, std::uint8_t{0}, std::uint8_t{0xFF}}) {
    std::vector<std::uint8_t> b(36, 0);
    b[0] = t;
    EXPECT_EQ(decode(b.data(), b.size(), m), DecodeStatus::UnknownType) << int(t);
    EXPECT_EQ(decode(b.data(), 1, m), DecodeStatus::UnknownType) << int(t);
  }
  EXPECT_EQ(decode(nullptr, 0, m), DecodeStatus::Empty);
  EXPECT_EQ(to_string(DecodeStatus::Ok), "ok");
  EXPECT_EQ(to_string(DecodeStatus::Empty), "empty");
  EXPECT_EQ(to_string(DecodeStatus::UnknownType), "unknown type");
  EXPECT_EQ(to_string(DecodeStatus::WrongLength), "wrong length");
}

TEST(ItchDecodeCounters, CountAKnownMixExactly) {
  // The mix: 5 good A, 3 good D, 2 A one byte short, 1 D one byte long, 4 'Z', 2 zero bytes,
  // 1 'a', and 2 empty messages.
  std::vector<std::vector<std::uint8_t>> mix;
  auto add = [&](char t, std::size_t len, int times) {
    for (int i = 0; i < times; ++i) {
      std::vector<std::uint8_t> b(len, 0);
      if (len > 0) b[0] = static_cast<std::uint8_t>(t);
      mix.push_back(b);
    }
  };
  add('A', 36, 5);
  add('D', 19, 3);
  add('A', 35, 2);
  add('D', 20, 1);
  add('Z', 10, 4);
  add('\0', 3, 2);
  add('a', 1, 1);
  add('x', 0, 2);
  DecodeCounters c;
  for (const auto& b : mix) {
    Message m;
    const DecodeStatus s = decode(b.data(), b.size(), m);
    c.count(b.empty() ? 0 : b[0], s);
  }
  for (int t = 0; t < 256; ++t) {
    const std::uint64_t decoded = t == 'A' ? 5 : t == 'D' ? 3 : 0;
    const std::uint64_t wrong = t == 'A' ? 2 : t == 'D' ? 1 : 0;
    const std::uint64_t unknown = t == 'Z' ? 4 : t == 0 ? 2 : t == 'a' ? 1 : 0;
    EXPECT_EQ(c.decoded[t], decoded) << t;
    EXPECT_EQ(c.wrong_length[t], wrong) << t;
    EXPECT_EQ(c.unknown_type[t], unknown) << t;
  }
  EXPECT_EQ(c.total_decoded, 8u);
  EXPECT_EQ(c.total_wrong_length, 3u);
  EXPECT_EQ(c.total_unknown_type, 7u);
  EXPECT_EQ(c.total_empty, 2u);
  EXPECT_EQ(c.total(), 20u);
  EXPECT_EQ(c.total_rejected(), 12u);
}

}  // namespace
}  // namespace tickinfer::itch
