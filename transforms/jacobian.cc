#include "transforms/jacobian.h"

#include <algorithm>

#include "core/interpreters/ad.h"
#include "core/interpreters/batching.h"
#include "core/ops.h"
#include "core/primitives/elementwise.h"

namespace graft::detail {
namespace {

// eye(n) reshaped to (n, *shape): the standard basis, one element per row.
Array basis(const Shape& shape, DType dtype) {
  int64_t n = numel(shape);
  Shape s{n};
  s.insert(s.end(), shape.begin(), shape.end());
  return reshape(eye(n, std::nullopt, 0, dtype), s);
}

Shape concat(const Shape& a, const Shape& b) {
  Shape s = a;
  s.insert(s.end(), b.begin(), b.end());
  return s;
}

bool is_struct_kind(const std::string& kind) {
  for (const char* k : {"*", "vector", "array", "map", "some", "none", "tuple", "pair"}) {
    if (kind == k) return false;
  }
  return true;
}

TreeDef nest(const TreeDef& outer, const TreeDef& inner, size_t first, std::vector<size_t>* order) {
  if (outer.kind == "*") {
    order->push_back(first);
    return inner;
  }
  std::vector<size_t> firsts, idx;
  for (const TreeDef& c : outer.children) {
    idx.push_back(firsts.size());
    firsts.push_back(first);
    first += static_cast<size_t>(c.num_leaves);
  }
  const bool to_map = inner.kind != "*" && is_struct_kind(outer.kind);
  std::vector<std::string> keys = outer.keys;
  if (to_map) {  // a map's children go by key
    std::stable_sort(idx.begin(), idx.end(),
                     [&](size_t a, size_t b) { return outer.keys[a] < outer.keys[b]; });
    for (size_t k = 0; k < idx.size(); ++k) keys[k] = outer.keys[idx[k]];
  }
  std::vector<TreeDef> children;
  for (size_t k : idx) children.push_back(nest(outer.children[k], inner, firsts[k], order));
  return make_def(to_map ? "map" : outer.kind, std::move(keys), std::move(children));
}
}  // namespace

TreeDef nest_defs(const TreeDef& outer, const TreeDef& inner, std::vector<size_t>* order) {
  return nest(outer, inner, 0, order);
}

Jacobians jacfwd_flat(const char* op, const FlatFn& fn, const std::vector<Array>& primals,
                      const size_t& num_diff) {
  check_differentiable(op, primals);
  const size_t n_in = primals.size();
  Jacobians r;
  std::vector<std::vector<Array>> by_input(n_in);  // [i][o]
  for (size_t i = 0; i < n_in; ++i) {
    // Tangent basis for leaf i; the other leaves' tangents are symbolic zeros. The outputs
    // come back too (unbatched: they do not depend on the tangents).
    size_t num_outputs = 0;
    FlatFn push = [&](const std::vector<Array>& t) {
      std::vector<Array> ts(n_in);
      ts[i] = t[0];
      auto [outs, touts] = jvp_flat(fn, primals, ts);
      num_outputs = outs.size();
      outs.insert(outs.end(), touts.begin(), touts.begin() + static_cast<long>(num_diff));
      return outs;
    };
    const Array& x = primals[i];
    VmapResult v = vmap_flat(push, {basis(x.shape(), x.dtype())}, {0}, std::nullopt);
    if (i == 0) {
      for (size_t k = 0; k < num_outputs; ++k) {
        // A primal output cannot depend on the tangents, so vmap leaves it unbatched.
        if (v.dims[k] >= 0) fail(op, "internal: primal output ", k, " came out batched");
        r.outputs.push_back(v.outputs[k]);
      }
    }
    for (size_t o = 0; o < num_diff; ++o) {
      size_t k = num_outputs + o;
      Array stacked = move_batch_axis(v.outputs[k], v.dims[k], 0, v.axis_size);  // (n, *out)
      Shape out_shape(stacked.shape().begin() + 1, stacked.shape().end());
      by_input[i].push_back(reshape(moveaxis(stacked, 0, -1), concat(out_shape, x.shape())));
    }
  }
  if (n_in == 0) r.outputs = fn(primals);
  for (size_t o = 0; o < num_diff; ++o) {
    for (size_t i = 0; i < n_in; ++i) r.jac.push_back(by_input[i][o]);
  }
  return r;
}

Jacobians jacrev_flat(const char* op, const FlatFn& fn, const std::vector<Array>& primals,
                      const size_t& num_diff) {
  check_differentiable(op, primals);
  VjpResult v = vjp_flat(fn, primals);
  Jacobians r{v.outputs, {}};
  for (size_t o = 0; o < num_diff; ++o) {
    const Array& y = v.outputs[o];
    if (!is_floating(y.dtype())) {
      fail(op, "requires real-valued outputs (a floating dtype), but output leaf ", o, " is ",
           y.aval().str(), "; use vjp directly");
    }
    FlatFn pull = [&](const std::vector<Array>& ct) {
      std::vector<Array> cts(v.outputs.size());  // empty: zero cotangent
      cts[o] = ct[0];
      return v.pullback(cts);
    };
    VmapResult rows = vmap_flat(pull, {basis(y.shape(), y.dtype())}, {0}, std::nullopt);
    for (size_t i = 0; i < primals.size(); ++i) {
      Array m = move_batch_axis(rows.outputs[i], rows.dims[i], 0, rows.axis_size);  // (m, *in)
      r.jac.push_back(reshape(m, concat(y.shape(), primals[i].shape())));
    }
  }
  return r;
}

}  // namespace graft::detail
