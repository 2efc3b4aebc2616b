// Optimizer state: a pytree, so jit can take and return it and checkpoints can save it leaf by
// leaf. It is type-erased: one entry ("part") per transformation in a chain, each a map of
// named slots ("count", "mu", "nu", ...) holding a list of arrays (one per parameter leaf for
// moments, one scalar for counters). Leaf paths read like "1.mu.3" (part 1, slot mu, leaf 3).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/array.h"
#include "core/tree/tree.h"
#include "transforms/jit.h"

namespace graft::optim {

// The state of one transformation: named slots, each a list of arrays.
using Slots = std::map<std::string, std::vector<Array>>;

struct State {
  std::vector<Slots> parts;  // one per (non-chain) transformation, in chain order
};

}  // namespace graft::optim

namespace graft {

// State flattens as its list of parts (kind "optim.State"), so paths start at the part index.
template <>
struct TreeNode<optim::State> {
  static void flatten(const optim::State& s, std::vector<Array>& leaves, TreeDef& def) {
    std::vector<TreeDef> ch(s.parts.size());
    for (size_t i = 0; i < s.parts.size(); ++i) {
      TreeNode<optim::Slots>::flatten(s.parts[i], leaves, ch[i]);
    }
    def = detail::make_def("optim.State", {}, std::move(ch));
  }
  static optim::State unflatten(const TreeDef& def, const Array*& it) {
    optim::State s;
    s.parts.reserve(def.children.size());
    for (const TreeDef& c : def.children) {
      s.parts.push_back(TreeNode<optim::Slots>::unflatten(c, it));
    }
    return s;
  }
};

namespace detail {
// Lets jit take and return a State (jit's own list of pytree types does not know it).
template <>
struct IsPytree<optim::State> : std::true_type {};
}  // namespace detail

}  // namespace graft
