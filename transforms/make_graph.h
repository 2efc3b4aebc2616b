// make_graph(f)(args...): the traced program of f (core/ir/program.h) as text, like
// jax.make_jaxpr. Bodies of scan / cond / while_loop print nested under their equation.
//
//   { lambda ; a:f32[3] b:f32[3]. let
//       c:f32[3] = mul a b
//       d:f32[] = reduce_sum[axes=(0)] c
//     in (d) }
//
// Inputs are named in order; constants the function closes over are listed before the ';'
// (scalars print inline as literals); values of an outer trace it closes over become leading
// inputs. One line per equation, with the primitive's params.
#pragma once

#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "core/ir/program.h"
#include "core/tree/tree.h"

namespace graft {

struct GraphText {
  std::string text;
  const std::string& str() const { return text; }
};
inline std::ostream& operator<<(std::ostream& os, const GraphText& g) { return os << g.text; }

template <typename F>
auto make_graph(F f) {
  return [f](const auto&... args) {
    auto all = std::make_tuple(args...);
    auto [leaves, def] = tree_flatten(all);
    FlatFn fn = [&](const std::vector<Array>& ph) {
      auto r = std::apply(f, tree_unflatten<decltype(all)>(def, ph));
      return tree_leaves(r);
    };
    std::vector<Aval> avals;
    for (const Array& a : leaves) avals.push_back(a.aval());
    return GraphText{print_program(*trace_closed(fn, avals).program)};
  };
}

}  // namespace graft
