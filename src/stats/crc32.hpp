#pragma once
// CRC-32 (IEEE 802.3 polynomial 0xEDB88320, reflected, init and final xor 0xFFFFFFFF): the same
// value zlib's crc32() and Python's zlib.crc32() give, so capture files, decision logs, signals and
// .tkq model files can be checked by tools outside this project.
#include <cstddef>
#include <cstdint>

namespace tickinfer::stats {

std::uint32_t crc32(const std::uint8_t* data, std::size_t len, std::uint32_t crc = 0) noexcept;

}  // namespace tickinfer::stats
