// Jacobians and Hessians, like jax.jacfwd / jax.jacrev / jax.hessian: argnums, has_aux, pytree
// inputs and pytree outputs.
//
//   Array j = graft::jacfwd(f)(x);                        // f: Array -> Array
//   auto [jx, jy] = graft::jacrev(f, graft::argnums<0, 1>)(x, y);
//   auto [j2, aux] = graft::jacrev(g, graft::has_aux)(x);  // g returns pair(out, aux)
//   auto h = graft::hessian(loss, graft::argnums<0, 1>)(x, y);  // tuple of tuples
//
// As in JAX, the result nests the output's structure outside and the differentiated
// arguments' structure inside: each output leaf holds a pytree like the argument (or, for
// several argnums, a tuple of them) whose leaves have shape out_leaf.shape + in_leaf.shape.
// With has_aux, f returns pair(output, aux) and the result is pair(jacobian, aux).
// C++ types: the output pytree is rebuilt with each Array leaf replaced by that inner pytree
// (std containers map to std containers); a GRAFT_TREE struct output holds Array leaves, so
// when the inner is a pytree (hessian of a Params) it becomes a std::map from field name, as
// JAX's nesting of a dict: hessian(loss)(params).at("w").b is d2 loss / dw db.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/ir/graph.h"
#include "core/tree/tree.h"
#include "transforms/argnums.h"
#include "transforms/autodiff.h"

namespace graft {
namespace detail {

// f's outputs at the primals and its Jacobians: jac[o * num_inputs + i] has shape
// outputs[o].shape + primals[i].shape, for the first `num_diff` outputs (the others are aux).
// num_diff is read after fn has been traced (fn sets it).
struct Jacobians {
  std::vector<Array> outputs;
  std::vector<Array> jac;
};
// One jvp per input leaf, vmapped over a basis of its tangents.
Jacobians jacfwd_flat(const char* op, const FlatFn& fn, const std::vector<Array>& primals,
                      const size_t& num_diff);
// One vjp, its pullback vmapped over a basis of each output's cotangents.
Jacobians jacrev_flat(const char* op, const FlatFn& fn, const std::vector<Array>& primals,
                      const size_t& num_diff);

// `outer` with each leaf replaced by `inner`, and a GRAFT_TREE struct of the outer turned
// into a map by field name when the inner is not a single leaf (see JacType). *order gets
// the outer's leaves (their positions) in the order of the result.
TreeDef nest_defs(const TreeDef& outer, const TreeDef& inner, std::vector<size_t>* order);

// The C++ type of a Jacobian: T's structure with each Array leaf replaced by J. A GRAFT_TREE
// struct's fields can only be Arrays, so for a J other than Array the struct becomes a
// std::map from field name to its fields' Jacobians (as JAX's dict-like nesting); that needs
// all fields of one type.
template <typename T, typename J>
struct JacType;
template <typename T, typename J>
using JacOf = typename JacType<T, J>::type;
template <typename Refs>
struct SameFields;
template <typename First, typename... Rest>
struct SameFields<std::tuple<First&, Rest&...>> {
  using type = std::decay_t<First>;
  static_assert((std::is_same_v<std::decay_t<First>, std::decay_t<Rest>> && ...),
                "jacfwd/jacrev: a struct output whose Jacobians are pytrees becomes a std::map "
                "by field name, which needs all its fields of one type");
};
template <typename T, typename J>
struct JacType {  // a GRAFT_TREE struct
  using Field = typename SameFields<decltype(FieldsOf<T>::get(std::declval<T&>()))>::type;
  using type = std::conditional_t<std::is_same_v<J, Array>, T,
                                  std::map<std::string, JacOf<Field, J>>>;
};
template <typename J>
struct JacType<Array, J> {
  using type = J;
};
template <typename T, typename J>
struct JacType<std::vector<T>, J> {
  using type = std::vector<JacOf<T, J>>;
};
template <typename T, size_t N, typename J>
struct JacType<std::array<T, N>, J> {
  using type = std::array<JacOf<T, J>, N>;
};
template <typename T, typename J>
struct JacType<std::map<std::string, T>, J> {
  using type = std::map<std::string, JacOf<T, J>>;
};
template <typename T, typename J>
struct JacType<std::optional<T>, J> {
  using type = std::optional<JacOf<T, J>>;
};
template <typename... Ts, typename J>
struct JacType<std::tuple<Ts...>, J> {
  using type = std::tuple<JacOf<Ts, J>...>;
};
template <typename A, typename B, typename J>
struct JacType<std::pair<A, B>, J> {
  using type = std::pair<JacOf<A, J>, JacOf<B, J>>;
};

template <typename Result, bool kAux>
struct SplitAux {
  using Out = Result;
};
template <typename Result>
struct SplitAux<Result, true> {
  using Out = std::decay_t<typename Result::first_type>;
  using Aux = std::decay_t<typename Result::second_type>;
};

// The Jacobian of f(args...) w.r.t. args I... (forward or reverse mode).
template <bool kForward, bool kAux, size_t... I, typename F, typename... Args>
auto jacobian(const char* op, const F& f, const Args&... args) {
  static_assert(sizeof...(I) > 0, "argnums must name at least one argument");
  static_assert(((I < sizeof...(Args)) && ...), "argnums out of range");
  auto all = std::tuple<Args...>(args...);
  using Diff = std::tuple<std::decay_t<std::tuple_element_t<I, std::tuple<Args...>>>...>;
  using Result = std::decay_t<decltype(std::apply(f, all))>;
  using Out = typename SplitAux<Result, kAux>::Out;
  // One argnum: the Jacobian's inner structure is that argument's; several: a tuple of them.
  constexpr bool kOne = sizeof...(I) == 1;
  using J = std::conditional_t<kOne, std::tuple_element_t<0, Diff>, Diff>;
  auto [leaves, def] = tree_flatten(Diff(std::get<I>(all)...));
  TreeDef result_def;
  size_t num_diff = 0;
  FlatFn fn = [&, def = def](const std::vector<Array>& ph) {
    auto [outs, d] = tree_flatten(std::apply(f, substitute<I...>(all, tree_unflatten<Diff>(def, ph))));
    result_def = d;
    num_diff = kAux ? static_cast<size_t>(d.children[0].num_leaves) : outs.size();
    return outs;
  };
  Jacobians j = kForward ? jacfwd_flat(op, fn, leaves, num_diff)
                         : jacrev_flat(op, fn, leaves, num_diff);
  TreeDef out_def = kAux ? result_def.children[0] : result_def;
  const TreeDef& in_def = kOne ? def.children[0] : def;
  std::vector<size_t> order;
  TreeDef jac_def = nest_defs(out_def, in_def, &order);
  std::vector<Array> jac_leaves;
  const size_t n_in = leaves.size();
  for (size_t o : order) {
    jac_leaves.insert(jac_leaves.end(), j.jac.begin() + static_cast<long>(o * n_in),
                      j.jac.begin() + static_cast<long>((o + 1) * n_in));
  }
  auto jac = tree_unflatten<JacOf<Out, J>>(jac_def, jac_leaves);
  if constexpr (kAux) {
    using Aux = typename SplitAux<Result, kAux>::Aux;
    std::vector<Array> aux(j.outputs.begin() + num_diff, j.outputs.end());
    return std::pair{jac, tree_unflatten<Aux>(result_def.children[1], aux)};
  } else {
    return jac;
  }
}

template <bool kForward, bool kAux, typename F, size_t... I>
auto jacobian_fn(const char* op, F f, Argnums<I...>) {
  return [op, f](const auto&... args) {
    if constexpr (sizeof...(I) == 0) {
      return jacobian<kForward, kAux, 0>(op, f, args...);
    } else {
      return jacobian<kForward, kAux, I...>(op, f, args...);
    }
  };
}

// The options after f, as grad takes them: [argnums<...>] [has_aux].
template <bool kForward, typename F>
auto jacobian_opts(const char* op, F f) {
  return jacobian_fn<kForward, false>(op, f, Argnums<>{});
}
template <bool kForward, typename F, size_t... I>
auto jacobian_opts(const char* op, F f, Argnums<I...> a) {
  return jacobian_fn<kForward, false>(op, f, a);
}
template <bool kForward, typename F, size_t... I>
auto jacobian_opts(const char* op, F f, Argnums<I...> a, HasAux) {
  return jacobian_fn<kForward, true>(op, f, a);
}
template <bool kForward, typename F>
auto jacobian_opts(const char* op, F f, HasAux) {
  return jacobian_fn<kForward, true>(op, f, Argnums<>{});
}

}  // namespace detail

// jacfwd(f [, argnums<...>] [, has_aux]) pushes one basis tangent per input element (vmap of
// jvp); jacrev pulls one basis cotangent per output element (vmap of the pullback). Both
// require floating inputs; jacrev floating outputs.
template <typename F, typename... Opts>
auto jacfwd(F f, Opts... opts) {
  return detail::jacobian_opts<true>("jacfwd", f, opts...);
}
template <typename F, typename... Opts>
auto jacrev(F f, Opts... opts) {
  return detail::jacobian_opts<false>("jacrev", f, opts...);
}

// hessian(f [, argnums] [, has_aux]) = jacfwd(jacrev(f, ...), ...), as in JAX: for scalar f
// of x, shape x.shape + x.shape; for several arguments (or a pytree), the blocks nested
// (outer: d/d first, inner: d/d second), e.g. h[0][1] = d2f / dx dy for argnums<0, 1>.
template <typename F, typename... Opts>
auto hessian(F f, Opts... opts) {
  return jacfwd(jacrev(f, opts...), opts...);
}

}  // namespace graft
