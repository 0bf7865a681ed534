#pragma once
// Byte-level constants and little-endian primitives shared by the .tkq writer and reader
// (docs/tkq-format.md is the specification; keep the two in step).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tflite/program.hpp"

namespace tickinfer::formats::tkq {

inline constexpr size_t kHeaderSize = 64;
inline constexpr size_t kSectionEntrySize = 32;
inline constexpr size_t kAlign = 64;  // sections and tensor data start on 64-byte boundaries
inline constexpr size_t kHeaderCrcOffset = 60;  // CRC-32 of header bytes [0, 60)

enum SectionKind : uint32_t { kSectionProgram = 1, kSectionData = 2 };

// Header byte 40, the program flags (1.3; reserved and zero before, so a 1.2 reader refuses a
// file that sets one by name).
inline constexpr size_t kProgramFlagsOffset = 40;
inline constexpr uint8_t kProgramStreamOnly = 1;  // tfl::Program::stream_only

// Tensor flags byte.
inline constexpr uint8_t kFlagVariable = 1;
inline constexpr uint8_t kFlagHasData = 2;
inline constexpr uint8_t kFlagZeroPointsZero = 4;  // every zero point is 0: the list is not stored

// Bytes of the fixed part of the version 1.0 op options block (before new_shape's count). A
// stored block may be shorter: the bytes it leaves out are those of the default options.
inline constexpr size_t kOptionsFixedSize = 84;
inline constexpr size_t kOptionsFullSize = kOptionsFixedSize + 4;  // with an empty new_shape

// The op codes a .tkq stores: 1.0's, every OpCode up to BATCH_MATMUL; 1.1 adds REVERSE_V2 and
// SEQUENCE_GRU, the two the quantizer writes beyond them. The control-flow and resource-variable
// ops between (WHILE ... SELECT_V2) are a converter's, not the quantizer's: a reader refuses them,
// so a .tkq cannot reach them with operands of its own choosing.
inline constexpr uint16_t kLastOpCode = static_cast<uint16_t>(tfl::OpCode::SequenceGru);
inline bool stores_op_code(uint16_t code) {
  return code <= static_cast<uint16_t>(tfl::OpCode::BatchMatMul) || code == static_cast<uint16_t>(tfl::OpCode::ReverseV2) ||
         code == static_cast<uint16_t>(tfl::OpCode::SequenceGru);
}

// The options block of `o`, untruncated (tkq_options.cpp). Version 1.1 gave the reserved byte
// after the nine flags a meaning: 1 = SEQUENCE_GRU resets before its recurrent product
// (!reset_after), 0 otherwise, so every 1.0 block reads the same. Version 1.2 made it the GRU
// flags: bit 0 that reset_before, bit 1 own_arithmetic (tflite/ops/sequence_gru_own.cpp); a 1.1
// reader refuses a block with bit 1 by name rather than run the GRU in other arithmetic.
inline constexpr uint8_t kGruResetBefore = 1, kGruOwnArithmetic = 2;
std::vector<uint8_t> encode_options(const tfl::OpOptions& o);

inline size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// Appends little-endian values (the project only targets little-endian hosts; the static_assert
// in the .cpp files keeps it that way).
class ByteWriter {
 public:
  std::vector<uint8_t> bytes;
  template <class T>
  void put(T v) {
    const size_t at = bytes.size();
    bytes.resize(at + sizeof(T));
    std::memcpy(bytes.data() + at, &v, sizeof(T));
  }
  void put_bytes(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    bytes.insert(bytes.end(), b, b + n);
  }
  void put_string(const std::string& s) {
    put<uint32_t>(static_cast<uint32_t>(s.size()));
    put_bytes(s.data(), s.size());
  }
  template <class T>
  void patch(size_t at, T v) { std::memcpy(bytes.data() + at, &v, sizeof(T)); }
};

}  // namespace tickinfer::formats::tkq
