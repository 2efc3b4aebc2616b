// A stable digest of bytes: FNV-1a, 64 bits. The same value in every process, run and build
// (std::hash and absl::Hash are seeded per process), so processes can compare what they run
// and data pipelines can fingerprint their content. Not for security.
#pragma once

#include <cstdint>
#include <string_view>

namespace graft {

inline uint64_t fnv1a64(std::string_view s, uint64_t h = 0xCBF29CE484222325ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return h;
}

}  // namespace graft
