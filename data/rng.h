// Portable deterministic randomness for data pipelines: splitmix64 and an unbiased bounded
// draw written out here, so a seed gives the same split, the same window order and the same
// shuffles with every compiler and standard library (std::shuffle and
// std::uniform_int_distribution are implementation-defined and differ between libstdc++ and
// libc++).
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ir/digest.h"

namespace graft::data {

// One step of splitmix64 (Steele, Lea, Flood 2014): advances `state`, returns 64 mixed bits.
inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Stateless mix of a value (the splitmix64 finalizer of `x`).
inline uint64_t mix64(uint64_t x) { return splitmix64(x); }

// FNV-1a over bytes, a stable content hash (document split, corpus fingerprint).
using graft::fnv1a64;

// Uniform integer in [0, n) for n > 0: Lemire's multiply-shift with rejection, so unbiased.
inline uint64_t uniform_below(uint64_t& state, uint64_t n) {
  uint64_t x = splitmix64(state);
  unsigned __int128 m = static_cast<unsigned __int128>(x) * n;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < n) {
    const uint64_t threshold = (0 - n) % n;  // 2^64 mod n
    while (low < threshold) {
      x = splitmix64(state);
      m = static_cast<unsigned __int128>(x) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

// A seeded permutation of 0..n-1 (Fisher-Yates driven by uniform_below).
inline std::vector<int64_t> permutation(int64_t n, uint64_t seed) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  uint64_t state = seed;
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(uniform_below(state, static_cast<uint64_t>(i) + 1));
    std::swap(p[i], p[j]);
  }
  return p;
}

}  // namespace graft::data
