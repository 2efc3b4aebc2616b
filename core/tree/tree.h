// Pytrees: nested C++ values whose leaves are Arrays. Every transform takes and returns
// pytrees, so grad(loss)(params, batch) returns a Params.
//
// Nodes: Array (a leaf), std::vector, std::array, std::pair, std::tuple,
// std::map<std::string, T>, std::optional, and user structs that declare their fields once:
//
//   struct Mlp { graft::Array w1, b1, w2; };
//   GRAFT_TREE(Mlp, w1, b1, w2);
//
// GRAFT_TREE goes at global namespace scope, after the struct (qualify the type's name).
// Leaves are in depth-first order: struct fields in the order given, maps by key.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/array.h"
#include "core/error.h"

namespace graft {

// The structure of a pytree, without its leaves: compared to check that two trees match.
struct TreeDef {
  std::string kind;               // "*" for a leaf, "vector", "tuple", "map", a struct's name...
  std::vector<std::string> keys;  // map keys or struct field names
  std::vector<TreeDef> children;
  int64_t num_leaves = 0;

  bool operator==(const TreeDef& o) const {
    return kind == o.kind && keys == o.keys && children == o.children;
  }
  bool operator!=(const TreeDef& o) const { return !(*this == o); }
  std::string str() const;  // "Mlp(w1=*, b1=*, w2=*)", "[*, *]", "(*, {a: *})"
};

// Throws graft::Error("[op] pytree structures differ: ... vs ...") when a != b.
void check_same_structure(const char* op, const TreeDef& a, const TreeDef& b);

// One dotted path per leaf, in leaf order: struct fields and map keys by name, sequence
// elements by index ("layers.wq", "mu.0", "0.count"). A lone leaf's path is "". Used for
// masks (no weight decay on norms) and checkpoint tensor names.
std::vector<std::string> tree_leaf_paths(const TreeDef& def);

template <typename T, typename Enable = void>
struct TreeNode;  // flatten / unflatten for each node type

namespace detail {
template <typename T>
struct FieldsOf;  // specialized by GRAFT_TREE
std::vector<std::string> split_field_names(const char* names);
TreeDef make_def(std::string kind, std::vector<std::string> keys, std::vector<TreeDef> children);
}  // namespace detail

template <>
struct TreeNode<Array> {
  static void flatten(const Array& a, std::vector<Array>& leaves, TreeDef& def) {
    leaves.push_back(a);
    def = TreeDef{"*", {}, {}, 1};
  }
  static Array unflatten(const TreeDef&, const Array*& it) { return *it++; }
};

template <typename T>
struct TreeNode<std::vector<T>> {
  static void flatten(const std::vector<T>& v, std::vector<Array>& leaves, TreeDef& def) {
    std::vector<TreeDef> ch(v.size());
    for (size_t i = 0; i < v.size(); ++i) TreeNode<T>::flatten(v[i], leaves, ch[i]);
    def = detail::make_def("vector", {}, std::move(ch));
  }
  static std::vector<T> unflatten(const TreeDef& def, const Array*& it) {
    std::vector<T> v;
    v.reserve(def.children.size());
    for (const TreeDef& c : def.children) v.push_back(TreeNode<T>::unflatten(c, it));
    return v;
  }
};

template <typename T, size_t N>
struct TreeNode<std::array<T, N>> {
  static void flatten(const std::array<T, N>& v, std::vector<Array>& leaves, TreeDef& def) {
    std::vector<TreeDef> ch(N);
    for (size_t i = 0; i < N; ++i) TreeNode<T>::flatten(v[i], leaves, ch[i]);
    def = detail::make_def("array", {}, std::move(ch));
  }
  static std::array<T, N> unflatten(const TreeDef& def, const Array*& it) {
    std::array<T, N> v;
    for (size_t i = 0; i < N; ++i) v[i] = TreeNode<T>::unflatten(def.children[i], it);
    return v;
  }
};

template <typename T>
struct TreeNode<std::map<std::string, T>> {
  static void flatten(const std::map<std::string, T>& m, std::vector<Array>& leaves, TreeDef& def) {
    std::vector<TreeDef> ch(m.size());
    std::vector<std::string> keys;
    size_t i = 0;
    for (const auto& [k, v] : m) {
      keys.push_back(k);
      TreeNode<T>::flatten(v, leaves, ch[i++]);
    }
    def = detail::make_def("map", std::move(keys), std::move(ch));
  }
  static std::map<std::string, T> unflatten(const TreeDef& def, const Array*& it) {
    std::map<std::string, T> m;
    for (size_t i = 0; i < def.keys.size(); ++i) {
      m.emplace(def.keys[i], TreeNode<T>::unflatten(def.children[i], it));
    }
    return m;
  }
};

template <typename T>
struct TreeNode<std::optional<T>> {
  static void flatten(const std::optional<T>& o, std::vector<Array>& leaves, TreeDef& def) {
    std::vector<TreeDef> ch;
    if (o) {
      ch.resize(1);
      TreeNode<T>::flatten(*o, leaves, ch[0]);
    }
    def = detail::make_def(o ? "some" : "none", {}, std::move(ch));
  }
  static std::optional<T> unflatten(const TreeDef& def, const Array*& it) {
    if (def.children.empty()) return std::nullopt;
    return TreeNode<T>::unflatten(def.children[0], it);
  }
};

template <typename... Ts>
struct TreeNode<std::tuple<Ts...>> {
  static void flatten(const std::tuple<Ts...>& t, std::vector<Array>& leaves, TreeDef& def) {
    std::vector<TreeDef> ch(sizeof...(Ts));
    flatten_each(t, leaves, ch, std::index_sequence_for<Ts...>{});
    def = detail::make_def("tuple", {}, std::move(ch));
  }
  static std::tuple<Ts...> unflatten(const TreeDef& def, const Array*& it) {
    return unflatten_each(def, it, std::index_sequence_for<Ts...>{});
  }

 private:
  template <size_t... I>
  static void flatten_each(const std::tuple<Ts...>& t, std::vector<Array>& leaves,
                           std::vector<TreeDef>& ch, std::index_sequence<I...>) {
    (TreeNode<Ts>::flatten(std::get<I>(t), leaves, ch[I]), ...);
  }
  template <size_t... I>
  static std::tuple<Ts...> unflatten_each(const TreeDef& def, const Array*& it,
                                          std::index_sequence<I...>) {
    // Braced init: evaluated left to right, so leaves are consumed in order.
    return std::tuple<Ts...>{TreeNode<Ts>::unflatten(def.children[I], it)...};
  }
};

template <typename A, typename B>
struct TreeNode<std::pair<A, B>> {
  static void flatten(const std::pair<A, B>& p, std::vector<Array>& leaves, TreeDef& def) {
    std::vector<TreeDef> ch(2);
    TreeNode<A>::flatten(p.first, leaves, ch[0]);
    TreeNode<B>::flatten(p.second, leaves, ch[1]);
    def = detail::make_def("pair", {}, std::move(ch));
  }
  static std::pair<A, B> unflatten(const TreeDef& def, const Array*& it) {
    A a = TreeNode<A>::unflatten(def.children[0], it);
    B b = TreeNode<B>::unflatten(def.children[1], it);
    return {std::move(a), std::move(b)};
  }
};

// User structs registered with GRAFT_TREE.
template <typename T>
struct TreeNode<T, std::void_t<decltype(detail::FieldsOf<T>::name)>> {
  static void flatten(const T& s, std::vector<Array>& leaves, TreeDef& def) {
    auto refs = detail::FieldsOf<T>::get(const_cast<T&>(s));
    constexpr size_t n = std::tuple_size_v<decltype(refs)>;
    std::vector<TreeDef> ch(n);
    flatten_fields(refs, leaves, ch, std::make_index_sequence<n>{});
    def = detail::make_def(detail::FieldsOf<T>::name, detail::FieldsOf<T>::names(), std::move(ch));
  }
  static T unflatten(const TreeDef& def, const Array*& it) {
    T s{};
    auto refs = detail::FieldsOf<T>::get(s);
    constexpr size_t n = std::tuple_size_v<decltype(refs)>;
    unflatten_fields(refs, def, it, std::make_index_sequence<n>{});
    return s;
  }

 private:
  template <typename R, size_t... I>
  static void flatten_fields(const R& refs, std::vector<Array>& leaves, std::vector<TreeDef>& ch,
                             std::index_sequence<I...>) {
    (TreeNode<std::decay_t<std::tuple_element_t<I, R>>>::flatten(std::get<I>(refs), leaves, ch[I]),
     ...);
  }
  template <typename R, size_t... I>
  static void unflatten_fields(R& refs, const TreeDef& def, const Array*& it,
                               std::index_sequence<I...>) {
    ((std::get<I>(refs) =
          TreeNode<std::decay_t<std::tuple_element_t<I, R>>>::unflatten(def.children[I], it)),
     ...);
  }
};

// ---- the pytree API ----

template <typename T>
std::pair<std::vector<Array>, TreeDef> tree_flatten(const T& tree) {
  std::vector<Array> leaves;
  TreeDef def;
  TreeNode<T>::flatten(tree, leaves, def);
  return {std::move(leaves), std::move(def)};
}

template <typename T>
std::vector<Array> tree_leaves(const T& tree) {
  return tree_flatten(tree).first;
}

template <typename T>
TreeDef tree_structure(const T& tree) {
  return tree_flatten(tree).second;
}

// Rebuilds a T of structure `def` from leaves (as many as def has).
template <typename T>
T tree_unflatten(const TreeDef& def, const std::vector<Array>& leaves) {
  if (static_cast<int64_t>(leaves.size()) != def.num_leaves) {
    fail("tree_unflatten", "structure ", def.str(), " has ", def.num_leaves, " leaves, got ",
         leaves.size());
  }
  const Array* it = leaves.data();
  return TreeNode<T>::unflatten(def, it);
}

namespace detail {
template <typename Fn, typename Others, size_t... I>
Array map_leaf(Fn& fn, const Array& leaf, const Others& others, [[maybe_unused]] size_t i,
               std::index_sequence<I...>) {
  return fn(leaf, others[I][i]...);
}
}  // namespace detail

// Applies fn leaf by leaf over trees of the same structure; the result has tree's type.
template <typename T, typename Fn, typename... Rest>
T tree_map(Fn&& fn, const T& tree, const Rest&... rest) {
  // No structured binding: clang < 16 cannot capture one (the checkpoint fuzzers use clang).
  auto flat = tree_flatten(tree);
  std::vector<Array>& leaves = flat.first;
  const TreeDef& def = flat.second;
  auto leaves_of = [&def](const auto& other) {
    auto [l, d] = tree_flatten(other);
    check_same_structure("tree_map", def, d);
    return l;
  };
  std::array<std::vector<Array>, sizeof...(Rest)> others{leaves_of(rest)...};
  (void)leaves_of;  // unused when there is one tree
  std::vector<Array> out(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    out[i] = detail::map_leaf(fn, leaves[i], others, i, std::index_sequence_for<Rest...>{});
  }
  return tree_unflatten<T>(def, out);
}

}  // namespace graft

// ---- GRAFT_TREE(Type, field, ...) ----

#define GRAFT_TREE_REF(f) s.f
#define GRAFT_TREE_EXPAND(x) x
#define GRAFT_TREE_FE_1(m, a) m(a)
#define GRAFT_TREE_FE_2(m, a, ...) m(a), GRAFT_TREE_EXPAND(GRAFT_TREE_FE_1(m, __VA_ARGS__))
#define GRAFT_TREE_FE_3(m, a, ...) m(a), GRAFT_TREE_EXPAND(GRAFT_TREE_FE_2(m, __VA_ARGS__))
#define GRAFT_TREE_FE_4(m, a, ...) m(a), GRAFT_TREE_EXPAND(GRAFT_TREE_FE_3(m, __VA_ARGS__))
#define GRAFT_TREE_FE_5(m, a, ...) m(a), GRAFT_TREE_EXPAND(GRAFT_TREE_FE_4(m, __VA_ARGS__))
#define GRAFT_TREE_FE_6(m, a, ...) m(a), GRAFT_TREE_EXPAND(GRAFT_TREE_FE_5(m, __VA_ARGS__))
#define GRAFT_TREE_FE_7(m, a, ...) m(a), GRAFT_TREE_EXPAND(GRAFT_TREE_FE_6(m, __VA_ARGS__))
#define GRAFT_TREE_FE_8(m, a, ...) m(a), GRAFT_TREE_EXPAND(GRAFT_TREE_FE_7(m, __VA_ARGS__))
#define GRAFT_TREE_FE_9(m, a, ...) m(a), GRAFT_TREE_EXPAND(GRAFT_TREE_FE_8(m, __VA_ARGS__))
#define GRAFT_TREE_FE_10(m, a, ...) m(a), GRAFT_TREE_EXPAND(GRAFT_TREE_FE_9(m, __VA_ARGS__))
#define GRAFT_TREE_FE_11(m, a, ...) m(a), GRAFT_TREE_EXPAND(GRAFT_TREE_FE_10(m, __VA_ARGS__))
#define GRAFT_TREE_FE_12(m, a, ...) m(a), GRAFT_TREE_EXPAND(GRAFT_TREE_FE_11(m, __VA_ARGS__))
#define GRAFT_TREE_FE_13(m, a, ...) m(a), GRAFT_TREE_EXPAND(GRAFT_TREE_FE_12(m, __VA_ARGS__))
#define GRAFT_TREE_FE_14(m, a, ...) m(a), GRAFT_TREE_EXPAND(GRAFT_TREE_FE_13(m, __VA_ARGS__))
#define GRAFT_TREE_FE_15(m, a, ...) m(a), GRAFT_TREE_EXPAND(GRAFT_TREE_FE_14(m, __VA_ARGS__))
#define GRAFT_TREE_FE_16(m, a, ...) m(a), GRAFT_TREE_EXPAND(GRAFT_TREE_FE_15(m, __VA_ARGS__))
#define GRAFT_TREE_PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, N, \
                        ...)                                                                      \
  N
#define GRAFT_TREE_FOR_EACH(m, ...)                                                           \
  GRAFT_TREE_EXPAND(GRAFT_TREE_PICK(                                                          \
      __VA_ARGS__, GRAFT_TREE_FE_16, GRAFT_TREE_FE_15, GRAFT_TREE_FE_14, GRAFT_TREE_FE_13,    \
      GRAFT_TREE_FE_12, GRAFT_TREE_FE_11, GRAFT_TREE_FE_10, GRAFT_TREE_FE_9, GRAFT_TREE_FE_8, \
      GRAFT_TREE_FE_7, GRAFT_TREE_FE_6, GRAFT_TREE_FE_5, GRAFT_TREE_FE_4, GRAFT_TREE_FE_3,    \
      GRAFT_TREE_FE_2, GRAFT_TREE_FE_1)(m, __VA_ARGS__))

// Registers a struct's fields (up to 16) as pytree children, in the order given. Use at
// global namespace scope.
#define GRAFT_TREE(Type, ...)                                            \
  template <>                                                            \
  struct graft::detail::FieldsOf<Type> {                                 \
    static constexpr const char* name = #Type;                           \
    static auto get(Type& s) {                                           \
      return std::tie(GRAFT_TREE_FOR_EACH(GRAFT_TREE_REF, __VA_ARGS__)); \
    }                                                                    \
    static std::vector<std::string> names() {                            \
      return graft::detail::split_field_names(#__VA_ARGS__);             \
    }                                                                    \
  }
