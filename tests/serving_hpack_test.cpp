// HPACK (RFC 7541) against references that do not come from this code:
//  - the RFC's own examples (Appendix C.1-C.6: integers, single representations, request and
//    response sequences with and without Huffman, a 256-octet table with evictions);
//  - tests/fixtures/hpack/vectors.json, written by tools/make_hpack_vectors.py with the PyPI
//    package hpack 4.2.0 (header block sequences sharing one encoder, Huffman strings);
//  - hostile input: truncations, overflows, bad indexes, misplaced or oversized table size
//    updates, invalid Huffman, lists over the limit. Each must fail with a reason, not crash.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "serving/h2/hpack.hpp"
#include "support/source_paths.hpp"

namespace tickinfer::serving::hpack {
namespace {

std::string fixtures_dir() {
  const char* env = std::getenv("TICKINFER_FIXTURES");
  return env ? env : std::string(::tickinfer::test::source_dir()) + "/tests/fixtures";
}

// Hex with optional spaces, as the RFC prints it.
std::string unhex(std::string_view hex) {
  std::string out;
  int high = -1;
  for (const char c : hex) {
    if (c == ' ' || c == '\n') continue;
    const int v = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    EXPECT_GE(v, 0) << "bad hex digit " << c;
    if (high < 0) {
      high = v;
    } else {
      out.push_back(static_cast<char>(high << 4 | v));
      high = -1;
    }
  }
  EXPECT_EQ(high, -1) << "odd hex length";
  return out;
}

std::string hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (const unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 0xF]);
  }
  return out;
}

// Decodes from an exact-size heap copy, so a read past the end is caught under ASan.
bool decode_bytes(Decoder& d, std::string_view bytes, std::vector<Header>& out, std::string& error) {
  auto copy = std::make_unique<uint8_t[]>(bytes.size() + 1);
  std::copy(bytes.begin(), bytes.end(), copy.get());
  return d.decode(copy.get(), bytes.size(), out, error);
}

std::vector<Header> decode_ok(Decoder& d, std::string_view hex_block) {
  std::vector<Header> out;
  std::string error;
  EXPECT_TRUE(decode_bytes(d, unhex(hex_block), out, error)) << error << " in " << hex_block;
  return out;
}

// The reason a block is refused ("" when it decodes).
std::string refusal(Decoder& d, std::string_view bytes) {
  std::vector<Header> out;
  std::string error;
  if (decode_bytes(d, bytes, out, error)) return "";
  EXPECT_FALSE(error.empty());
  return error;
}

std::string refusal(std::string_view bytes) {
  Decoder d;
  return refusal(d, bytes);
}

bool huffman_decode(std::string_view in, std::string& out) {
  auto copy = std::make_unique<uint8_t[]>(in.size() + 1);
  std::copy(in.begin(), in.end(), copy.get());
  return hpack::huffman_decode(copy.get(), in.size(), out);
}

std::string huffman_encode(std::string_view in) {
  std::string out;
  hpack::huffman_encode(in, out);
  return out;
}

using List = std::vector<Header>;

// --- RFC 7541 Appendix C ------------------------------------------------------------------------

TEST(HpackRfcExamples, C1IntegerRepresentation) {
  std::string out;
  encode_integer(out, 0xE0, 5, 10);  // C.1.1: 10 on a 5-bit prefix (the 3 high bits are kept)
  EXPECT_EQ(hex(out), "ea");
  out.clear();
  encode_integer(out, 0x00, 5, 1337);  // C.1.2
  EXPECT_EQ(hex(out), "1f9a0a");
  out.clear();
  encode_integer(out, 0x00, 8, 42);  // C.1.3: at an octet boundary
  EXPECT_EQ(hex(out), "2a");

  // Decoded: 1337 as a size update (5-bit prefix) is checked against the maximum.
  Decoder d(2000);
  EXPECT_EQ(refusal(d, unhex("3f9a0a")), "");
  EXPECT_EQ(d.table_capacity(), 1337u);
}

TEST(HpackRfcExamples, C2HeaderFieldRepresentations) {
  {  // C.2.1 literal with indexing: added to the dynamic table
    Decoder d;
    EXPECT_EQ(decode_ok(d, "400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572"),
              (List{{"custom-key", "custom-header"}}));
    EXPECT_EQ(d.table_size(), 55u);
    EXPECT_EQ(d.table_entries(), 1u);
  }
  {  // C.2.2 literal without indexing, indexed name
    Decoder d;
    EXPECT_EQ(decode_ok(d, "040c 2f73 616d 706c 652f 7061 7468"), (List{{":path", "/sample/path"}}));
    EXPECT_EQ(d.table_size(), 0u);
  }
  {  // C.2.3 literal never indexed
    Decoder d;
    EXPECT_EQ(decode_ok(d, "1008 7061 7373 776f 7264 0673 6563 7265 74"), (List{{"password", "secret"}}));
    EXPECT_EQ(d.table_size(), 0u);
  }
  {  // C.2.4 indexed
    Decoder d;
    EXPECT_EQ(decode_ok(d, "82"), (List{{":method", "GET"}}));
    EXPECT_EQ(d.table_size(), 0u);
  }
}

// C.3 and C.4: the same three requests on one connection, raw and Huffman-coded.
void check_requests(const char* first, const char* second, const char* third) {
  Decoder d;
  EXPECT_EQ(decode_ok(d, first),
            (List{{":method", "GET"}, {":scheme", "http"}, {":path", "/"}, {":authority", "www.example.com"}}));
  EXPECT_EQ(d.table_size(), 57u);
  EXPECT_EQ(decode_ok(d, second), (List{{":method", "GET"},
                                        {":scheme", "http"},
                                        {":path", "/"},
                                        {":authority", "www.example.com"},
                                        {"cache-control", "no-cache"}}));
  EXPECT_EQ(d.table_size(), 110u);
  EXPECT_EQ(decode_ok(d, third), (List{{":method", "GET"},
                                       {":scheme", "https"},
                                       {":path", "/index.html"},
                                       {":authority", "www.example.com"},
                                       {"custom-key", "custom-value"}}));
  EXPECT_EQ(d.table_size(), 164u);
  EXPECT_EQ(d.table_entries(), 3u);
}

TEST(HpackRfcExamples, C3RequestsWithoutHuffman) {
  check_requests("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
                 "8286 84be 5808 6e6f 2d63 6163 6865",
                 "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65");
}

TEST(HpackRfcExamples, C4RequestsWithHuffman) {
  check_requests("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
                 "8286 84be 5886 a8eb 1064 9cbf",
                 "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf");
}

// C.5 and C.6: three responses with a 256-octet table; the third evicts.
void check_responses(const char* first, const char* second, const char* third) {
  Decoder d(256);
  EXPECT_EQ(decode_ok(d, first), (List{{":status", "302"},
                                       {"cache-control", "private"},
                                       {"date", "Mon, 21 Oct 2013 20:13:21 GMT"},
                                       {"location", "https://www.example.com"}}));
  EXPECT_EQ(d.table_size(), 222u);
  EXPECT_EQ(d.table_entries(), 4u);
  // (":status", "302") is evicted to make room for (":status", "307").
  EXPECT_EQ(decode_ok(d, second), (List{{":status", "307"},
                                        {"cache-control", "private"},
                                        {"date", "Mon, 21 Oct 2013 20:13:21 GMT"},
                                        {"location", "https://www.example.com"}}));
  EXPECT_EQ(d.table_size(), 222u);
  EXPECT_EQ(d.table_entries(), 4u);
  EXPECT_EQ(decode_ok(d, third), (List{{":status", "200"},
                                       {"cache-control", "private"},
                                       {"date", "Mon, 21 Oct 2013 20:13:22 GMT"},
                                       {"location", "https://www.example.com"},
                                       {"content-encoding", "gzip"},
                                       {"set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"}}));
  EXPECT_EQ(d.table_size(), 215u);
  EXPECT_EQ(d.table_entries(), 3u);
  // What is left, newest first: set-cookie (62), content-encoding (63), date (64).
  EXPECT_EQ(decode_ok(d, "be bf c0"),
            (List{{"set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"},
                  {"content-encoding", "gzip"},
                  {"date", "Mon, 21 Oct 2013 20:13:22 GMT"}}));
  EXPECT_NE(refusal(d, unhex("c1")), "");  // index 65: evicted
}

TEST(HpackRfcExamples, C5ResponsesWithoutHuffman) {
  check_responses(
      "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32"
      "3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
      "4803 3330 37c1 c0bf",
      "88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 677a 6970"
      "7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 553b 206d 6178 2d61"
      "6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31");
}

TEST(HpackRfcExamples, C6ResponsesWithHuffman) {
  check_responses(
      "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad"
      "1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
      "4883 640e ffc1 c0bf",
      "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2"
      "e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07");
}

// The Huffman strings of C.4 and C.6, both ways (our encoder must give the RFC's octets).
TEST(HpackHuffman, RfcStrings) {
  const std::pair<const char*, const char*> cases[] = {
      {"www.example.com", "f1e3 c2e5 f23a 6ba0 ab90 f4ff"},
      {"no-cache", "a8eb 1064 9cbf"},
      {"custom-key", "25a8 49e9 5ba9 7d7f"},
      {"custom-value", "25a8 49e9 5bb8 e8b4 bf"},
      {"302", "6402"},
      {"307", "640e ff"},
      {"private", "aec3 771a 4b"},
      {"Mon, 21 Oct 2013 20:13:21 GMT", "d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff"},
      {"https://www.example.com", "9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3"},
      {"gzip", "9bd9 ab"},
      {"foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
       "94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07"},
  };
  for (const auto& [text, coded] : cases) {
    EXPECT_EQ(hex(huffman_encode(text)), hex(unhex(coded))) << text;
    EXPECT_EQ(huffman_encoded_size(text), unhex(coded).size()) << text;
    std::string decoded;
    EXPECT_TRUE(huffman_decode(unhex(coded), decoded)) << text;
    EXPECT_EQ(decoded, text);
  }
}

// --- vectors made by the hpack package (tools/make_hpack_vectors.py) ------------------------------

nlohmann::json load_vectors() {
  const std::string path = fixtures_dir() + "/hpack/vectors.json";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "missing " << path;
  if (!in.good()) return {};
  return nlohmann::json::parse(in);
}

TEST(HpackVectors, HeaderBlockSequences) {
  const nlohmann::json doc = load_vectors();
  ASSERT_TRUE(doc.contains("sequences"));
  size_t blocks = 0, fields = 0;
  for (const auto& sequence : doc["sequences"]) {
    Decoder d(doc["max_table_size"].get<size_t>(), 1 << 20);
    for (const auto& block : sequence) {
      List expected;
      for (const auto& h : block["headers"])
        expected.push_back({unhex(h[0].get<std::string>()), unhex(h[1].get<std::string>())});
      std::vector<Header> out;
      std::string error;
      ASSERT_TRUE(decode_bytes(d, unhex(block["block"].get<std::string>()), out, error))
          << error << " in sequence block " << block["block"];
      ASSERT_EQ(out, expected) << block["block"];
      ASSERT_EQ(d.table_size(), block["table_size"].get<size_t>()) << block["block"];
      ++blocks;
      fields += out.size();
    }
  }
  EXPECT_GT(blocks, 200u);
  EXPECT_GT(fields, 1000u);
}

TEST(HpackVectors, HuffmanStrings) {
  const nlohmann::json doc = load_vectors();
  ASSERT_TRUE(doc.contains("huffman"));
  bool seen[256] = {};
  for (const auto& v : doc["huffman"]) {
    const std::string raw = unhex(v["raw"].get<std::string>());
    const std::string coded = unhex(v["encoded"].get<std::string>());
    EXPECT_EQ(hex(huffman_encode(raw)), hex(coded));
    EXPECT_EQ(huffman_encoded_size(raw), coded.size());
    std::string decoded;
    EXPECT_TRUE(huffman_decode(coded, decoded)) << hex(coded);
    EXPECT_EQ(decoded, raw);
    for (const unsigned char c : raw) seen[c] = true;
  }
  for (int c = 0; c < 256; ++c) EXPECT_TRUE(seen[c]) << "octet " << c << " not covered";
}

// --- encoding helpers ----------------------------------------------------------------------------

TEST(HpackEncode, MatchesRfcRepresentations) {
  std::string out;
  encode_indexed(out, 2);  // C.2.4
  EXPECT_EQ(hex(out), "82");
  out.clear();
  encode_literal_without_indexing(out, 4, "/sample/path");  // C.2.2
  EXPECT_EQ(hex(out), hex(unhex("040c 2f73 616d 706c 652f 7061 7468")));
  out.clear();
  encode_literal_without_indexing(out, "password", "secret");  // C.2.3 but without indexing (0000)
  EXPECT_EQ(hex(out), hex(unhex("0008 7061 7373 776f 7264 0673 6563 7265 74")));
  out.clear();
  encode_literal_without_indexing(out, 24, "no-cache", true);  // C.4.2's value, not indexed
  EXPECT_EQ(hex(out), hex(unhex("0f09 86a8 eb10 649c bf")));  // name index 24 = 15 + 9
  out.clear();
  encode_table_size_update(out, 4096);
  EXPECT_EQ(hex(out), "3fe11f");
  out.clear();
  encode_integer(out, 0x80, 7, 0xFFFFFFFFull);
  Decoder d;  // a 32-bit maximum index parses, and is out of range
  EXPECT_EQ(refusal(d, out), "header field index out of range");
}

TEST(HpackEncode, StaticTableLookups) {
  EXPECT_EQ(static_index(":status", "200"), 8u);
  EXPECT_EQ(static_index(":method", "POST"), 3u);
  EXPECT_EQ(static_index(":status", "201"), 0u);
  EXPECT_EQ(static_name_index("content-type"), 31u);
  EXPECT_EQ(static_name_index(":status"), 8u);
  EXPECT_EQ(static_name_index("www-authenticate"), 61u);
  EXPECT_EQ(static_name_index("grpc-status"), 0u);
  EXPECT_EQ(static_table_entry(1).name, ":authority");
  EXPECT_EQ(static_table_entry(16).value, "gzip, deflate");
  EXPECT_EQ(static_table_entry(61).name, "www-authenticate");
  EXPECT_TRUE(static_table_entry(0).name.empty());
  EXPECT_TRUE(static_table_entry(62).name.empty());
}

// Random lists (any octets, lengths 0-300) encoded with the helpers decode to themselves.
TEST(HpackEncode, RoundTripsThroughDecoder) {
  std::mt19937 rng(7541);
  std::uniform_int_distribution<int> octet(0, 255), len(0, 300), count(0, 12);
  Decoder d(4096, 1 << 20);
  for (int round = 0; round < 200; ++round) {
    List list;
    std::string block;
    const bool huffman = round % 2 == 1;
    for (int i = count(rng); i > 0; --i) {
      Header h;
      for (int n = len(rng) / (i % 3 + 1); n > 0; --n) h.name.push_back(static_cast<char>(octet(rng)));
      for (int n = len(rng); n > 0; --n) h.value.push_back(static_cast<char>(octet(rng)));
      if (i % 4 == 0) {  // an indexed static name, and an indexed static field
        h.name = ":path";
        encode_literal_without_indexing(block, static_name_index(h.name), h.value, huffman);
        list.push_back(h);
        encode_indexed(block, 8);
        list.push_back({":status", "200"});
        continue;
      }
      encode_literal_without_indexing(block, h.name, h.value, huffman);
      list.push_back(std::move(h));
    }
    std::vector<Header> out;
    std::string error;
    ASSERT_TRUE(decode_bytes(d, block, out, error)) << error;
    ASSERT_EQ(out, list);
    EXPECT_EQ(d.table_size(), 0u);  // nothing the helpers emit is indexed
  }
}

// --- dynamic table ---------------------------------------------------------------------------------

std::string literal_with_indexing(std::string_view name, std::string_view value) {
  std::string out(1, '\x40');
  encode_string(out, name, false);
  encode_string(out, value, false);
  return out;
}

TEST(HpackDynamicTable, EvictsOldestAndRefusesOversizedEntry) {
  Decoder d(100);
  // 32 + 2 + 8 = 42 each: two fit in 100, a third evicts the oldest.
  EXPECT_EQ(refusal(d, literal_with_indexing("k1", "aaaaaaaa") + literal_with_indexing("k2", "bbbbbbbb")), "");
  EXPECT_EQ(d.table_size(), 84u);
  EXPECT_EQ(refusal(d, literal_with_indexing("k3", "cccccccc")), "");
  EXPECT_EQ(d.table_size(), 84u);
  EXPECT_EQ(decode_ok(d, "be bf"), (List{{"k3", "cccccccc"}, {"k2", "bbbbbbbb"}}));
  EXPECT_EQ(refusal(d, unhex("c0")), "header field index out of range");
  // An entry larger than the table (4.4) is no error: it empties the table and is not added.
  std::vector<Header> out;
  std::string error;
  ASSERT_TRUE(decode_bytes(d, literal_with_indexing("big", std::string(80, 'x')), out, error)) << error;
  EXPECT_EQ(out, (List{{"big", std::string(80, 'x')}}));
  EXPECT_EQ(d.table_size(), 0u);
  EXPECT_EQ(d.table_entries(), 0u);
}

TEST(HpackDynamicTable, NameReferenceToTheEntryBeingEvicted) {
  Decoder d(60);
  EXPECT_EQ(refusal(d, literal_with_indexing("name", "old-value")), "");  // 45 octets
  // Name index 62 is that entry; adding ("name", "new-value") must evict it first (4.4).
  std::string block = "\x7e";  // 01 + 6-bit index 62
  encode_string(block, "new-value", false);
  EXPECT_EQ(refusal(d, block), "");
  EXPECT_EQ(d.table_entries(), 1u);
  EXPECT_EQ(decode_ok(d, "be"), (List{{"name", "new-value"}}));
}

TEST(HpackDynamicTable, SizeUpdates) {
  Decoder d(4096);
  EXPECT_EQ(refusal(d, literal_with_indexing("a", "1") + literal_with_indexing("b", "2")), "");
  EXPECT_EQ(d.table_entries(), 2u);
  // Two updates at the start of a block (down to 0, then back up): the table is emptied.
  std::string block;
  encode_table_size_update(block, 0);
  encode_table_size_update(block, 4096);
  block += "\x82";
  EXPECT_EQ(refusal(d, block), "");
  EXPECT_EQ(d.table_entries(), 0u);
  EXPECT_EQ(d.table_capacity(), 4096u);
  // Shrinking evicts the oldest entries until the rest fits.
  EXPECT_EQ(refusal(d, literal_with_indexing("a", "1") + literal_with_indexing("b", "2")), "");
  block.clear();
  encode_table_size_update(block, 40);
  EXPECT_EQ(refusal(d, block), "");
  EXPECT_EQ(decode_ok(d, "be"), (List{{"b", "2"}}));
  EXPECT_EQ(d.table_size(), 34u);
  // Literals without indexing and never indexed leave the table alone.
  EXPECT_EQ(refusal(d, unhex("0001 7801 79 1001 7801 79")), "");
  EXPECT_EQ(d.table_entries(), 1u);
}

TEST(HpackDynamicTable, SettingsReductionRequiresAnUpdate) {
  Decoder d(4096);
  EXPECT_EQ(refusal(d, literal_with_indexing("a", "1")), "");
  d.set_max_table_size(1024);
  EXPECT_EQ(refusal(d, unhex("82")), "missing dynamic table size update after a settings change");
  Decoder e(4096);
  e.set_max_table_size(1024);
  std::string block;
  encode_table_size_update(block, 2048);
  EXPECT_EQ(refusal(e, block), "dynamic table size update above the advertised maximum");
  Decoder f(4096);
  f.set_max_table_size(1024);
  block.clear();
  encode_table_size_update(block, 1024);
  block += "\x82";
  EXPECT_EQ(refusal(f, block), "");
  EXPECT_EQ(refusal(f, unhex("82")), "");  // only the first block after the change must update
  // Raising the maximum needs no update.
  Decoder g(1024);
  g.set_max_table_size(4096);
  EXPECT_EQ(refusal(g, unhex("82")), "");
}

// --- hostile input ---------------------------------------------------------------------------------

TEST(HpackHostile, Integers) {
  EXPECT_EQ(refusal(unhex("ff")), "truncated integer");    // prefix full, no continuation
  EXPECT_EQ(refusal(unhex("ff80")), "truncated integer");  // continuation bit, then nothing
  EXPECT_EQ(refusal(unhex("ffffffffff0f")), "integer overflows 32 bits");  // 2^32 + 126
  EXPECT_EQ(refusal(unhex("ff80808080808080808080")), "integer with too many continuation octets");
  EXPECT_EQ(refusal(unhex("ff80808080808080808080 00")), "integer with too many continuation octets");
  EXPECT_EQ(refusal(unhex("ff808080808080808001")), "integer overflows 32 bits");  // 1 << 63
  // Zero-valued padding octets are tolerated: 127 + 0 = index 127, out of range.
  EXPECT_EQ(refusal(unhex("ff808000")), "header field index out of range");
  EXPECT_EQ(refusal(unhex("3fe1ffffff0f")), "integer overflows 32 bits");  // exactly 2^32
  // 2^32 - 1 is a valid integer (then refused as a table size).
  EXPECT_EQ(refusal(unhex("3fe0ffffff0f")), "dynamic table size update above the advertised maximum");
}

TEST(HpackHostile, Indexes) {
  EXPECT_EQ(refusal(unhex("80")), "indexed header field with index 0");
  EXPECT_EQ(refusal(unhex("be")), "header field index out of range");  // 62, empty dynamic table
  EXPECT_EQ(refusal(unhex("0f30 0178")), "header name index out of range");  // name index 63
  EXPECT_EQ(refusal(unhex("7f01 0178")), "header name index out of range");  // indexing, 64
  EXPECT_EQ(refusal(unhex("bd")), "");                                  // 61 is the last static
}

TEST(HpackHostile, Strings) {
  EXPECT_EQ(refusal(unhex("00")), "truncated string length");
  EXPECT_EQ(refusal(unhex("0003 6162")), "string longer than the rest of the block");
  EXPECT_EQ(refusal(unhex("0001 61")), "truncated string length");  // the value is missing
  EXPECT_EQ(refusal(unhex("0001 6103 6162")), "string longer than the rest of the block");
  // A length of 2^28 + 126 with 4 octets behind it.
  EXPECT_EQ(refusal(unhex("007f ffff ff7f 6162 6364")), "string longer than the rest of the block");
  EXPECT_EQ(refusal(unhex("007f ffff ffff 0f")), "integer overflows 32 bits");
  EXPECT_EQ(refusal(unhex("0400 01")), "truncated string length");  // :path "", then :authority without value
}

TEST(HpackHostile, SizeLimits) {
  // A single string over the list limit is refused before it is copied.
  Decoder small(4096, 100);
  std::string block;
  encode_literal_without_indexing(block, "name", std::string(200, 'v'));
  EXPECT_EQ(refusal(small, block), "string over the header list size limit");
  // Fields that fit one by one but not together: 3 x (32 + 1 + 20) = 159 > 100.
  block.clear();
  for (int i = 0; i < 3; ++i) encode_literal_without_indexing(block, "n", std::string(20, 'v'));
  EXPECT_EQ(refusal(small, block), "header list over the size limit");
  // Indexed fields count too: a dynamic entry repeated past the limit.
  Decoder d(4096, 200);
  EXPECT_EQ(refusal(d, literal_with_indexing("n", std::string(40, 'v'))), "");  // 73 octets
  EXPECT_EQ(refusal(d, unhex("bebe")), "");
  EXPECT_EQ(refusal(d, unhex("bebebe")), "header list over the size limit");
  // The limit is per block.
  EXPECT_EQ(refusal(d, unhex("bebe")), "");
}

TEST(HpackHostile, TableSizeUpdates) {
  Decoder d(4096);
  EXPECT_EQ(refusal(d, unhex("3fe21f")), "dynamic table size update above the advertised maximum");  // 4097
  Decoder e(4096);
  EXPECT_EQ(refusal(e, unhex("8220")), "dynamic table size update after a header field");
  Decoder f(4096);
  EXPECT_EQ(refusal(f, unhex("3fe11f 20 82")), "");  // updates first, then fields: fine
}

TEST(HpackHostile, HuffmanStrings) {
  std::string out;
  // EOS (30 one-bits) inside the string.
  EXPECT_FALSE(huffman_decode(unhex("ffffffff"), out));
  out.clear();
  EXPECT_FALSE(huffman_decode(unhex("1fffffffff"), out));  // 'a' then EOS and padding
  // Padding of 8 or more bits: 'a' (00011) + 111, then a whole octet of ones.
  out.clear();
  EXPECT_TRUE(huffman_decode(unhex("1f"), out));
  EXPECT_EQ(out, "a");
  out.clear();
  EXPECT_FALSE(huffman_decode(unhex("1fff"), out));
  out.clear();
  EXPECT_FALSE(huffman_decode(unhex("ff"), out));  // 8 bits of padding and nothing else
  // Padding not all ones: 'a' + 000, 'a' + 101.
  out.clear();
  EXPECT_FALSE(huffman_decode(unhex("18"), out));
  out.clear();
  EXPECT_FALSE(huffman_decode(unhex("1d"), out));
  // A truncated long code (the first 16 bits of the 28-bit code of octet 2) is not padding.
  out.clear();
  EXPECT_FALSE(huffman_decode(unhex("fffe"), out));
  out.clear();
  EXPECT_TRUE(huffman_decode("", out));
  EXPECT_EQ(out, "");

  // Through the decoder: a Huffman value with bad padding fails the block with a reason.
  EXPECT_EQ(refusal(unhex("0001 6181 18")), "invalid Huffman-coded string");
  EXPECT_EQ(refusal(unhex("0001 6184 ffff ffff")), "invalid Huffman-coded string");
}

// Every prefix of valid blocks, and random corruptions of them, fail cleanly or decode
// (exact-size buffers: under ASan a read past the end would abort).
TEST(HpackHostile, TruncationsAndCorruptionsNeverCrash) {
  const char* blocks[] = {
      "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
      "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2",
      "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32",
  };
  std::mt19937 rng(1);
  for (const char* h : blocks) {
    const std::string full = unhex(h);
    for (size_t n = 0; n <= full.size(); ++n) {
      Decoder d(256, 1024);
      std::vector<Header> out;
      std::string error;
      if (!decode_bytes(d, std::string_view(full).substr(0, n), out, error)) {
        EXPECT_FALSE(error.empty());
      }
    }
    for (int round = 0; round < 2000; ++round) {
      std::string bytes = full;
      for (int k = 0; k < 3; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng());
      Decoder d(256, 1024);
      std::vector<Header> out;
      std::string error;
      if (!decode_bytes(d, bytes, out, error)) {
        EXPECT_FALSE(error.empty());
      }
    }
  }
}

}  // namespace
}  // namespace tickinfer::serving::hpack
