// make_graph(f)(args...): the traced graph of f as text, like jax.make_jaxpr.
//
//   { lambda ; a:f32[3] b:f32[3]. let
//       c:f32[3] = mul a b
//       d:f32[] = reduce_sum[axes=(0)] c
//     in (d) }
//
// Inputs are named in order; constants the function closes over are listed before the ';'
// (scalars print inline as literals). One line per equation, with the primitive's params.
#pragma once

#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "core/tree.h"
#include "transforms/graph.h"

namespace graft {

struct GraphText {
  std::string text;
  const std::string& str() const { return text; }
};
inline std::ostream& operator<<(std::ostream& os, const GraphText& g) { return os << g.text; }

// Prints a traced graph.
std::string print_graph(const Graph& g);

namespace detail {
// Shared by the graph and jit-program printers: variable names a, b, ..., z, ba, bb, ... like
// jaxprs, and evaluated scalars as typed literals ("2.0:f32[]").
std::string var_name(int i);
std::string literal(const Array& a);
}  // namespace detail

template <typename F>
auto make_graph(F f) {
  return [f](const auto&... args) {
    auto all = std::make_tuple(args...);
    auto [leaves, def] = tree_flatten(all);
    FlatFn fn = [&](const std::vector<Array>& ph) {
      auto r = std::apply(f, tree_unflatten<decltype(all)>(def, ph));
      return tree_leaves(r);
    };
    return GraphText{print_graph(trace(fn, leaves))};
  };
}

}  // namespace graft
