// Each block of values is first widened, exactly, to one of three types (int64 for signed
// integers, uint64 for unsigned ones and bool, double for floats), then converted to the
// target. The widening is exact and convert_value rounds or saturates a wide value as it does
// the narrow one (a float's range bounds compare the same in double; an integer is rounded to
// a float once; an fp8 value is exact in double and rounds from it once), so the bits are those
// of the direct conversion, while 15 + 3 x 15 loops are compiled instead of 15 x 15.
#include "core/backend/cpu/convert_elements.h"

#include <algorithm>
#include <type_traits>

#include "core/backend/cpu/bf16_convert.h"
#include "core/backend/cpu/parallel.h"
#include "core/dtype/convert.h"

namespace graft::cpu {
namespace {

constexpr int64_t kGrain = 1 << 15;
constexpr int64_t kBlock = 512;

template <typename S>
using Wide = std::conditional_t<
    std::is_integral_v<S>, std::conditional_t<std::is_unsigned_v<S>, uint64_t, int64_t>, double>;

template <typename W>
using WidenFn = void (*)(const void* in, int64_t start, int64_t len, W* out);

template <typename S, typename W>
void widen_block(const void* in, int64_t start, int64_t len, W* out) {
  const S* s = static_cast<const S*>(in) + start;
  for (int64_t i = 0; i < len; ++i) out[i] = convert_value<S, W>(s[i]);
}

template <typename W>
void convert_from_wide(const void* in, WidenFn<W> widen, void* out, DType to, int64_t n) {
  dispatch_real_or_float8(to, [&]<typename D>() {
    D* y = static_cast<D*>(out);
    parallel_for(n, kGrain, [&](int64_t b, int64_t e) {
      W buf[kBlock];
      for (int64_t s = b; s < e; s += kBlock) {
        const int64_t len = std::min(kBlock, e - s);
        widen(in, s, len, buf);
        for (int64_t i = 0; i < len; ++i) y[s + i] = convert_value<W, D>(buf[i]);
      }
    });
  });
}

}  // namespace

void convert_elements(const void* in, DType from, void* out, DType to, int64_t n) {
  // Mixed precision's conversions (weights and activations to bf16 and back) run vectorized.
  if (from == DType::kF32 && to == DType::kBF16) {
    return parallel_for(n, kGrain, [&](int64_t b, int64_t e) {
      round_to_bf16(static_cast<const float*>(in) + b, static_cast<bf16*>(out) + b, e - b);
    });
  }
  if (from == DType::kBF16 && to == DType::kF32) {
    return parallel_for(n, kGrain, [&](int64_t b, int64_t e) {
      widen_bf16(static_cast<const bf16*>(in) + b, static_cast<float*>(out) + b, e - b);
    });
  }
  dispatch_real_or_float8(from, [&]<typename S>() {
    using W = Wide<S>;
    convert_from_wide<W>(in, &widen_block<S, W>, out, to, n);
  });
}

}  // namespace graft::cpu
