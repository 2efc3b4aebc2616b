// More of jax.tree_util over graft's pytrees (core/tree.h): key paths (tree_flatten_with_path,
// tree_leaves_with_path, tree_map_with_path, keystr), tree_reduce, tree_all, tree_transpose.
//
// Keys are JAX's: an element of a vector / std::array / tuple / pair is a SequenceKey
// ("[0]"), a std::map entry a DictKey ("['w']"), a GRAFT_TREE struct field a GetAttrKey
// (".w", as JAX prints dataclass fields); std::optional adds no key. keystr joins them:
// "[0]['w']", ".layers[1].b".
//
// Not here: JAX's is_leaf predicates (a C++ pytree's leaves are Arrays by type; a subtree
// can't stand for a leaf).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/tree.h"

namespace graft {

struct KeyEntry {
  enum class Kind { kSequence, kDict, kAttr };
  Kind kind;
  int64_t index = 0;  // kSequence
  std::string name;   // kDict, kAttr
  bool operator==(const KeyEntry& o) const {
    return kind == o.kind && index == o.index && name == o.name;
  }
  std::string str() const;  // "[0]", "['w']", ".w"
};
using KeyPath = std::vector<KeyEntry>;

// "[0]['w']" (jax.tree_util.keystr); "" for the root.
std::string keystr(const KeyPath& path);
// One key path per leaf of `def`, in leaf order.
std::vector<KeyPath> tree_key_paths(const TreeDef& def);
// `inner` put in place of every leaf of `outer` (the structure of an outer-of-inner tree).
TreeDef tree_compose(const TreeDef& outer, const TreeDef& inner);

template <typename T>
std::pair<std::vector<std::pair<KeyPath, Array>>, TreeDef> tree_flatten_with_path(const T& tree) {
  auto [leaves, def] = tree_flatten(tree);
  std::vector<KeyPath> paths = tree_key_paths(def);
  std::vector<std::pair<KeyPath, Array>> out;
  for (size_t i = 0; i < leaves.size(); ++i) out.emplace_back(paths[i], leaves[i]);
  return {std::move(out), std::move(def)};
}

template <typename T>
std::vector<std::pair<KeyPath, Array>> tree_leaves_with_path(const T& tree) {
  return tree_flatten_with_path(tree).first;
}

// fn(path, leaf, leaves of rest at the same place...) over trees of one structure.
template <typename T, typename Fn, typename... Rest>
T tree_map_with_path(Fn&& fn, const T& tree, const Rest&... rest) {
  auto flat = tree_flatten(tree);
  const TreeDef& def = flat.second;
  std::vector<KeyPath> paths = tree_key_paths(def);
  auto leaves_of = [&def](const auto& other) {
    auto [l, d] = tree_flatten(other);
    check_same_structure("tree_map_with_path", def, d);
    return l;
  };
  std::array<std::vector<Array>, sizeof...(Rest)> others{leaves_of(rest)...};
  (void)leaves_of;
  std::vector<Array> out(flat.first.size());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = std::apply(
        [&](const auto&... o) { return fn(paths[i], flat.first[i], o[i]...); }, others);
  }
  return tree_unflatten<T>(def, out);
}

// fn(fn(fn(initializer, leaf0), leaf1), ...) (jax.tree_util.tree_reduce with an initializer).
template <typename T, typename Acc, typename Fn>
Acc tree_reduce(Fn&& fn, const T& tree, Acc initializer) {
  for (const Array& leaf : tree_leaves(tree)) initializer = fn(std::move(initializer), leaf);
  return initializer;
}
// Without an initializer: starts from the first leaf; an empty tree throws
// graft::Error("[tree_reduce] ...") as JAX's TypeError.
template <typename T, typename Fn>
Array tree_reduce(Fn&& fn, const T& tree) {
  std::vector<Array> leaves = tree_leaves(tree);
  if (leaves.empty()) fail("tree_reduce", "empty tree and no initializer");
  Array acc = leaves[0];
  for (size_t i = 1; i < leaves.size(); ++i) acc = fn(acc, leaves[i]);
  return acc;
}

// True when every leaf is true (jax.tree_util.tree_all): each leaf must hold one element and
// be concrete (it is read). An empty tree is true.
bool tree_all_flat(const std::vector<Array>& leaves);
template <typename T>
bool tree_all(const T& tree) {
  return tree_all_flat(tree_leaves(tree));
}

// jax.tree_util.tree_transpose: a tree of structure outer-of-inner becomes inner-of-outer
// (e.g. a vector of pairs -> a pair of vectors). R is the result's C++ type. Throws
// graft::Error("[tree_transpose] ...") when tree is not outer composed with inner.
std::vector<Array> tree_transpose_leaves(const TreeDef& outer, const TreeDef& inner,
                                         const std::vector<Array>& leaves);
template <typename R, typename T>
R tree_transpose(const TreeDef& outer, const TreeDef& inner, const T& tree) {
  auto [leaves, def] = tree_flatten(tree);
  check_same_structure("tree_transpose", tree_compose(outer, inner), def);
  return tree_unflatten<R>(tree_compose(inner, outer),
                           tree_transpose_leaves(outer, inner, leaves));
}

}  // namespace graft
