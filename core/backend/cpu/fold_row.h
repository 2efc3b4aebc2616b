// acc[j] = f(acc[j], row[j]) for j < n, in fixed steps of 16 and then the rest: GCC vectorizes
// a loop of constant length at -O2 and leaves one of unknown length scalar, and the restrict
// parameters tell it acc and row do not overlap. Each element is combined once, in order, so
// the result is the plain loop's. Used by the reduce kernels (accumulating rows) and the
// scatters (combining an update row into its target).
#pragma once

#include <cstdint>

namespace graft::cpu {

template <typename A, typename In, typename F>
inline void fold_row(A* __restrict acc, const In* __restrict row, int64_t n, F f) {
  constexpr int kStep = 16;
  int64_t j = 0;
  for (; j + kStep <= n; j += kStep) {
    for (int q = 0; q < kStep; ++q) acc[j + q] = f(acc[j + q], row[j + q]);
  }
  for (; j < n; ++j) acc[j] = f(acc[j], row[j]);
}

}  // namespace graft::cpu
