// CSV reading and writing: header detection, quoting, non-finite tokens, round trips, and errors
// that name the line and column.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>

#include "formats/csv.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {
namespace {

std::string error_of(std::string_view text, CsvHeader header = CsvHeader::Auto) {
  try {
    parse_csv(text, "t.csv", header);
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("t.csv"), std::string::npos) << msg;
    return msg;
  }
  ADD_FAILURE() << "no error for: " << text;
  return {};
}

TEST(Csv, ReadsPlainNumbersWithoutHeader) {
  const auto t = parse_csv("1,2,3\n-4.5, 6e-3 ,\t7\n");
  EXPECT_TRUE(t.header.empty());
  EXPECT_EQ(t.rows, 2u);
  EXPECT_EQ(t.cols, 3u);
  EXPECT_EQ(t.values, (std::vector<float>{1, 2, 3, -4.5f, 6e-3f, 7}));
}

TEST(Csv, DetectsAHeaderRow) {
  const auto t = parse_csv("price,\"qty, lots\",\"say \"\"hi\"\"\"\r\n1,2,3\r\n\r\n4,5,6");
  EXPECT_EQ(t.header, (std::vector<std::string>{"price", "qty, lots", "say \"hi\""}));
  EXPECT_EQ(t.rows, 2u);
  EXPECT_EQ(t.values, (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(Csv, HeaderModeCanBeForced) {
  // A numeric first row is data under Auto, a header under Present.
  EXPECT_EQ(parse_csv("0,1\n2,3\n").rows, 2u);
  const auto t = parse_csv("0,1\n2,3\n", "<memory>", CsvHeader::Present);
  EXPECT_EQ(t.header, (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(t.rows, 1u);
  EXPECT_NE(error_of("a,b\n1,2\n", CsvHeader::Absent).find("line 1, column 1: bad number 'a'"),
            std::string::npos);
}

TEST(Csv, AcceptsNonFiniteTokensAsValues) {
  const auto t = parse_csv("nan,NaN,inf,-Inf,+infinity,+1.5\n");
  ASSERT_EQ(t.values.size(), 6u);
  EXPECT_TRUE(std::isnan(t.values[0]));
  EXPECT_TRUE(std::isnan(t.values[1]));
  EXPECT_EQ(t.values[2], std::numeric_limits<float>::infinity());
  EXPECT_EQ(t.values[3], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(t.values[4], std::numeric_limits<float>::infinity());
  EXPECT_EQ(t.values[5], 1.5f);
}

TEST(Csv, EmptyInputAndHeaderOnly) {
  auto t = parse_csv("");
  EXPECT_EQ(t.rows, 0u);
  EXPECT_EQ(t.cols, 0u);
  t = parse_csv("a,b\n\n");
  EXPECT_EQ(t.rows, 0u);
  EXPECT_EQ(t.cols, 2u);
}

TEST(Csv, BadNumbersNameLineAndColumn) {
  EXPECT_NE(error_of("1,2\n3,abc\n").find("line 2, column 2: bad number 'abc'"), std::string::npos);
  EXPECT_NE(error_of("x,y\n1,2\n\n3,\n").find("line 4, column 2: empty value"), std::string::npos);
  EXPECT_NE(error_of("1,2\n3,4x\n").find("bad number '4x'"), std::string::npos);
  EXPECT_NE(error_of("1,2\n3,+-4\n").find("bad number '+-4'"), std::string::npos);
  EXPECT_NE(error_of("1,2\n1,0x10\n").find("line 2, column 2"), std::string::npos);
  EXPECT_NE(error_of("1,2\n1,3.5e38\n").find("out of float range"), std::string::npos);
  EXPECT_NE(error_of("1,2\n1,-1e999\n").find("out of float range"), std::string::npos);
  // A first row that is not all numbers is taken as a header, so the error comes from row 2.
  EXPECT_NE(error_of("1,1e39\n2,x\n").find("line 2, column 2: bad number 'x'"), std::string::npos);
}

TEST(Csv, RowsMustHaveEqualWidth) {
  const auto msg = error_of("a,b,c\n1,2,3\n4,5\n");
  EXPECT_NE(msg.find("line 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("2 columns, expected 3"), std::string::npos) << msg;
  EXPECT_NE(error_of("1,2\n3,4,5\n").find("3 columns, expected 2"), std::string::npos);
}

TEST(Csv, QuotingErrors) {
  EXPECT_NE(error_of("\"a,b\n1\n").find("unterminated"), std::string::npos);
  EXPECT_NE(error_of("\"a\"b,c\n1,2\n").find("after a closing quote"), std::string::npos);
}

TEST(Csv, FormatRoundTripsEveryFloatExactly) {
  std::vector<float> values = {0.1f, -1e-38f, 3.4028235e38f, 1.0f / 3.0f, 0.0f, -0.0f,
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(), std::nanf(""),
                               std::numeric_limits<float>::denorm_min(), 123456789.0f, 1e-7f};
  const std::string text = format_csv(4, 3, values, {"a", "b,c", " d"});
  EXPECT_EQ(text.substr(0, text.find('\n')), "a,\"b,c\",\" d\"");
  const auto t = parse_csv(text);
  EXPECT_EQ(t.header, (std::vector<std::string>{"a", "b,c", " d"}));
  ASSERT_EQ(t.values.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) {
      EXPECT_TRUE(std::isnan(t.values[i]));
    } else {
      EXPECT_EQ(std::memcmp(&t.values[i], &values[i], 4), 0) << "index " << i << " text " << text;
    }
  }
  EXPECT_THROW(format_csv(2, 2, {1, 2, 3}), Error);
  EXPECT_THROW(format_csv(1, 2, {1, 2}, {"only one"}), Error);
}

TEST(Csv, WritesAndReadsFiles) {
  const auto path = (std::filesystem::path(::testing::TempDir()) / "csv_round_trip.csv").string();
  write_csv(path, 2, 2, {1.5f, -2, 3, 4});
  const auto t = read_csv(path);
  std::remove(path.c_str());
  EXPECT_EQ(t.rows, 2u);
  EXPECT_EQ(t.values, (std::vector<float>{1.5f, -2, 3, 4}));
  EXPECT_THROW(read_csv("does/not/exist.csv"), Error);
}

}  // namespace
}  // namespace tickinfer::formats
