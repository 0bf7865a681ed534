// libFuzzer: HPACK decoding of arbitrary bytes as a sequence of header blocks on one connection
// (the input split at each "\xff\xfe\xfd"), so the dynamic table carries over between blocks.
// The first byte picks the table size and header list limit (small tables evict more).
// Checks, besides no crash / out-of-bounds read under ASan:
//  - every decoded list, re-encoded with encode_literal_without_indexing (raw, then Huffman with
//    static name indexes), decodes with a fresh Decoder to the same list;
//  - every block that is valid Huffman re-encodes to exactly its bytes (the code and the
//    all-ones padding of under 8 bits leave one encoding per string);
//  - a refusal always comes with a reason.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "serving/h2/hpack.hpp"

namespace {

using namespace tickinfer::serving::hpack;

constexpr std::string_view kSeparator = "\xff\xfe\xfd";

bool decodes_to(const std::string& block, const std::vector<Header>& expected, size_t list_limit) {
  Decoder fresh(4096, list_limit);
  std::vector<Header> out;
  std::string error;
  return fresh.decode(reinterpret_cast<const uint8_t*>(block.data()), block.size(), out, error) && out == expected;
}

void check_huffman(std::string_view chunk) {
  std::string decoded;
  if (!huffman_decode(reinterpret_cast<const uint8_t*>(chunk.data()), chunk.size(), decoded)) return;
  std::string encoded;
  huffman_encode(decoded, encoded);
  if (encoded != chunk || huffman_encoded_size(decoded) != chunk.size()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static constexpr size_t kTableSizes[4] = {0, 64, 256, 4096};
  const size_t table_size = kTableSizes[data[0] & 3];
  const size_t list_limit = (data[0] & 4) ? 512 : 16384;
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);

  Decoder decoder(table_size, list_limit);
  while (true) {
    const size_t cut = rest.find(kSeparator);
    const std::string_view chunk = rest.substr(0, cut);
    check_huffman(chunk);

    std::vector<Header> list;
    std::string error;
    // A copy of exactly the chunk, so that ASan sees any read past its end.
    const std::vector<uint8_t> bytes(chunk.begin(), chunk.end());
    if (!decoder.decode(bytes.data(), bytes.size(), list, error)) {
      if (error.empty()) __builtin_trap();
      break;  // the connection would end here: the decoder's state is undefined
    }
    std::string raw, coded;
    for (const Header& h : list) {
      encode_literal_without_indexing(raw, h.name, h.value, false);
      if (const size_t index = static_name_index(h.name)) {
        encode_literal_without_indexing(coded, index, h.value, true);
      } else {
        encode_literal_without_indexing(coded, h.name, h.value, true);
      }
    }
    if (!decodes_to(raw, list, list_limit) || !decodes_to(coded, list, list_limit)) __builtin_trap();

    if (cut == std::string_view::npos) break;
    rest.remove_prefix(cut + kSeparator.size());
  }
  return 0;
}
