// .npy reading and writing: the header forms NumPy produces, float64 narrowing, round trips, and
// a clear error (never a crash) for each kind of malformed file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "formats/npy.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {
namespace {

// Builds a .npy file the way NumPy lays it out: magic, version, little-endian header length,
// header text padded with spaces to a 64-byte boundary and ended by '\n', then raw data.
std::string make_npy(int major, const std::string& dict, const std::string& data, bool pad = true) {
  const size_t len_bytes = major == 1 ? 2 : 4;
  std::string header = dict;
  const size_t prefix = 8 + len_bytes;
  if (pad) header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < len_bytes; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

template <typename T>
std::string raw(std::initializer_list<T> values) {
  std::string s;
  for (T v : values) s.append(reinterpret_cast<const char*>(&v), sizeof v);
  return s;
}

NpyArray parse_npy_bytes(const std::string& bytes) { return parse_npy(bytes.data(), bytes.size(), "t.npy"); }

std::string expect_error(const std::string& bytes) {
  try {
    parse_npy(bytes.data(), bytes.size(), "t.npy");
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("t.npy"), std::string::npos) << "message should name the source: " << msg;
    return msg;
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(Npy, ReadsFloat32Version1) {
  const auto bytes = make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                              raw<float>({1, 2, 3, 4, 5, -6.5f}));
  const auto a = parse_npy(bytes.data(), bytes.size());
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.data, (std::vector<float>{1, 2, 3, 4, 5, -6.5f}));
}

TEST(Npy, ReadsFloat64AsFloat32InVersions2And3) {
  for (int major : {2, 3}) {
    const auto bytes = make_npy(major, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
                                raw<double>({0.1, -2.0, 1e300}));
    const auto a = parse_npy(bytes.data(), bytes.size());
    EXPECT_EQ(a.shape, (std::vector<int64_t>{3}));
    ASSERT_EQ(a.data.size(), 3u);
    EXPECT_EQ(a.data[0], 0.1f);
    EXPECT_EQ(a.data[1], -2.0f);
    EXPECT_TRUE(std::isinf(a.data[2]));  // beyond float range
  }
}

TEST(Npy, AcceptsKeyOrderQuotesAndScalarShapes) {
  // Keys in another order, double quotes, no trailing comma, Python 2 long suffix.
  auto bytes = make_npy(1, "{\"shape\": (1L, 2L), \"fortran_order\": False, \"descr\": \"<f4\"}",
                        raw<float>({7, 8}));
  auto a = parse_npy(bytes.data(), bytes.size());
  EXPECT_EQ(a.shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(a.data, (std::vector<float>{7, 8}));

  bytes = make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", raw<float>({3.5f}));
  a = parse_npy(bytes.data(), bytes.size());
  EXPECT_TRUE(a.shape.empty());
  EXPECT_EQ(a.data, (std::vector<float>{3.5f}));

  bytes = make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4), }", "");
  a = parse_npy(bytes.data(), bytes.size());
  EXPECT_EQ(a.shape, (std::vector<int64_t>{0, 4}));
  EXPECT_TRUE(a.data.empty());
}

TEST(Npy, RoundTripsThroughSerializeAndFiles) {
  std::vector<float> data;
  for (int i = 0; i < 24; ++i) data.push_back(std::ldexp(static_cast<float>(i) - 11.3f, i % 7 - 3));
  data[5] = std::nanf("");
  const std::vector<int64_t> shape{2, 3, 4};
  const std::string bytes = serialize_npy(shape, data);
  // NumPy's layout: version 1.0, data 64-byte aligned, header ends in '\n'.
  EXPECT_EQ(bytes.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)), 0);
  const size_t header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  EXPECT_EQ(bytes[10 + header_len - 1], '\n');
  EXPECT_EQ(bytes.size(), 10 + header_len + 4 * data.size());

  const auto path = (std::filesystem::path(::testing::TempDir()) / "npy_round_trip.npy").string();
  write_npy(path, shape, data);
  const auto a = read_npy(path);
  std::remove(path.c_str());
  EXPECT_EQ(a.shape, shape);
  ASSERT_EQ(a.data.size(), data.size());
  EXPECT_EQ(std::memcmp(a.data.data(), data.data(), 4 * data.size()), 0);  // bit exact, NaN too

  // One-dimensional shapes get NumPy's trailing comma: (5,)
  const std::string one_d = serialize_npy({5}, std::vector<float>(5, 1.0f));
  EXPECT_NE(one_d.find("'shape': (5,)"), std::string::npos);
  EXPECT_THROW(serialize_npy({2, 2}, std::vector<float>(3)), Error);
}

TEST(Npy, RejectsBadMagicAndVersions) {
  EXPECT_NE(expect_error("").find("bad magic"), std::string::npos);
  EXPECT_NE(expect_error("PK\x03\x04 not numpy").find("bad magic"), std::string::npos);
  auto bytes = make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", raw<float>({1}));
  bytes[6] = 4;
  EXPECT_NE(expect_error(bytes).find("version 4.0"), std::string::npos);
}

TEST(Npy, RejectsUnsupportedDtypeNamingIt) {
  for (const char* dtype : {"|u1", ">f4", ">i4", "<f2", "<c8", "<i8"}) {
    const auto bytes = make_npy(
        1, std::string("{'descr': '") + dtype + "', 'fortran_order': False, 'shape': (1,), }",
        raw<float>({1}));
    const auto msg = expect_error(bytes);
    EXPECT_NE(msg.find(std::string("'") + dtype + "'"), std::string::npos) << msg;
  }
}

TEST(Npy, ReadsQuantizedIntegerArraysAsExactFloats) {
  // int8 model inputs are stored as '|i1' by the TFLite fixture script.
  const std::string i1_data = {static_cast<char>(-128), static_cast<char>(-1), 0, 127};
  const auto a = parse_npy_bytes(make_npy(1, "{'descr': '|i1', 'fortran_order': False, 'shape': (2, 2), }", i1_data));
  EXPECT_EQ(a.dtype, "|i1");
  EXPECT_EQ(a.data, (std::vector<float>{-128, -1, 0, 127}));
  const auto b = parse_npy_bytes(make_npy(1, "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }",
                                          raw<int16_t>({-32768, 300})));
  EXPECT_EQ(b.data, (std::vector<float>{-32768, 300}));
  const auto c = parse_npy_bytes(make_npy(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }",
                                          raw<int32_t>({-70000})));
  EXPECT_EQ(c.data, (std::vector<float>{-70000}));
  // Short data is still refused for the narrow types.
  EXPECT_NE(expect_error(make_npy(1, "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }",
                                  raw<int16_t>({1, 2}))).find("truncated"), std::string::npos);
}

TEST(Npy, RejectsFortranOrder) {
  const auto bytes = make_npy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
                              raw<float>({1, 2, 3, 4}));
  EXPECT_NE(expect_error(bytes).find("fortran_order"), std::string::npos);
}

TEST(Npy, RejectsSizeMismatchesAndTruncation) {
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_NE(expect_error(make_npy(1, dict, raw<float>({1, 2, 3, 4, 5}))).find("truncated data"),
            std::string::npos);
  EXPECT_NE(expect_error(make_npy(1, dict, raw<float>({1, 2, 3, 4, 5, 6, 7}))).find("size mismatch"),
            std::string::npos);
  // Header length pointing past the end of the file.
  auto bytes = make_npy(1, dict, "");
  bytes[9] = 0x7f;
  EXPECT_NE(expect_error(bytes).find("truncated header"), std::string::npos);
  EXPECT_NE(expect_error(std::string("\x93NUMPY\x02\x00\x01", 9)).find("truncated header"), std::string::npos);
}

TEST(Npy, RejectsAbsurdShapesWithoutAllocating) {
  for (const char* shape : {"(99999999999999999999,)", "(281474976710656, 281474976710656)",
                            "(4294967296, 4294967296, 4294967296)", "(1000000000000,)"}) {
    const auto bytes = make_npy(
        1, std::string("{'descr': '<f4', 'fortran_order': False, 'shape': ") + shape + ", }", raw<float>({1}));
    const auto msg = expect_error(bytes);
    EXPECT_TRUE(msg.find("absurd") != std::string::npos || msg.find("truncated") != std::string::npos) << msg;
  }
}

TEST(Npy, RejectsMalformedHeaders) {
  const std::vector<std::string> bad_dicts = {
      "",
      "{",
      "{'descr': '<f4', 'fortran_order': False}",                              // no shape
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}",  // unknown key
      "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}",
      "{'descr': '<f4', 'fortran_order': false, 'shape': (1,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1 2)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} trailing",
      "{'descr: '<f4', 'fortran_order': False, 'shape': (1,)}",
      "[1, 2, 3]",
  };
  for (const auto& dict : bad_dicts) {
    SCOPED_TRACE(dict);
    const auto msg = expect_error(make_npy(1, dict, raw<float>({1})));
    EXPECT_FALSE(msg.empty());
  }
}

TEST(Npy, ReadFileErrorsNameThePath) {
  try {
    read_npy("does/not/exist.npy");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does/not/exist.npy"), std::string::npos);
  }
}

}  // namespace
}  // namespace tickinfer::formats
