// The reader of the jax.random golden files (tests/core/random/testdata/random*_vectors.txt, written
// by tools/make_random*_vectors.py): one case per line, `<name> <dtype> <shape|scalar>
// <values>`, ints in decimal, floats as exact hex bit patterns. Shared by random_test and
// random_dist_test.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/ops.h"

namespace graft::random_vectors {

struct Golden {
  std::string dtype;
  Shape shape;
  std::vector<uint64_t> bits;  // ints as their two's-complement bits, floats as bit patterns
};

inline int golden_bytes(const std::string& dtype) {
  if (dtype == "bool" || dtype == "uint8") return 1;
  if (dtype == "float16" || dtype == "bfloat16" || dtype == "uint16") return 2;
  if (dtype == "float64" || dtype == "uint64") return 8;
  return 4;
}

inline std::map<std::string, Golden> load_golden(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    const char* srcdir = std::getenv("TEST_SRCDIR");
    if (srcdir) in.open(std::string(srcdir) + "/graft/" + path);
  }
  std::map<std::string, Golden> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string name, shape, v;
    Golden g;
    ls >> name >> g.dtype >> shape;
    if (shape != "scalar") {
      std::istringstream ss(shape);
      for (std::string d; std::getline(ss, d, ',');) g.shape.push_back(std::stoll(d));
    }
    while (ls >> v) {
      g.bits.push_back(v.rfind("0x", 0) == 0 ? std::stoull(v, nullptr, 16)
                       : v[0] == '-'         ? static_cast<uint64_t>(std::stoll(v))
                                             : std::stoull(v));
    }
    int bytes = golden_bytes(g.dtype);
    if (bytes < 8) {
      for (uint64_t& b : g.bits) b &= (uint64_t{1} << (8 * bytes)) - 1;
    }
    out[name] = std::move(g);
  }
  return out;
}

// Bit patterns of a graft array's elements, masked to the golden dtype's width.
inline std::vector<uint64_t> bits_of(const Array& a, int golden_bytes) {
  auto buf = a.buffer();
  int64_t w = dtype_size(a.dtype());
  std::vector<uint64_t> out(a.size());
  const auto* p = static_cast<const unsigned char*>(buf->data());
  uint64_t mask = golden_bytes == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * golden_bytes)) - 1;
  for (int64_t i = 0; i < a.size(); ++i) {
    uint64_t v = 0;
    std::memcpy(&v, p + i * w, static_cast<size_t>(w));  // little-endian
    out[i] = v & mask;
  }
  return out;
}

// The graft dtype each golden dtype is compared with (u16 / u64 bits come back widened).
inline DType graft_dtype(const std::string& dtype) {
  static const std::map<std::string, DType> m = {
      {"uint32", DType::kU32},  {"uint8", DType::kU8},      {"uint16", DType::kU32},
      {"uint64", DType::kI64},  {"int32", DType::kI32},     {"bool", DType::kBool},
      {"float16", DType::kF16}, {"bfloat16", DType::kBF16}, {"float32", DType::kF32},
      {"float64", DType::kF64}};
  return m.at(dtype);
}

}  // namespace graft::random_vectors
