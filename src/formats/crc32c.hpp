#pragma once
// CRC-32C (Castagnoli) and the "masked" form TensorFlow stores in table blocks, tensor bundles
// and TFRecords: masking keeps a CRC of data that itself contains CRCs from looking valid.
#include <cstddef>
#include <cstdint>

namespace tickinfer::formats {

// Reflected polynomial 0x82F63B78, init and final xor 0xFFFFFFFF; crc32c("123456789") == 0xE3069283.
uint32_t crc32c(const void* data, size_t size);
// Continues a CRC over more bytes: crc32c_extend(crc32c(a), b) == crc32c(a + b).
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size);
// ((crc >> 15) | (crc << 17)) + 0xa282ead8, mod 2^32.
uint32_t mask_crc32c(uint32_t crc);
inline uint32_t masked_crc32c(const void* data, size_t size) { return mask_crc32c(crc32c(data, size)); }

}  // namespace tickinfer::formats
