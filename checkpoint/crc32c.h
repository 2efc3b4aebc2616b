// CRC-32C (Castagnoli), the checksum stored per tensor in checkpoint metadata. Uses the
// SSE4.2 crc32 instruction when the build targets it (the default build does: -mavx2 implies
// SSE4.2) and a slicing-by-8 table otherwise, so fuzz and sanitizer builds agree bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>

namespace graft::checkpoint {

// Extends `crc` (0 for a fresh checksum) over n bytes. crc32c("123456789") == 0xE3069283.
uint32_t crc32c(const void* data, size_t n, uint32_t crc = 0);

}  // namespace graft::checkpoint
