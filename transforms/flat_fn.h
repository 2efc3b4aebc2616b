// A function of pytree arguments seen as the FlatFn the transforms trace: its arguments'
// leaves in, its result's leaves out.
#pragma once

#include <tuple>
#include <vector>

#include "core/ir/graph.h"
#include "core/tree/tree.h"

namespace graft::detail {

// f called on the tuple `Args` rebuilt from the leaves (structure arg_def); each call writes
// the result's structure to *out_def. The FlatFn refers to f, arg_def and out_def: use it
// while they live (the transforms trace it at once).
template <typename Args, typename Result, typename F>
FlatFn flat_fn(const F& f, const TreeDef& arg_def, TreeDef* out_def) {
  return [&f, &arg_def, out_def](const std::vector<Array>& leaves) {
    Result r = std::apply(f, tree_unflatten<Args>(arg_def, leaves));
    auto [out, def] = tree_flatten(r);
    *out_def = def;
    return out;
  };
}

}  // namespace graft::detail
