#pragma once
// The tickinfer quantized model file (.tkq): one tfl::Program, every op with its precision and
// layer label, constant tensor data 64-byte aligned so a mapped file could use weights in place.
// The byte layout is specified in docs/tkq-format.md.
//
// load_tkq() trusts nothing: magic, version, header and section table, both CRC-32s, every
// count, offset, size, enum value and tensor index are checked before use, and counts are
// bounded by the bytes that remain, so a hostile file gets a tickinfer::Error naming the source
// and the problem ("model.tkq: tensor 3 'dense/w': data 100 bytes, shape [10, 8] int8 needs 80")
// and never a crash or an allocation larger than the file.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tflite/program.hpp"

namespace tickinfer::formats {

// The first 8 bytes of every .tkq file.
inline constexpr char kTkqMagic[8] = {'T', 'I', 'C', 'K', 'T', 'K', 'Q', '\0'};
inline constexpr uint16_t kTkqVersionMajor = 1;  // readers refuse other majors
inline constexpr uint16_t kTkqVersionMinor = 3;  // readers accept any minor of their major; 1 added op codes 59 and 60, 2 the GRU's own-arithmetic bit, 3 the program flags byte (stream only)

bool is_tkq(const void* data, size_t size);

// The whole file as bytes. Throws tickinfer::Error if the program cannot be represented (an
// index out of range, constant data whose size does not match its shape and type).
std::vector<uint8_t> serialize_tkq(const tfl::Program& program);
// Writes serialize_tkq(program) to `path`; Error naming the path on I/O failure.
void save_tkq(const tfl::Program& program, const std::string& path);

// Parses a whole file held in memory. `source` names it in error messages.
tfl::Program load_tkq(const void* data, size_t size, std::string_view source = "<memory>");
// Reads `path` and parses it.
tfl::Program load_tkq_file(const std::string& path);

}  // namespace tickinfer::formats
