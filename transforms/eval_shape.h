// eval_shape(f, args...): the shapes and dtypes of f's outputs, without computing anything
// (jax.eval_shape). f is traced on placeholders shaped like the arguments' leaves; the result
// has f's result type with placeholder leaves (shape and dtype only, like JAX's
// ShapeDtypeStruct: reading their data is a graft::Error). Errors in f propagate.
#pragma once

#include <tuple>
#include <type_traits>
#include <vector>

#include "core/ir/graph.h"
#include "core/tree/tree.h"
#include "transforms/flat_fn.h"

namespace graft {

template <typename F, typename... Args>
auto eval_shape(F f, const Args&... args) {
  using Result = std::decay_t<decltype(f(args...))>;
  auto [leaves, def] = tree_flatten(std::tuple<Args...>(args...));
  TreeDef out_def;
  FlatFn fn = detail::flat_fn<std::tuple<Args...>, Result>(f, def, &out_def);
  Graph g = trace(fn, leaves);
  std::vector<Array> shapes;
  for (const Array& out : g.outputs) shapes.push_back(Array::placeholder(out.aval()));
  return tree_unflatten<Result>(out_def, shapes);
}

}  // namespace graft
