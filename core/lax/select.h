// jax.lax.select_n with n cases. core/lax/lax.h includes this header; the definition is
// in core/lax/select.cc.
#pragma once

#include <vector>

#include "core/array.h"

namespace graft {

// lax.select_n(which, *cases): out[i] = cases[which[i]][i]. The cases share one shape and
// dtype; `which` is a scalar or has the cases' shape (no other broadcasting, as JAX), and is
// bool (at most two cases: false picks cases[0]) or int32. JAX leaves an out-of-range `which`
// undefined; here it is clamped (below 0 picks cases[0], from n - 1 up the last case).
// A composite of the binary select primitive (a chain of n - 1 selects), so jvp, vjp (the
// cases' cotangents masked; none for `which`), vmap and jit follow its rules. Errors at trace
// time start with "[select_n]".
Array select_n(const Array& which, const std::vector<Array>& cases);

}  // namespace graft
