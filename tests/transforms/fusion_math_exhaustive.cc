// Every one of the 2^32 f32 bit patterns through jitted exp, tanh and logistic (compiled fused
// loops, with their inline Eigen algorithms) and through eager: the bits must agree. Too slow
// for the test suite (about 45 s a function, optimized), so a program run by hand after
// changing core/backend/cpu/eigen_math_ir.cc:
//   bazel run -c opt //tests/transforms:fusion_math_exhaustive [-- exp|tanh|logistic]
//   GRAFT_FUSION_CODEGEN_ISA=avx2 bazel run -c opt //tests/transforms:fusion_math_exhaustive
// Exits 1 on any mismatch, printing the first few; 2 for an unknown function name.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/ops.h"
#include "transforms/jit.h"

namespace g = graft;

namespace {

using Unary = g::Array (*)(const g::Array&);

// Mismatching inputs of one function (times 2, so that the group is a fused loop).
int64_t mismatches(const char* name, Unary op) {
  constexpr int64_t kChunk = int64_t{1} << 26;
  auto fn = [op](const g::Array& x) { return op(x) * 2.0f; };
  auto jitted = g::jit(fn);
  std::vector<float> in(kChunk);
  int64_t bad = 0;
  for (int64_t c = 0; c < (int64_t{1} << 32); c += kChunk) {
    for (int64_t i = 0; i < kChunk; ++i) {
      const auto bits = static_cast<uint32_t>(c + i);
      std::memcpy(&in[i], &bits, 4);
    }
    g::Array x = g::array<float>(in, g::Shape{kChunk});
    std::vector<uint32_t> got =
        g::bitcast_convert_type(jitted(x), g::DType::kU32).to_vector<uint32_t>();
    std::vector<uint32_t> want =
        g::bitcast_convert_type(fn(x), g::DType::kU32).to_vector<uint32_t>();
    for (int64_t i = 0; i < kChunk; ++i) {
      if (got[i] == want[i]) continue;
      if (++bad <= 8) {
        std::printf("%s(%a) [bits %08x]: compiled %08x, eager %08x\n", name, in[i],
                    static_cast<uint32_t>(c + i), got[i], want[i]);
      }
    }
  }
  std::printf("%s: %lld of 2^32 inputs differ\n", name, static_cast<long long>(bad));
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  const std::pair<const char*, Unary> ops[] = {
      {"exp", [](const g::Array& x) { return g::exp(x); }},
      {"tanh", [](const g::Array& x) { return g::tanh(x); }},
      {"logistic", [](const g::Array& x) { return g::sigmoid(x); }}};
  int64_t bad = 0;
  bool ran = false;
  for (const auto& [name, op] : ops) {
    if (!only.empty() && only != name) continue;
    bad += mismatches(name, op);
    ran = true;
  }
  if (!ran) {
    std::fprintf(stderr, "fusion_math_exhaustive: no function %s (exp, tanh or logistic)\n",
                 only.c_str());
    return 2;
  }
  return bad == 0 ? 0 : 1;
}
