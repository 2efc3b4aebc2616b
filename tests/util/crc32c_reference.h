// Reference CRC-32C for tests: one bit at a time straight from the reflected Castagnoli
// polynomial (no table, no SSE4.2), independent of checkpoint/crc32c.cc.
#pragma once

#include <cstdint>
#include <string>

namespace graft::testing {

inline uint32_t crc32c_bitwise(const std::string& data) {
  uint32_t crc = 0xffffffffu;
  for (unsigned char byte : data) {
    crc ^= byte;
    for (int i = 0; i < 8; ++i) crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
  }
  return ~crc;
}

}  // namespace graft::testing
