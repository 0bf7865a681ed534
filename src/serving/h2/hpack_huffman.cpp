// The HPACK Huffman code (RFC 7541 section 5.2, Appendix B): the code table as data, a decoder
// that consumes 4 bits per table lookup, and the encoder.
//
// The decoder is a finite automaton over the code's binary tree: a state is an internal node
// (the bits read since the last complete symbol), and kDecodeTable[state][nibble] says where 4
// more bits lead, which symbol they complete (at most one: no code is shorter than 5 bits), and
// whether the string may end there. The table is computed at compile time from kCodes, so
// there is one hand-written table only, and static_asserts check it is a complete canonical
// prefix code before anything is derived from it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "serving/h2/hpack.hpp"

namespace tickinfer::serving::hpack {
namespace {

struct Code {
  uint32_t bits;  // the code, aligned to the least significant bit ("code as hex")
  uint8_t length;  // in bits, 5..30
};

constexpr int kEos = 256;
constexpr int kSymbols = 257;

// RFC 7541 Appendix B, one row per symbol 0..255 and EOS (256): code as hex, length in bits.
constexpr Code kCodes[kSymbols] = {
    {0x1ff8, 13},     {0x7fffd8, 23},   {0xfffffe2, 28},  {0xfffffe3, 28},   //   0-  3
    {0xfffffe4, 28},  {0xfffffe5, 28},  {0xfffffe6, 28},  {0xfffffe7, 28},   //   4-  7
    {0xfffffe8, 28},  {0xffffea, 24},   {0x3ffffffc, 30}, {0xfffffe9, 28},   //   8- 11
    {0xfffffea, 28},  {0x3ffffffd, 30}, {0xfffffeb, 28},  {0xfffffec, 28},   //  12- 15
    {0xfffffed, 28},  {0xfffffee, 28},  {0xfffffef, 28},  {0xffffff0, 28},   //  16- 19
    {0xffffff1, 28},  {0xffffff2, 28},  {0x3ffffffe, 30}, {0xffffff3, 28},   //  20- 23
    {0xffffff4, 28},  {0xffffff5, 28},  {0xffffff6, 28},  {0xffffff7, 28},   //  24- 27
    {0xffffff8, 28},  {0xffffff9, 28},  {0xffffffa, 28},  {0xffffffb, 28},   //  28- 31
    {0x14, 6},        {0x3f8, 10},      {0x3f9, 10},      {0xffa, 12},       //  ' ' ! " #
    {0x1ff9, 13},     {0x15, 6},        {0xf8, 8},        {0x7fa, 11},       //  $ % & '
    {0x3fa, 10},      {0x3fb, 10},      {0xf9, 8},        {0x7fb, 11},       //  ( ) * +
    {0xfa, 8},        {0x16, 6},        {0x17, 6},        {0x18, 6},         //  , - . /
    {0x0, 5},         {0x1, 5},         {0x2, 5},         {0x19, 6},         //  0 1 2 3
    {0x1a, 6},        {0x1b, 6},        {0x1c, 6},        {0x1d, 6},         //  4 5 6 7
    {0x1e, 6},        {0x1f, 6},        {0x5c, 7},        {0xfb, 8},         //  8 9 : ;
    {0x7ffc, 15},     {0x20, 6},        {0xffb, 12},      {0x3fc, 10},       //  < = > ?
    {0x1ffa, 13},     {0x21, 6},        {0x5d, 7},        {0x5e, 7},         //  @ A B C
    {0x5f, 7},        {0x60, 7},        {0x61, 7},        {0x62, 7},         //  D E F G
    {0x63, 7},        {0x64, 7},        {0x65, 7},        {0x66, 7},         //  H I J K
    {0x67, 7},        {0x68, 7},        {0x69, 7},        {0x6a, 7},         //  L M N O
    {0x6b, 7},        {0x6c, 7},        {0x6d, 7},        {0x6e, 7},         //  P Q R S
    {0x6f, 7},        {0x70, 7},        {0x71, 7},        {0x72, 7},         //  T U V W
    {0xfc, 8},        {0x73, 7},        {0xfd, 8},        {0x1ffb, 13},      //  X Y Z [
    {0x7fff0, 19},    {0x1ffc, 13},     {0x3ffc, 14},     {0x22, 6},         //  \ ] ^ _
    {0x7ffd, 15},     {0x3, 5},         {0x23, 6},        {0x4, 5},          //  ` a b c
    {0x24, 6},        {0x5, 5},         {0x25, 6},        {0x26, 6},         //  d e f g
    {0x27, 6},        {0x6, 5},         {0x74, 7},        {0x75, 7},         //  h i j k
    {0x28, 6},        {0x29, 6},        {0x2a, 6},        {0x7, 5},          //  l m n o
    {0x2b, 6},        {0x76, 7},        {0x2c, 6},        {0x8, 5},          //  p q r s
    {0x9, 5},         {0x2d, 6},        {0x77, 7},        {0x78, 7},         //  t u v w
    {0x79, 7},        {0x7a, 7},        {0x7b, 7},        {0x7ffe, 15},      //  x y z {
    {0x7fc, 11},      {0x3ffd, 14},     {0x1ffd, 13},     {0xffffffc, 28},   //  | } ~ 127
    {0xfffe6, 20},    {0x3fffd2, 22},   {0xfffe7, 20},    {0xfffe8, 20},     // 128-131
    {0x3fffd3, 22},   {0x3fffd4, 22},   {0x3fffd5, 22},   {0x7fffd9, 23},    // 132-135
    {0x3fffd6, 22},   {0x7fffda, 23},   {0x7fffdb, 23},   {0x7fffdc, 23},    // 136-139
    {0x7fffdd, 23},   {0x7fffde, 23},   {0xffffeb, 24},   {0x7fffdf, 23},    // 140-143
    {0xffffec, 24},   {0xffffed, 24},   {0x3fffd7, 22},   {0x7fffe0, 23},    // 144-147
    {0xffffee, 24},   {0x7fffe1, 23},   {0x7fffe2, 23},   {0x7fffe3, 23},    // 148-151
    {0x7fffe4, 23},   {0x1fffdc, 21},   {0x3fffd8, 22},   {0x7fffe5, 23},    // 152-155
    {0x3fffd9, 22},   {0x7fffe6, 23},   {0x7fffe7, 23},   {0xffffef, 24},    // 156-159
    {0x3fffda, 22},   {0x1fffdd, 21},   {0xfffe9, 20},    {0x3fffdb, 22},    // 160-163
    {0x3fffdc, 22},   {0x7fffe8, 23},   {0x7fffe9, 23},   {0x1fffde, 21},    // 164-167
    {0x7fffea, 23},   {0x3fffdd, 22},   {0x3fffde, 22},   {0xfffff0, 24},    // 168-171
    {0x1fffdf, 21},   {0x3fffdf, 22},   {0x7fffeb, 23},   {0x7fffec, 23},    // 172-175
    {0x1fffe0, 21},   {0x1fffe1, 21},   {0x3fffe0, 22},   {0x1fffe2, 21},    // 176-179
    {0x7fffed, 23},   {0x3fffe1, 22},   {0x7fffee, 23},   {0x7fffef, 23},    // 180-183
    {0xfffea, 20},    {0x3fffe2, 22},   {0x3fffe3, 22},   {0x3fffe4, 22},    // 184-187
    {0x7ffff0, 23},   {0x3fffe5, 22},   {0x3fffe6, 22},   {0x7ffff1, 23},    // 188-191
    {0x3ffffe0, 26},  {0x3ffffe1, 26},  {0xfffeb, 20},    {0x7fff1, 19},     // 192-195
    {0x3fffe7, 22},   {0x7ffff2, 23},   {0x3fffe8, 22},   {0x1ffffec, 25},   // 196-199
    {0x3ffffe2, 26},  {0x3ffffe3, 26},  {0x3ffffe4, 26},  {0x7ffffde, 27},   // 200-203
    {0x7ffffdf, 27},  {0x3ffffe5, 26},  {0xfffff1, 24},   {0x1ffffed, 25},   // 204-207
    {0x7fff2, 19},    {0x1fffe3, 21},   {0x3ffffe6, 26},  {0x7ffffe0, 27},   // 208-211
    {0x7ffffe1, 27},  {0x3ffffe7, 26},  {0x7ffffe2, 27},  {0xfffff2, 24},    // 212-215
    {0x1fffe4, 21},   {0x1fffe5, 21},   {0x3ffffe8, 26},  {0x3ffffe9, 26},   // 216-219
    {0xffffffd, 28},  {0x7ffffe3, 27},  {0x7ffffe4, 27},  {0x7ffffe5, 27},   // 220-223
    {0xfffec, 20},    {0xfffff3, 24},   {0xfffed, 20},    {0x1fffe6, 21},    // 224-227
    {0x3fffe9, 22},   {0x1fffe7, 21},   {0x1fffe8, 21},   {0x7ffff3, 23},    // 228-231
    {0x3fffea, 22},   {0x3fffeb, 22},   {0x1ffffee, 25},  {0x1ffffef, 25},   // 232-235
    {0xfffff4, 24},   {0xfffff5, 24},   {0x3ffffea, 26},  {0x7ffff4, 23},    // 236-239
    {0x3ffffeb, 26},  {0x7ffffe6, 27},  {0x3ffffec, 26},  {0x3ffffed, 26},   // 240-243
    {0x7ffffe7, 27},  {0x7ffffe8, 27},  {0x7ffffe9, 27},  {0x7ffffea, 27},   // 244-247
    {0x7ffffeb, 27},  {0xffffffe, 28},  {0x7ffffec, 27},  {0x7ffffed, 27},   // 248-251
    {0x7ffffee, 27},  {0x7ffffef, 27},  {0x7fffff0, 27},  {0x3ffffee, 26},   // 252-255
    {0x3fffffff, 30},                                                        // EOS
};

// --- checks on the transcription: a complete canonical prefix code ---------------------------

// Kraft equality: the code lengths fill the whole binary tree (no gap, no overlap by length).
constexpr bool kraft_sum_is_one() {
  uint64_t sum = 0;
  for (const Code& c : kCodes) sum += uint64_t{1} << (30 - c.length);
  return sum == (uint64_t{1} << 30);
}
static_assert(kraft_sum_is_one(), "Huffman code lengths do not form a complete code");

// Appendix B is canonical: ordered by (length, symbol), each code is the previous one plus one,
// shifted left by the growth in length. Checking every code against that rule catches any
// mistyped hex digit (together with Kraft: any mistyped length).
constexpr bool codes_are_canonical() {
  uint32_t expected = 0;
  int previous_length = 0;
  bool first = true;
  for (int length = 1; length <= 30; ++length) {
    for (int s = 0; s < kSymbols; ++s) {
      if (kCodes[s].length != length) continue;
      if (!first) expected = (expected + 1) << (length - previous_length);
      else expected <<= length;  // the first (shortest) code is all zeros
      first = false;
      previous_length = length;
      if (kCodes[s].bits != expected) return false;
    }
  }
  return true;
}
static_assert(codes_are_canonical(), "Huffman codes are not the canonical code of their lengths");

// --- the 4-bit decoding automaton ------------------------------------------------------------

constexpr int kInternalNodes = kSymbols - 1;  // a full binary tree with 257 leaves

// A child is an internal node (0..255) or a leaf, stored as kLeaf + symbol.
constexpr int kLeaf = 1 << 10;

struct Tree {
  int child[kInternalNodes][2] = {};
  bool accepting[kInternalNodes] = {};  // the path from the root is at most 7 one-bits
};

constexpr Tree build_tree() {
  Tree t;
  for (auto& c : t.child) c[0] = c[1] = -1;
  int nodes = 1;  // node 0 is the root
  for (int s = 0; s < kSymbols; ++s) {
    int node = 0;
    for (int i = kCodes[s].length - 1; i >= 0; --i) {
      const int bit = (kCodes[s].bits >> i) & 1;
      int& next = t.child[node][bit];
      if (i == 0) {
        if (next != -1) throw "Huffman code is not prefix-free";
        next = kLeaf + s;
      } else {
        if (next >= kLeaf) throw "Huffman code is not prefix-free";
        if (next == -1) {
          if (nodes == kInternalNodes) throw "Huffman code has too many nodes";
          next = nodes++;
        }
        node = next;
      }
    }
  }
  for (const auto& c : t.child)
    if (c[0] == -1 || c[1] == -1) throw "Huffman tree is not full";
  // Padding (5.2) is a strict prefix of EOS of at most 7 bits: the nodes reached from the root
  // by 0..7 one-bits. EOS is 30 ones, so none of these is a leaf.
  for (int node = 0, depth = 0; depth <= 7; ++depth, node = t.child[node][1]) t.accepting[node] = true;
  return t;
}

struct Step {
  uint8_t next;    // the state after these 4 bits
  uint8_t symbol;  // the symbol they complete, if kEmit
  uint8_t flags;
};
constexpr uint8_t kEmit = 1;    // `symbol` is complete
constexpr uint8_t kAccept = 2;  // the string may end in `next` (what follows is valid padding)
constexpr uint8_t kFail = 4;    // the bits complete EOS, which must not appear in a string
static_assert(kEmit == 1, "huffman_decode advances its output pointer by (flags & kEmit)");

struct DecodeTable {
  Step step[kInternalNodes][16] = {};
};

constexpr DecodeTable build_decode_table() {
  const Tree tree = build_tree();
  DecodeTable table;
  for (int state = 0; state < kInternalNodes; ++state) {
    for (int nibble = 0; nibble < 16; ++nibble) {
      Step& step = table.step[state][nibble];
      int node = state;
      for (int i = 3; i >= 0; --i) {
        const int next = tree.child[node][(nibble >> i) & 1];
        if (next < kLeaf) {
          node = next;
          continue;
        }
        if (next - kLeaf == kEos) {
          step.flags |= kFail;
          break;
        }
        if (step.flags & kEmit) throw "two symbols in 4 bits: codes must be at least 5 bits";
        step.flags |= kEmit;
        step.symbol = static_cast<uint8_t>(next - kLeaf);
        node = 0;
      }
      step.next = static_cast<uint8_t>(node);
      if (tree.accepting[node]) step.flags |= kAccept;
    }
  }
  return table;
}

constexpr DecodeTable kDecodeTable = build_decode_table();

}  // namespace

bool huffman_decode(const uint8_t* data, size_t size, std::string& out) {
  // A code is at least 5 bits, so at most 8/5 symbols per octet: the output is sized for that
  // up front and trimmed after, which keeps the loop free of reallocations and capacity checks
  // (size is already bounded by the caller's limits).
  const size_t start = out.size();
  out.resize(start + size * 8 / 5 + 1);
  char* w = out.data() + start;
  uint8_t state = 0;
  uint8_t flags = kAccept;  // the empty string is valid
  for (size_t i = 0; i < size; ++i) {
    const Step& high = kDecodeTable.step[state][data[i] >> 4];
    *w = static_cast<char>(high.symbol);
    w += high.flags & kEmit;
    const Step& low = kDecodeTable.step[high.next][data[i] & 0xF];
    *w = static_cast<char>(low.symbol);
    w += low.flags & kEmit;
    if ((high.flags | low.flags) & kFail) {
      out.resize(static_cast<size_t>(w - out.data()));
      return false;
    }
    state = low.next;
    flags = low.flags;
  }
  out.resize(static_cast<size_t>(w - out.data()));
  return (flags & kAccept) != 0;  // else the last bits are not a valid padding (too long, or not all ones)
}

size_t huffman_encoded_size(std::string_view in) noexcept {
  uint64_t bits = 0;
  for (const unsigned char c : in) bits += kCodes[c].length;
  return static_cast<size_t>((bits + 7) / 8);
}

void huffman_encode(std::string_view in, std::string& out) {
  out.reserve(out.size() + huffman_encoded_size(in));
  // `pending` holds the not yet written bits in its low `count` bits (count < 8 between
  // symbols); older, already written bits above them are shifted out or ignored.
  uint64_t pending = 0;
  int count = 0;
  for (const unsigned char c : in) {
    pending = (pending << kCodes[c].length) | kCodes[c].bits;
    count += kCodes[c].length;
    while (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>(pending >> count));
    }
  }
  // Pad with the most significant bits of EOS, i.e. ones.
  if (count > 0) out.push_back(static_cast<char>((pending << (8 - count)) | (0xFFu >> count)));
}

}  // namespace tickinfer::serving::hpack
