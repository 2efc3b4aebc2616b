// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as used by TFRecord framing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace graft::train {

// Continues a CRC: crc32c_extend(crc32c(a), b) == crc32c(a + b).
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size);
inline uint32_t crc32c(const void* data, size_t size) { return crc32c_extend(0, data, size); }
inline uint32_t crc32c(std::string_view s) { return crc32c(s.data(), s.size()); }

// TFRecord stores masked CRCs (a CRC of data that contains CRCs is weak otherwise).
inline uint32_t mask_crc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
inline uint32_t unmask_crc32c(uint32_t masked) {
  uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

}  // namespace graft::train
