// CPU kernels of the random family: threefry2x32, elementwise over the counters. The block
// function is branch-free integer code; the loop is written so the compiler vectorizes it
// (8 blocks per AVX2 register), and parallel_for splits large draws across threads.
#include <cstdint>

#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/parallel.h"
#include "core/backend/threefry_block.h"
#include "core/primitives/random.h"

// -O2's "very cheap" vectorizer skips loops of unknown trip count; this loop is worth it.
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")

namespace graft::cpu {
namespace {

constexpr int64_t kGrain = 1 << 14;

// kStride1/kStride2: 0 when that key word is a scalar (broadcast), 1 when it is per element.
template <int kStride1, int kStride2>
void threefry_range(const uint32_t* __restrict k1, const uint32_t* __restrict k2,
                    const uint32_t* __restrict x1, const uint32_t* __restrict x2,
                    uint32_t* __restrict y1, uint32_t* __restrict y2, int64_t b, int64_t e) {
  for (int64_t i = b; i < e; ++i) {
    uint32_t a = x1[i], c = x2[i];
    threefry2x32_block(k1[i * kStride1], k2[i * kStride2], a, c);
    y1[i] = a;
    y2[i] = c;
  }
}

void threefry2x32_kernel(Call& c) {
  int64_t n = numel(c.out_aval(0).shape);
  const uint32_t *k1 = c.in<uint32_t>(0), *k2 = c.in<uint32_t>(1);
  const uint32_t *x1 = c.in<uint32_t>(2), *x2 = c.in<uint32_t>(3);
  uint32_t *y1 = c.out<uint32_t>(0), *y2 = c.out<uint32_t>(1);
  if (n == 0) return;
  bool s1 = c.in_aval(0).shape.empty(), s2 = c.in_aval(1).shape.empty();
  auto range = s1 ? (s2 ? &threefry_range<0, 0> : &threefry_range<0, 1>)
                  : (s2 ? &threefry_range<1, 0> : &threefry_range<1, 1>);
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) { range(k1, k2, x1, x2, y1, y2, b, e); });
}

}  // namespace

void register_random_kernels(KernelTable& table) {
  table[int(PrimitiveId::kThreefry2x32)] = &threefry2x32_kernel;
}

}  // namespace graft::cpu
