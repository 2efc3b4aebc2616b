// Control flow as primitives, like jax.lax: scan, cond / switch_case, while_loop, fori_loop.
// The functions are traced once (on placeholders) into sub-graphs held by a scan, cond or
// while_loop primitive; every transform applies to them (their rules are in
// transforms/control_flow_*.cc). Carries, operands and outputs are pytrees (core/tree/tree.h).
//
//   auto [last, ys] = graft::scan([](const Array& c, const Array& x) {
//     return std::pair{c * 0.9 + x, c};                 // (new carry, y)
//   }, init, xs);                                       // ys stacks y along a new axis 0
//   Array r = graft::cond(x.sum() > 0, [](const Array& a) { return a; },
//                         [](const Array& a) { return -a; }, x);
//   Array n = graft::fori_loop(0, 10, [](const Array& i, const Array& c) { return c * 2; }, x);
//
// Values the functions close over are captured (arrays from an outer trace become explicit
// inputs of the primitive, so grad and vmap see them).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/ops.h"
#include "core/tree/tree.h"
#include "core/primitives/control.h"

namespace graft {
namespace detail {


template <typename Fn, typename Args>
FlatFn flat_branch(Fn fn, const TreeDef& def, std::shared_ptr<TreeDef> out_def) {
  return [fn, def, out_def](const std::vector<Array>& xs) {
    auto [leaves, d] = tree_flatten(std::apply(fn, tree_unflatten<Args>(def, xs)));
    *out_def = d;
    return leaves;
  };
}

}  // namespace detail

struct ScanOptions {
  std::optional<int64_t> length;  // required when xs has no leaves
  bool reverse = false;           // iterate from the last x to the first (ys keep x's order)
};

// f(carry, x) -> std::pair(new carry, y). Returns std::pair(final carry, ys), ys stacking
// each y along a new leading axis. xs: a pytree of arrays sharing their leading axis.
template <typename F, typename Carry, typename Xs>
auto scan(F f, const Carry& init, const Xs& xs, ScanOptions opts = {}) {
  using Out = std::decay_t<decltype(f(init, xs))>;
  using Y = std::decay_t<decltype(std::declval<Out>().second)>;
  auto [carry, cdef] = tree_flatten(init);
  auto [xl, xdef] = tree_flatten(xs);
  int64_t length = detail::scan_length(xl, opts.length);
  auto ydef = std::make_shared<TreeDef>();
  size_t nk = carry.size();
  FlatFn body = [f, cdef = cdef, xdef = xdef, ydef, nk](const std::vector<Array>& in) {
    auto c = tree_unflatten<Carry>(cdef, std::vector<Array>(in.begin(), in.begin() + nk));
    auto x = tree_unflatten<Xs>(xdef, std::vector<Array>(in.begin() + nk, in.end()));
    auto [c2, y] = f(c, x);
    auto [out, c2def] = tree_flatten(c2);
    check_same_structure("scan", cdef, c2def);
    auto [yl, yd] = tree_flatten(y);
    *ydef = yd;
    out.insert(out.end(), yl.begin(), yl.end());
    return out;
  };
  std::vector<Array> outs = detail::bind_scan(body, {}, carry, xl, length, opts.reverse);
  return std::pair{tree_unflatten<Carry>(cdef, std::vector<Array>(outs.begin(), outs.begin() + nk)),
                   tree_unflatten<Y>(*ydef, std::vector<Array>(outs.begin() + nk, outs.end()))};
}

// Runs true_fn(operands...) if pred (a scalar) else false_fn(operands...). Both are traced;
// their outputs must have the same pytree structure, shapes and dtypes.
template <typename T, typename F, typename... Ops>
auto cond(const Array& pred, T true_fn, F false_fn, const Ops&... operands) {
  using Args = std::tuple<Ops...>;
  using R = std::decay_t<decltype(true_fn(operands...))>;
  auto [leaves, def] = tree_flatten(Args(operands...));
  auto d0 = std::make_shared<TreeDef>(), d1 = std::make_shared<TreeDef>();
  std::vector<FlatFn> branches = {detail::flat_branch<F, Args>(false_fn, def, d0),
                                  detail::flat_branch<T, Args>(true_fn, def, d1)};
  std::vector<Array> outs =
      detail::bind_cond("cond", detail::cond_index("cond", pred), branches, leaves);
  if (*d0 != *d1) {
    fail("cond", "true_fn and false_fn return different pytree structures: ", d1->str(), " vs ",
         d0->str());
  }
  return tree_unflatten<R>(*d0, outs);
}

// Runs branches[clamp(index, 0, n - 1)](operands...), like lax.switch.
template <typename F, typename... Ops>
auto switch_case(const Array& index, const std::vector<F>& branches, const Ops&... operands) {
  using Args = std::tuple<Ops...>;
  using R = std::decay_t<decltype(branches[0](operands...))>;
  if (branches.empty()) fail("switch", "needs at least one branch");
  auto [leaves, def] = tree_flatten(Args(operands...));
  std::vector<std::shared_ptr<TreeDef>> defs;
  std::vector<FlatFn> flat;
  for (const F& b : branches) {
    defs.push_back(std::make_shared<TreeDef>());
    flat.push_back(detail::flat_branch<F, Args>(b, def, defs.back()));
  }
  std::vector<Array> outs = detail::bind_cond("switch", detail::switch_index(index), flat, leaves);
  for (size_t k = 1; k < defs.size(); ++k) {
    if (*defs[k] != *defs[0]) {
      fail("switch", "branch ", k,
           " returns a different pytree structure than branch 0: ", defs[k]->str(), " vs ",
           defs[0]->str());
    }
  }
  return tree_unflatten<R>(*defs[0], outs);
}

// while cond_fn(carry): carry = body_fn(carry). cond_fn returns a bool scalar. Not
// reverse-differentiable (use fori_loop with static bounds, or scan); jvp and vmap work.
template <typename C, typename B, typename Carry>
Carry while_loop(C cond_fn, B body_fn, const Carry& init) {
  auto [carry, cdef] = tree_flatten(init);
  FlatFn cf = [cond_fn, cdef = cdef](const std::vector<Array>& in) {
    return std::vector<Array>{Array(cond_fn(tree_unflatten<Carry>(cdef, in)))};
  };
  FlatFn bf = [body_fn, cdef = cdef](const std::vector<Array>& in) {
    auto [out, d] = tree_flatten(body_fn(tree_unflatten<Carry>(cdef, in)));
    check_same_structure("while_loop", cdef, d);
    return out;
  };
  return tree_unflatten<Carry>(cdef, detail::bind_while(cf, bf, {}, {}, carry));
}

// for i in [lower, upper): carry = body_fn(i, carry), i an i32 scalar. Static bounds lower to
// a scan, so fori_loop is differentiable in both modes.
namespace detail {
// The static loop: a scan over i = lower, ..., upper - 1 of the given integer dtype.
template <typename B, typename Carry>
Carry fori_scan(int64_t lower, int64_t upper, DType dtype, B body_fn, const Carry& init) {
  if (upper <= lower) return init;
  Array is = arange(static_cast<double>(lower), static_cast<double>(upper), 1.0, dtype);
  return scan(
             [body_fn](const Carry& c, const Array& i) {
               return std::pair{Carry(body_fn(i, c)), std::tuple<>{}};
             },
             init, is)
      .first;
}
}  // namespace detail

template <typename B, typename Carry>
Carry fori_loop(int64_t lower, int64_t upper, B body_fn, const Carry& init) {
  return detail::fori_scan(lower, upper, DType::kI32, body_fn, init);
}

namespace detail {
// fori_loop's bounds as two integer scalars of one dtype (a weak one takes the other's, as
// JAX's Python-int bounds do); fails as JAX does on unequal types.
std::pair<Array, Array> fori_bounds(const Array& lower, const Array& upper);
}  // namespace detail

// fori_loop with Array bounds (integer scalars): concrete ones (evaluated, not traced) are
// read and the loop is a scan as above (i of the bounds' dtype); traced ones lower to a while_loop over
// (i, upper, carry), i of the bounds' dtype, as JAX does. That loop has jvp and vmap but, like
// JAX's, no reverse mode: grad fails, naming fori_loop with dynamic bounds.
template <typename B, typename Carry>
Carry fori_loop(const Array& lower, const Array& upper, B body_fn, const Carry& init) {
  auto [lo, hi] = detail::fori_bounds(lower, upper);
  if (!lo.is_tracer() && !hi.is_tracer()) {
    return detail::fori_scan(lo.item<int64_t>(), hi.item<int64_t>(), lo.dtype(), body_fn, init);
  }
  using State = std::tuple<Array, Array, Carry>;
  State out = while_loop(
      [](const State& s) { return std::get<0>(s) < std::get<1>(s); },
      [body_fn](const State& s) {
        const Array& i = std::get<0>(s);
        return State{i + 1, std::get<1>(s), Carry(body_fn(i, std::get<2>(s)))};
      },
      State{lo, hi, init});
  return std::get<2>(out);
}

}  // namespace graft
