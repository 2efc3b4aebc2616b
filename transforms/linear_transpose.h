// linear_transpose(f, primals...), like jax.linear_transpose: for f linear in its arguments,
// the transpose function taking a cotangent like f's output to a tuple of cotangents like the
// arguments. The primals only give shapes and dtypes.
//
//   auto ft = graft::linear_transpose([&](const Array& x) { return matmul(a, x); }, x);
//   auto [ct_x] = ft(ct_y);                                // = matmul(a.T, ct_y)
//
// It is f's pullback (graft's vjp), traced once into a program from output cotangents to
// input cotangents. f must be linear where graft can tell: a pullback that reads f's inputs
// (sin(x), x * x) is an error, as JAX's transpose fails on a nonlinear equation. Affine parts
// (x + 1) are dropped, as in JAX. Only floating arguments and outputs (JAX also transposes
// integer -> integer functions; graft's vjp does not).
#pragma once

#include <tuple>
#include <vector>

#include "core/ir/program.h"
#include "core/tree/tree.h"
#include "transforms/flat_fn.h"

namespace graft {
namespace detail {

struct LinearTranspose {
  ClosedProgram program;        // output cotangents -> input cotangents
  std::vector<Aval> out_avals;  // of f's outputs
};
LinearTranspose linear_transpose_flat(const FlatFn& fn, const std::vector<Array>& primals);
// Checks the cotangents' shapes and dtypes against f's outputs, then runs the transpose.
std::vector<Array> apply_transpose(const LinearTranspose& t, const std::vector<Array>& cts);

}  // namespace detail

template <typename F, typename... Args>
auto linear_transpose(F f, const Args&... primals) {
  using Result = std::decay_t<decltype(f(primals...))>;
  auto [leaves, def] = tree_flatten(std::tuple<Args...>(primals...));
  TreeDef out_def;
  detail::LinearTranspose t = detail::linear_transpose_flat(
      detail::flat_fn<std::tuple<Args...>, Result>(f, def, &out_def), leaves);
  return [t, def = def, out_def](const Result& ct) {
    auto [cts, ct_def] = tree_flatten(ct);
    if (ct_def != out_def) {
      fail("linear_transpose", "cotangent tree does not match function output, expected ",
           out_def.str(), " but got ", ct_def.str());
    }
    return tree_unflatten<std::tuple<Args...>>(def, detail::apply_transpose(t, cts));
  };
}

}  // namespace graft
