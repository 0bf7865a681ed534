// The CSV tick reader: exact fixed-point prices, flaws passed on (not dropped), malformed lines
// refused with their line number.
#include <gtest/gtest.h>

#include "features/tick_source.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::features {
namespace {

const std::string kHeader = "ts_ns,instrument,type,bid,ask,bid_size,ask_size,price,size,side\n";

std::vector<SourceTick> read_all(const std::string& body) {
  CsvTickSource src(kHeader + body, "t.csv");
  std::vector<SourceTick> out;
  SourceTick t;
  while (src.next(t)) out.push_back(t);
  return out;
}

std::string error_of(const std::string& text) {
  try {
    CsvTickSource src(text, "t.csv");
    SourceTick t;
    while (src.next(t)) {
    }
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(FeaturesCsvSource, ReadsQuotesAndTradesExactly) {
  const auto v = read_all("10,7,Q,99.95,100.05,3,4,,,\n\n11,7,T,,,,,100.05000001,2,B\n12,7,T,,,,,0.1,1,\n");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].event.kind, md::Event::Kind::Quote);
  EXPECT_EQ(v[0].event.quote.bid_price, 9'995'000'000);
  EXPECT_EQ(v[0].event.quote.ask_price, 10'005'000'000);
  EXPECT_EQ(v[0].event.quote.ask_size, 4u);
  EXPECT_EQ(v[0].line, 2);
  EXPECT_EQ(v[1].event.trade.price, 10'005'000'001);
  EXPECT_EQ(v[1].event.trade.aggressor, md::Side::Buy);
  EXPECT_EQ(v[1].line, 4);
  EXPECT_EQ(v[2].event.trade.price, 10'000'000);
  EXPECT_EQ(v[2].event.trade.aggressor, md::Side::Unknown);
  for (const auto& t : v) EXPECT_EQ(t.flaw, InvalidReason::None);
}

TEST(FeaturesCsvSource, NonFiniteAndNegativeValuesAreFlawsNotErrors) {
  const auto v = read_all("1,7,Q,nan,1,1,1,,,\n2,7,Q,1,-Inf,1,1,,,\n3,7,Q,1,2,-5,1,,,\n4,7,T,,,,,1,nan,S\n"
                          "5,7,T,,,,,1,4294967296,S\n6,7,Q,-1.5,2,1,1,,,\n");
  ASSERT_EQ(v.size(), 6u);
  EXPECT_EQ(v[0].flaw, InvalidReason::NonFinite);
  EXPECT_EQ(v[1].flaw, InvalidReason::NonFinite);
  EXPECT_EQ(v[2].flaw, InvalidReason::BadSize);
  EXPECT_EQ(v[3].flaw, InvalidReason::NonFinite);
  EXPECT_EQ(v[4].flaw, InvalidReason::OutOfRange);
  EXPECT_EQ(v[5].flaw, InvalidReason::None);  // representable; the validator rejects price <= 0
  EXPECT_EQ(v[5].event.quote.bid_price, -150'000'000);
}

TEST(FeaturesCsvSource, MalformedInputNamesTheLine) {
  EXPECT_NE(error_of("").find("empty file"), std::string::npos);
  EXPECT_NE(error_of("a,b\n").find("line 1: expected the header"), std::string::npos);
  EXPECT_NE(error_of(kHeader + "1,7,Q,1,2,1,1,,\n").find("line 2: expected 10 fields, got 9"), std::string::npos);
  EXPECT_NE(error_of(kHeader + "1,7,Q,1,2,1,1,,,,\n").find("line 2: more than 10 fields"), std::string::npos);
  EXPECT_NE(error_of(kHeader + "x,7,Q,1,2,1,1,,,\n").find("line 2: bad ts_ns 'x'"), std::string::npos);
  EXPECT_NE(error_of(kHeader + "1,7,X,1,2,1,1,,,\n").find("bad type 'X'"), std::string::npos);
  EXPECT_NE(error_of(kHeader + "1,7,Q,1.123456789,2,1,1,,,\n").find("more than 8 decimals"), std::string::npos);
  EXPECT_NE(error_of(kHeader + "1,7,Q,1e3,2,1,1,,,\n").find("bad price '1e3'"), std::string::npos);
  EXPECT_NE(error_of(kHeader + "1,7,Q,99999999999999,2,1,1,,,\n").find("overflows"), std::string::npos);
  EXPECT_NE(error_of(kHeader + "1,7,Q,1,2,1,1,5,,\n").find("must leave column 8 empty"), std::string::npos);
  EXPECT_NE(error_of(kHeader + "1,7,T,,,,,1,1,Z\n").find("bad side 'Z'"), std::string::npos);
  EXPECT_NE(error_of(kHeader + "1,-7,Q,1,2,1,1,,,\n").find("bad instrument"), std::string::npos);
  EXPECT_NE(error_of(kHeader + "1,7,Q,1,2,1.5,1,,,\n").find("bad bid_size"), std::string::npos);
}

}  // namespace
}  // namespace tickinfer::features
