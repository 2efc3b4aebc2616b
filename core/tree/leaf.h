// JAX's tree_flatten / tree_leaves / tree_unflatten with is_leaf (core/tree/util.h): where the
// predicate stops the descent, the whole subtree is one leaf. Those leaves are of different
// C++ types (Arrays, and subtrees of whatever types stopped), so they are held as TreeLeaf
// values, which keep any node by value and give it back by its type:
//
//   auto [leaves, def] = tree_flatten(model, is_leaf([](const Block&) { return true; }));
//   for (TreeLeaf& l : leaves) if (l.is<Block>()) l = TreeLeaf(scale(l.get<Block>()));
//   Model scaled = tree_unflatten<Model>(def, leaves);
//
// tree_unflatten needs no predicate (as in JAX): a leaf of `def` ("*") where the type has a
// subtree takes that subtree from the next TreeLeaf. Asking a TreeLeaf for another type than
// it holds, and a structure that does not fit the type, are graft::Errors.
#pragma once

#include <any>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/tree/util.h"

namespace graft {

namespace detail {
[[noreturn]] void wrong_leaf_type(const std::type_info& held, const std::type_info& asked);
[[noreturn]] void structure_mismatch(const TreeDef& def, const std::type_info& type);
}  // namespace detail

class TreeLeaf {
 public:
  template <typename T, typename = std::enable_if_t<!std::is_same_v<std::decay_t<T>, TreeLeaf>>>
  explicit TreeLeaf(T value) : value_(std::move(value)) {}

  template <typename T>
  bool is() const {
    return value_.type() == typeid(T);
  }
  template <typename T>
  const T& get() const {
    if (!is<T>()) detail::wrong_leaf_type(value_.type(), typeid(T));
    return *std::any_cast<T>(&value_);
  }
  bool is_array() const { return is<Array>(); }
  const Array& array() const { return get<Array>(); }
  std::string type_name() const;  // the held node's C++ type, demangled

 private:
  std::any value_;
};

namespace detail {

template <typename T>
struct IsStdMap : std::false_type {};
template <typename T>
struct IsStdMap<std::map<std::string, T>> : std::true_type {};
template <typename T>
struct IsStdVector : std::false_type {};
template <typename T>
struct IsStdVector<std::vector<T>> : std::true_type {};
template <typename T>
struct IsStdOptional : std::false_type {};
template <typename T>
struct IsStdOptional<std::optional<T>> : std::true_type {};

// Rebuilds a T from `def`, taking its leaves ("*": an Array or a stopped subtree) in order.
template <typename T>
T unflatten_stopping(const TreeDef& def, const TreeLeaf*& it, const TreeLeaf* end) {
  if (def.kind == "*") {
    if (it == end) fail("tree_unflatten", "too few leaves for structure ", def.str());
    return (it++)->get<T>();
  }
  if constexpr (std::is_same_v<T, Array>) {
    structure_mismatch(def, typeid(T));
  } else {
    T node{};
    // Containers get their size (and keys) from the structure first.
    if constexpr (IsStdVector<T>::value) node.resize(def.children.size());
    if constexpr (IsStdMap<T>::value) {
      for (const std::string& k : def.keys) node[k];
    }
    if constexpr (IsStdOptional<T>::value) {
      if (!def.children.empty()) node.emplace();
    }
    if (tree_structure(node).kind != def.kind) structure_mismatch(def, typeid(T));
    size_t i = 0;
    for_each_child(node, [&](const std::optional<KeyEntry>&, auto& child) {
      if (i >= def.children.size()) structure_mismatch(def, typeid(T));
      child = unflatten_stopping<std::decay_t<decltype(child)>>(def.children[i++], it, end);
    });
    if (i != def.children.size()) structure_mismatch(def, typeid(T));
    return node;
  }
}

}  // namespace detail

// jax.tree_util.tree_leaves(tree, is_leaf=pred): Arrays and stopped subtrees, in leaf order.
template <typename T, typename P>
std::vector<TreeLeaf> tree_leaves(const T& tree, const LeafPredicate<P>& leaf) {
  P pred = leaf.pred;
  std::vector<TreeLeaf> out;
  auto keep = [&out](const auto& node) { out.emplace_back(node); };
  detail::visit_stopping(tree, keep, pred);
  return out;
}

// jax.tree_util.tree_flatten(tree, is_leaf=pred): the leaves and the structure (whose "*"s are
// the Arrays and the stopped subtrees; tree_structure(tree, is_leaf(pred))).
template <typename T, typename P>
std::pair<std::vector<TreeLeaf>, TreeDef> tree_flatten(const T& tree,
                                                       const LeafPredicate<P>& leaf) {
  return {tree_leaves(tree, leaf), tree_structure(tree, leaf)};
}

// jax.tree_util.tree_unflatten(def, leaves) for TreeLeaf leaves.
template <typename T>
T tree_unflatten(const TreeDef& def, const std::vector<TreeLeaf>& leaves) {
  if (static_cast<int64_t>(leaves.size()) != def.num_leaves) {
    fail("tree_unflatten", "structure ", def.str(), " has ", def.num_leaves, " leaves, got ",
         leaves.size());
  }
  const TreeLeaf* it = leaves.data();
  return detail::unflatten_stopping<T>(def, it, leaves.data() + leaves.size());
}

}  // namespace graft
