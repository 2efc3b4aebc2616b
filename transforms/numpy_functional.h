// jax.numpy's function-taking helpers: vectorize, apply_along_axis,
// apply_over_axes, fromfunction and piecewise. As in JAX 0.10.2 (lax_numpy.py, vectorize.py)
// they map C++ callables with graft::vmap, so the callables see the per-element (or per-core-
// dims) slices JAX's would, and grad / jit work through them. They live in transforms/ because
// core/ cannot use vmap.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "core/ops.h"

namespace graft {

// A function of several arrays giving one or more arrays.
using ArraysFn = std::function<std::vector<Array>(const std::vector<Array>&)>;

// jnp.vectorize(f, excluded=, signature=): f mapped over the broadcast leading ("loop") dims of
// its arguments. Without a signature every argument's core is a scalar; a gufunc signature
// such as "(n),(n)->()" or "(m,n)->(m),(n)" names each argument's and output's trailing core
// dims (equal names must have equal sizes; each output's core dims are checked). Arguments
// whose index is in `excluded` are passed to f whole and unmapped. Errors start "vectorize: ".
ArraysFn vectorize(ArraysFn f, const std::string& signature = "",
                   const std::set<int>& excluded = {});

// jnp.apply_along_axis(func1d, axis, arr): func1d applied to every 1-D slice along axis; its
// output's dims replace that axis.
Array apply_along_axis(const std::function<Array(const Array&)>& func1d, int64_t axis,
                       const Array& arr);

// jnp.apply_over_axes(func, a, axes): a = func(a, axis) for each axis in turn; a result with
// one dim fewer gets that axis back as size 1.
Array apply_over_axes(const std::function<Array(const Array&, int64_t)>& func, const Array& a,
                      const std::vector<int64_t>& axes);

// jnp.fromfunction(f, shape, dtype): f called (through vmap) on the scalar index of each
// element, one index array per dim, so out[i, j, ...] = f(i, j, ...).
Array fromfunction(const std::function<Array(const std::vector<Array>&)>& f, const Shape& shape,
                   DType dtype = DType::kF32);

// jnp.piecewise(x, condlist, funclist): where the k-th condition holds (the last one that
// holds wins), funclist[k] of x; elsewhere funclist[n] (the "otherwise" entry) if given,
// else 0. An entry is a constant or a function, called (through vmap) per element; results
// are cast to x's dtype. Each condition is a bool array of x's shape (or a scalar).
using PiecewiseFn = std::variant<double, std::function<Array(const Array&)>>;
Array piecewise(const Array& x, const std::vector<Array>& condlist,
                const std::vector<PiecewiseFn>& funclist);

}  // namespace graft
