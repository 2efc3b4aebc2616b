// Automatic differentiation over pytrees: grad, value_and_grad (argnums, has_aux), vjp, jvp,
// stop_gradient; linearize (transforms/linearize.h) and jacfwd, jacrev, hessian
// (transforms/jacobian.h) come with it. Names and semantics follow JAX.
//
//   auto g = graft::grad(loss)(params, batch);                 // a Params
//   auto [l, g2] = graft::value_and_grad(loss, graft::argnums<0, 1>)(params, batch);
//   auto [out, pullback] = graft::vjp(f, x, y);  auto [gx, gy] = pullback(ct);
//   auto [out, tangent] = graft::jvp(f, std::tuple{x}, std::tuple{t});
//
// The function is traced on placeholders each call (reading their values is an error), so it
// must be pure. Floating and complex leaves are differentiated (grad of a real function of
// complex arguments as JAX's; `holomorphic` for complex outputs); asking for the gradient of
// an integer argument is a graft::Error.
#pragma once

#include <functional>
#include <tuple>
#include <utility>

#include "core/error.h"
#include "core/interpreters/ad.h"
#include "core/ops.h"
#include "core/tree/tree.h"
#include "transforms/argnums.h"
#include "transforms/flat_fn.h"

namespace graft {

struct HasAux {};
inline constexpr HasAux has_aux{};
struct Holomorphic {};
inline constexpr Holomorphic holomorphic{};

// Blocks derivatives: the value of x, with zero gradient.
Array stop_gradient(const Array& x);

namespace detail {

// The leaves grad may differentiate: floating ones, complex ones too where allow_complex (grad
// and value_and_grad, as JAX's), only complex ones where holomorphic.
void check_differentiable(const char* op, const std::vector<Array>& leaves,
                          bool allow_complex = false, bool holomorphic = false);
// A scalar output: real, or complex where holomorphic.
void check_scalar_output(const char* op, const Array& out, bool holomorphic = false);

// f(args...) differentiated w.r.t. args I...: returns (value, aux, grads as a tuple). The
// gradient is the pullback of 1 (JAX's convention: for a real f of complex z = x + iy,
// df/dx - i df/dy, so grad(|z|^2) = 2 conj(z); for a holomorphic f, f'(z)).
template <bool kAux, size_t... I, typename F, typename... Args>
auto value_aux_and_grad(const char* op, bool holomorphic, const F& f, const Args&... args) {
  static_assert(sizeof...(I) > 0, "argnums must name at least one argument");
  auto all = std::tuple<Args...>(args...);
  static_assert(((I < sizeof...(Args)) && ...), "argnums out of range");
  using Diff = std::tuple<std::decay_t<std::tuple_element_t<I, std::tuple<Args...>>>...>;
  Diff diff(std::get<I>(all)...);
  auto [leaves, def] = tree_flatten(diff);
  check_differentiable(op, leaves, /*allow_complex=*/true, holomorphic);
  using Result = decltype(std::apply(f, all));
  TreeDef aux_def;
  FlatFn fn = [&](const std::vector<Array>& ph) {
    auto call_args = substitute<I...>(all, tree_unflatten<Diff>(def, ph));
    Result r = std::apply(f, call_args);
    if constexpr (kAux) {
      check_scalar_output(op, r.first, holomorphic);
      auto [aux_leaves, ad] = tree_flatten(r.second);
      aux_def = ad;
      std::vector<Array> outs{r.first};
      outs.insert(outs.end(), aux_leaves.begin(), aux_leaves.end());
      return outs;
    } else {
      check_scalar_output(op, r, holomorphic);
      return std::vector<Array>{r};
    }
  };
  VjpResult v = vjp_flat(fn, leaves);
  std::vector<Array> cts(v.outputs.size());
  cts[0] = ones_like(v.outputs[0]);
  Diff grads = tree_unflatten<Diff>(def, v.pullback(cts));
  if constexpr (kAux) {
    using Aux = std::decay_t<decltype(std::declval<Result>().second)>;
    std::vector<Array> aux_leaves(v.outputs.begin() + 1, v.outputs.end());
    return std::make_tuple(v.outputs[0], tree_unflatten<Aux>(aux_def, aux_leaves), grads);
  } else {
    return std::make_tuple(v.outputs[0], 0, grads);
  }
}

template <typename Tuple>
auto unwrap_single(Tuple&& t) {
  if constexpr (std::tuple_size_v<std::decay_t<Tuple>> == 1) {
    return std::get<0>(std::forward<Tuple>(t));
  } else {
    return std::forward<Tuple>(t);
  }
}

}  // namespace detail

// grad(f)(args...) -> the gradient w.r.t. the first argument (a pytree like it).
// grad(f, argnums<0, 2>)(args...) -> a tuple of gradients.
template <typename F, size_t... I>
auto grad(F f, Argnums<I...> = {}) {
  return [f](const auto&... args) {
    if constexpr (sizeof...(I) == 0) {
      auto [v, aux, g] = detail::value_aux_and_grad<false, 0>("grad", false, f, args...);
      return detail::unwrap_single(std::move(g));
    } else {
      auto [v, aux, g] = detail::value_aux_and_grad<false, I...>("grad", false, f, args...);
      return detail::unwrap_single(std::move(g));
    }
  };
}

// value_and_grad(f)(args...) -> std::pair(value, gradient).
template <typename F, size_t... I>
auto value_and_grad(F f, Argnums<I...> = {}) {
  return [f](const auto&... args) {
    if constexpr (sizeof...(I) == 0) {
      auto [v, aux, g] = detail::value_aux_and_grad<false, 0>("value_and_grad", false, f, args...);
      return std::pair{v, detail::unwrap_single(std::move(g))};
    } else {
      auto [v, aux, g] = detail::value_aux_and_grad<false, I...>("value_and_grad", false, f,
                                                                  args...);
      return std::pair{v, detail::unwrap_single(std::move(g))};
    }
  };
}

// With has_aux, f returns std::pair(loss, aux); the result is pair(pair(loss, aux), grads).
template <typename F, size_t... I>
auto value_and_grad(F f, Argnums<I...>, HasAux) {
  return [f](const auto&... args) {
    if constexpr (sizeof...(I) == 0) {
      auto [v, aux, g] = detail::value_aux_and_grad<true, 0>("value_and_grad", false, f, args...);
      return std::pair{std::pair{v, aux}, detail::unwrap_single(std::move(g))};
    } else {
      auto [v, aux, g] = detail::value_aux_and_grad<true, I...>("value_and_grad", false, f,
                                                                 args...);
      return std::pair{std::pair{v, aux}, detail::unwrap_single(std::move(g))};
    }
  };
}
template <typename F>
auto value_and_grad(F f, HasAux h) {
  return value_and_grad(f, argnums<0>, h);
}
template <typename F, size_t... I>
auto grad(F f, Argnums<I...> a, HasAux h) {
  return [f, a, h](const auto&... args) {
    auto [va, g] = value_and_grad(f, a, h)(args...);
    return std::pair{g, va.second};
  };
}

// holomorphic (JAX's holomorphic=True): f maps complex arguments to a complex scalar and is
// complex-differentiable; the gradient is f'(z) (grad(z * z)(z) = 2 z).
// Without it, complex arguments are allowed but the output must be real.
template <typename F, size_t... I>
auto value_and_grad(F f, Argnums<I...>, Holomorphic) {
  return [f](const auto&... args) {
    auto [v, aux, g] =
        detail::value_aux_and_grad<false, I...>("value_and_grad", true, f, args...);
    return std::pair{v, detail::unwrap_single(std::move(g))};
  };
}
template <typename F>
auto value_and_grad(F f, Holomorphic h) {
  return value_and_grad(f, argnums<0>, h);
}
template <typename F, size_t... I>
auto grad(F f, Argnums<I...>, Holomorphic) {
  return [f](const auto&... args) {
    auto [v, aux, g] = detail::value_aux_and_grad<false, I...>("grad", true, f, args...);
    return detail::unwrap_single(std::move(g));
  };
}
template <typename F>
auto grad(F f, Holomorphic h) {
  return grad(f, argnums<0>, h);
}

// vjp(f, args...) -> pair(outputs, pullback); pullback(cotangent pytree like the outputs)
// returns a tuple with one cotangent per argument.
template <typename F, typename... Args>
auto vjp(F f, const Args&... args) {
  using Result = std::decay_t<decltype(f(args...))>;
  auto all = std::tuple<Args...>(args...);
  auto [leaves, def] = tree_flatten(all);
  auto out_def = std::make_shared<TreeDef>();
  FlatFn fn = detail::flat_fn<std::tuple<Args...>, Result>(f, def, out_def.get());
  detail::VjpResult v = detail::vjp_flat(fn, leaves);
  Result out = tree_unflatten<Result>(*out_def, v.outputs);
  auto pullback = [pb = v.pullback, out_def, def = def](const Result& ct) {
    auto [ctl, cd] = tree_flatten(ct);
    check_same_structure("vjp", *out_def, cd);
    return tree_unflatten<std::tuple<Args...>>(def, pb(ctl));
  };
  return std::pair{out, pullback};
}

// vjp(f, has_aux, args...) for f returning pair(outputs, aux) -> tuple(outputs, pullback, aux)
// (JAX's vjp(f, *primals, has_aux=True)): aux is returned as computed and gets no cotangent.
template <typename F, typename... Args>
auto vjp(F f, HasAux, const Args&... args) {
  using Pair = std::decay_t<decltype(f(args...))>;
  using Result = std::decay_t<typename Pair::first_type>;
  using Aux = std::decay_t<typename Pair::second_type>;
  auto all = std::tuple<Args...>(args...);
  auto [leaves, def] = tree_flatten(all);
  TreeDef pair_def;
  FlatFn fn = detail::flat_fn<std::tuple<Args...>, Pair>(f, def, &pair_def);
  detail::VjpResult v = detail::vjp_flat(fn, leaves);
  if (pair_def.children.size() != 2) fail("vjp", "has_aux needs f to return a pair");
  auto out_def = std::make_shared<TreeDef>(pair_def.children[0]);
  const size_t n_out = static_cast<size_t>(out_def->num_leaves);
  Result out = tree_unflatten<Result>(
      *out_def, std::vector<Array>(v.outputs.begin(), v.outputs.begin() + n_out));
  Aux aux = tree_unflatten<Aux>(pair_def.children[1],
                                std::vector<Array>(v.outputs.begin() + n_out, v.outputs.end()));
  auto pullback = [pb = v.pullback, out_def, def = def, n_all = v.outputs.size()](const Result& ct) {
    auto [ctl, cd] = tree_flatten(ct);
    check_same_structure("vjp", *out_def, cd);
    ctl.resize(n_all);  // empty handles: no cotangent for aux
    return tree_unflatten<std::tuple<Args...>>(def, pb(ctl));
  };
  return std::tuple{out, pullback, aux};
}

// jvp(f, primals, tangents): primals and tangents are tuples of the arguments (like JAX's).
// Returns pair(outputs, output tangents).
template <typename F, typename... Args>
auto jvp(F f, const std::tuple<Args...>& primals, const std::tuple<Args...>& tangents) {
  using Result = std::decay_t<decltype(std::apply(f, primals))>;
  auto [pl, pd] = tree_flatten(primals);
  auto [tl, td] = tree_flatten(tangents);
  check_same_structure("jvp", pd, td);
  TreeDef out_def;
  FlatFn fn = detail::flat_fn<std::tuple<Args...>, Result>(f, pd, &out_def);
  auto [outs, touts] = detail::jvp_flat(fn, pl, tl);
  return std::pair{tree_unflatten<Result>(out_def, outs), tree_unflatten<Result>(out_def, touts)};
}

}  // namespace graft

// jacfwd / jacrev / hessian and linearize live in their own headers, part of this API.
#include "transforms/jacobian.h"
#include "transforms/linearize.h"
