// More of jax.tree_util over graft's pytrees (core/tree/tree.h): key paths (tree_flatten_with_path,
// tree_leaves_with_path, tree_map_with_path, keystr), tree_reduce, tree_all, tree_transpose.
//
// Keys are JAX's: an element of a vector / std::array / tuple / pair is a SequenceKey
// ("[0]"), a std::map entry a DictKey ("['w']"), a GRAFT_TREE struct field a GetAttrKey
// (".w", as JAX prints dataclass fields); std::optional adds no key. keystr joins them:
// "[0]['w']", ".layers[1].b".
//
// JAX's is_leaf predicate (at the end): tree_map, tree_map_with_path, tree_structure and
// tree_reduce take one, wrapped as is_leaf(pred), and stop descending where it holds;
// tree_flatten / tree_leaves / tree_unflatten with one are in core/tree/leaf.h.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

#include "core/tree/tree.h"

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

// ---- is_leaf: JAX's predicate that stops the descent ----
//
// pred(node) is asked of every node, outermost first; where it returns true the node is not
// descended into and stands for one leaf, as JAX's is_leaf. pred is asked only of the node
// types it can be called with, so is_leaf([](const Block&) { return true; }) makes every Block
// a leaf and a generic lambda (const auto&) sees every node. An Array is always a leaf.
//
//   auto scaled = tree_map([](const auto& node) { return scale(node); }, model,
//                          is_leaf([](const Block&) { return true; }));
//
// fn is called with each stopping node (an Array, or a subtree of whatever type stopped) and
// returns a value of that node's type; it is instantiated for Array and for every node type
// pred can be called with. tree_flatten / tree_leaves with is_leaf (core/tree/leaf.h) hold
// their leaves, subtrees of different C++ types, as TreeLeaf values.
template <typename P>
struct LeafPredicate {
  P pred;
};
template <typename P>
LeafPredicate<P> is_leaf(P pred) {
  return {std::move(pred)};
}

namespace detail {

template <typename T, typename = void>
struct IsGraftStruct : std::false_type {};
template <typename T>
struct IsGraftStruct<T, std::void_t<decltype(FieldsOf<T>::name)>> : std::true_type {};
template <typename T>
struct IsTemplateNode : std::false_type {};
template <typename T>
struct IsTemplateNode<std::vector<T>> : std::true_type {};
template <typename T, size_t N>
struct IsTemplateNode<std::array<T, N>> : std::true_type {};

// The children of the std node types (for_each_child below), with their keys.
template <typename T, typename F, typename S>
void for_each_std_child(std::map<std::string, T>& m, F& f, S&) {
  for (auto& [k, v] : m) f(std::optional<KeyEntry>{KeyEntry{KeyEntry::Kind::kDict, 0, k}}, v);
}
template <typename T, typename F, typename S>
void for_each_std_child(std::optional<T>& o, F& f, S&) {
  if (o) f(std::optional<KeyEntry>{}, *o);
}
template <typename... Ts, typename F, typename S>
void for_each_std_child(std::tuple<Ts...>& t, F& f, S& seq) {
  size_t i = 0;
  std::apply([&](auto&... e) { (f(seq(i++), e), ...); }, t);
}
template <typename A, typename B, typename F, typename S>
void for_each_std_child(std::pair<A, B>& p, F& f, S& seq) {
  f(seq(0), p.first);
  f(seq(1), p.second);
}

// f(key, child) for each child of a non-leaf node, in leaf order; the key is the child's
// KeyEntry (none for std::optional's value, which adds no key).
template <typename T, typename F>
void for_each_child(T& node, F&& f) {
  using Key = std::optional<KeyEntry>;
  auto seq = [](size_t i) { return Key{KeyEntry{KeyEntry::Kind::kSequence, int64_t(i), {}}}; };
  if constexpr (IsTemplateNode<T>::value) {
    for (size_t i = 0; i < node.size(); ++i) f(seq(i), node[i]);
  } else if constexpr (IsGraftStruct<T>::value) {
    std::vector<std::string> names = FieldsOf<T>::names();
    size_t i = 0;
    std::apply(
        [&](auto&... field) {
          ((f(Key{KeyEntry{KeyEntry::Kind::kAttr, 0, names[i++]}}, field)), ...);
        },
        FieldsOf<T>::get(node));
  } else {
    for_each_std_child(node, f, seq);
  }
}
// pred is asked of the node types it can be called with (and fn is only instantiated for
// those and Array).
template <typename P, typename T>
inline constexpr bool kAskable = std::is_invocable_r_v<bool, P&, const T&>;

// fn(path, node) at each stopping node; the rebuilt tree.
template <typename T, typename Fn, typename P>
T map_stopping(const T& node, KeyPath& path, Fn& fn, P& pred) {
  if constexpr (std::is_same_v<T, Array>) {
    return fn(static_cast<const KeyPath&>(path), node);
  } else {
    if constexpr (kAskable<P, T>) {
      if (pred(node)) return fn(static_cast<const KeyPath&>(path), node);
    }
    T out = node;
    for_each_child(out, [&](const std::optional<KeyEntry>& key, auto& child) {
      if (key) path.push_back(*key);
      child = map_stopping(child, path, fn, pred);
      if (key) path.pop_back();
    });
    return out;
  }
}

template <typename T, typename Fn, typename P>
void visit_stopping(const T& node, Fn& fn, P& pred) {
  if constexpr (std::is_same_v<T, Array>) {
    fn(node);
  } else {
    if constexpr (kAskable<P, T>) {
      if (pred(node)) {
        fn(node);
        return;
      }
    }
    T copy = node;  // Arrays are handles: copying a subtree copies no data
    for_each_child(copy, [&](const std::optional<KeyEntry>&, auto& child) {
      visit_stopping(child, fn, pred);
    });
  }
}

template <typename T, typename P>
TreeDef structure_stopping(const T& node, P& pred) {
  if constexpr (std::is_same_v<T, Array>) {
    return TreeDef{"*", {}, {}, 1};
  } else {
    if constexpr (kAskable<P, T>) {
      if (pred(node)) return TreeDef{"*", {}, {}, 1};
    }
    TreeDef own = tree_structure(node);
    std::vector<TreeDef> children;
    T copy = node;
    for_each_child(copy, [&](const std::optional<KeyEntry>&, auto& child) {
      children.push_back(structure_stopping(child, pred));
    });
    return make_def(own.kind, own.keys, std::move(children));
  }
}

}  // namespace detail

// jax.tree_util.tree_map(fn, tree, is_leaf=pred) over one tree.
template <typename T, typename Fn, typename P>
T tree_map(Fn&& fn, const T& tree, const LeafPredicate<P>& leaf) {
  P pred = leaf.pred;
  KeyPath path;
  auto at = [&fn](const KeyPath&, const auto& node) { return fn(node); };
  return detail::map_stopping(tree, path, at, pred);
}

// jax.tree_util.tree_map_with_path(fn, tree, is_leaf=pred): fn(path, node).
template <typename T, typename Fn, typename P>
T tree_map_with_path(Fn&& fn, const T& tree, const LeafPredicate<P>& leaf) {
  P pred = leaf.pred;
  KeyPath path;
  return detail::map_stopping(tree, path, fn, pred);
}

// jax.tree_util.tree_structure(tree, is_leaf=pred): the stopping nodes are leaves ("*").
template <typename T, typename P>
TreeDef tree_structure(const T& tree, const LeafPredicate<P>& leaf) {
  P pred = leaf.pred;
  return detail::structure_stopping(tree, pred);
}

// jax.tree_util.tree_reduce(fn, tree, initializer, is_leaf=pred): fn(acc, node) over the
// stopping nodes in leaf order.
template <typename T, typename Acc, typename Fn, typename P>
Acc tree_reduce(Fn&& fn, const T& tree, Acc initializer, const LeafPredicate<P>& leaf) {
  P pred = leaf.pred;
  auto step = [&](const auto& node) { initializer = fn(std::move(initializer), node); };
  detail::visit_stopping(tree, step, pred);
  return initializer;
}

}  // namespace graft
