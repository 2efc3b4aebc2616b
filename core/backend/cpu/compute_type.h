// The type CPU kernels compute values of type T in: f16 / bf16 widen to f32 (rounded back to
// nearest even on store), every other type is itself. Internal to the CPU backend.
#pragma once

#include "core/dtype/half.h"

namespace graft::cpu {

template <typename T>
struct Widen {
  using type = T;
};
template <>
struct Widen<f16> {
  using type = float;
};
template <>
struct Widen<bf16> {
  using type = float;
};
template <typename T>
using widen_t = typename Widen<T>::type;

}  // namespace graft::cpu
