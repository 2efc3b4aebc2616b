// linearize(f, args...) -> pair(outputs, f_jvp), like jax.linearize: f's forward pass is
// evaluated once, here; f_jvp(tangents...) runs only the linear (tangent) part of f's jvp at
// that point, reading the forward values it needs (the residuals) as constants.
//
// How: the jvp of f is traced once with placeholder tangents (JAX's jvp with the tangents
// unknown, partially evaluated). The equations that do not depend on the tangents (the
// primal computation) are evaluated at once; the rest, a program from tangents to output
// tangents, is what f_jvp runs. Called on tracers (inside grad, vmap or jit), the primal
// values are those tracers and become inputs of the tangent program instead.
#pragma once

#include <tuple>
#include <utility>
#include <vector>

#include "core/ir/program.h"
#include "core/tree/tree.h"
#include "transforms/flat_fn.h"

namespace graft {
namespace detail {

struct Linearized {
  std::vector<Array> outputs;  // f's outputs at the primals
  ClosedProgram tangent;       // input tangents -> output tangents (the linear part only)
};
Linearized linearize_flat(const FlatFn& fn, const std::vector<Array>& primals);
// Runs the tangent program, checking the tangents' shapes and dtypes against the primals'.
std::vector<Array> apply_linearized(const ClosedProgram& tangent,
                                    const std::vector<Array>& tangents);

}  // namespace detail

template <typename F, typename... Args>
auto linearize(F f, const Args&... args) {
  using Result = std::decay_t<decltype(f(args...))>;
  auto [leaves, def] = tree_flatten(std::tuple<Args...>(args...));
  TreeDef out_def;
  detail::Linearized lin =
      detail::linearize_flat(detail::flat_fn<std::tuple<Args...>, Result>(f, def, &out_def), leaves);
  auto f_jvp = [tangent = lin.tangent, def = def, out_def](const Args&... tangents) {
    auto [tl, td] = tree_flatten(std::tuple<Args...>(tangents...));
    check_same_structure("linearize", def, td);
    return tree_unflatten<Result>(out_def, detail::apply_linearized(tangent, tl));
  };
  return std::pair{tree_unflatten<Result>(out_def, lin.outputs), f_jvp};
}

}  // namespace graft
