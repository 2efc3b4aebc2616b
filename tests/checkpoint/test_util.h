// Helpers shared by the checkpoint tests: scratch directories and arrays whose bytes are a
// known function of a seed, so a restore is checked byte for byte against what was saved.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>

#include "core/array.h"
#include "core/buffer.h"

namespace graft::checkpoint::testing {

// A fresh empty directory under TEST_TMPDIR (or /tmp).
inline std::string fresh_dir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  static int counter = 0;
  std::filesystem::path p =
      std::filesystem::path(base ? base : "/tmp") /
      (name + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

// Element i of a leaf of dtype d: any bit pattern for numbers (NaN payloads included, since
// a checkpoint must keep bits), 0/1 for bool.
inline Array pattern_array(DType d, const Shape& shape, uint64_t seed) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  size_t bytes = static_cast<size_t>(n * dtype_size(d));
  auto buf = Buffer::make(bytes);
  std::mt19937_64 rng(seed * 7919 + static_cast<uint64_t>(d));
  auto* p = static_cast<unsigned char*>(buf->data());
  for (size_t i = 0; i < bytes; ++i) {
    p[i] = d == DType::kBool ? (rng() & 1) : static_cast<unsigned char>(rng());
  }
  return Array::from_buffer(buf, shape, d);
}

inline bool same_bytes(const Array& a, const Array& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  return std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.nbytes())) == 0;
}

}  // namespace graft::checkpoint::testing
