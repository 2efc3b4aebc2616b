// vectorize, apply_along_axis, apply_over_axes, fromfunction and piecewise, after JAX 0.10.2's
// vectorize.py and lax_numpy.py: nested graft::vmap calls, each wrapped back into a
// std::function so the nesting depth can depend on the arguments' ranks.
#include "transforms/numpy_functional.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/error.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using CoreDims = std::vector<std::string>;

// "(a,b),(c)" -> {{a, b}, {c}}; nullopt where it is not that form (JAX's regex, no spaces).
std::optional<std::vector<CoreDims>> parse_arg_list(const std::string& s) {
  std::vector<CoreDims> out;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] != '(') return std::nullopt;
    const size_t close = s.find(')', i);
    if (close == std::string::npos) return std::nullopt;
    CoreDims dims;
    const std::string inner = s.substr(i + 1, close - i - 1);
    size_t p = 0;
    while (p < inner.size()) {
      size_t comma = inner.find(',', p);
      if (comma == std::string::npos) comma = inner.size();
      const std::string name = inner.substr(p, comma - p);
      if (name.empty() || !std::all_of(name.begin(), name.end(), [](unsigned char c) {
            return std::isalnum(c) || c == '_';
          })) {
        return std::nullopt;
      }
      dims.push_back(name);
      p = comma + 1;
      if (comma + 1 == inner.size()) return std::nullopt;  // a trailing comma
    }
    out.push_back(dims);
    i = close + 1;
    if (i < s.size()) {
      if (s[i] != ',' || i + 1 == s.size()) return std::nullopt;
      ++i;
    }
  }
  if (out.empty()) return std::nullopt;
  return out;
}

// Records (inputs) or checks (outputs: exactly the core dims) the core dim sizes of `shape`.
void update_dim_sizes(std::map<std::string, int64_t>& sizes, const Shape& shape,
                      const CoreDims& core, bool is_input) {
  const size_t nc = core.size();
  if (is_input ? shape.size() < nc : shape.size() != nc) {
    fail("vectorize", is_input ? "input" : "output", " with shape ", shape_str(shape),
         is_input ? " does not have enough dimensions for" : " does not match",
         " its ", nc, " core dimensions");
  }
  for (size_t k = 0; k < nc; ++k) {
    const int64_t size = shape[shape.size() - nc + k];
    auto [it, fresh] = sizes.emplace(core[k], size);
    if (!fresh && it->second != size) {
      fail("vectorize", "inconsistent size for core dimension '", core[k], "': ", size, " vs ",
           it->second);
    }
  }
}

// f vmapped over axis 0 of the arguments whose entry is true, the others passed whole.
ArraysFn vmap_some(ArraysFn f, const std::vector<bool>& mapped) {
  std::vector<std::optional<int>> axes;
  for (bool m : mapped) axes.push_back(m ? std::optional<int>(0) : std::nullopt);
  auto g = vmap(f, {AxisSpec::leaves(axes)});
  return [g](const std::vector<Array>& args) { return g(args); };
}

}  // namespace

ArraysFn vectorize(ArraysFn f, const std::string& signature, const std::set<int>& excluded) {
  std::optional<std::vector<CoreDims>> in_core, out_core;
  if (!signature.empty()) {
    const size_t arrow = signature.find("->");
    if (arrow != std::string::npos) {
      in_core = parse_arg_list(signature.substr(0, arrow));
      out_core = parse_arg_list(signature.substr(arrow + 2));
    }
    if (!in_core || !out_core) fail("vectorize", "not a valid gufunc signature: ", signature);
  }
  for (int e : excluded) {
    if (e < 0) fail("vectorize", "excluded contains the negative index ", e);
  }
  return [f, in_core, out_core, excluded](const std::vector<Array>& args) {
    std::vector<Array> dyn;
    for (size_t i = 0; i < args.size(); ++i) {
      if (!excluded.count(static_cast<int>(i))) dyn.push_back(args[i]);
    }
    const std::vector<CoreDims> cores = in_core ? *in_core : std::vector<CoreDims>(dyn.size());
    if (cores.size() != dyn.size()) {
      fail("vectorize", "wrong number of positional arguments: expected ", cores.size(), ", got ",
           dyn.size());
    }
    std::map<std::string, int64_t> sizes;
    std::vector<Shape> noncore;
    for (size_t i = 0; i < dyn.size(); ++i) {
      update_dim_sizes(sizes, dyn[i].shape(), cores[i], true);
      noncore.emplace_back(dyn[i].shape().begin(), dyn[i].shape().end() - cores[i].size());
    }
    const Shape bshape = broadcast_shapes(noncore);
    // The function on the unexcluded arguments, with the excluded ones put back, whose
    // outputs are checked against the signature.
    ArraysFn func = [f, args, excluded, out_core, sizes](const std::vector<Array>& d) {
      std::vector<Array> full;
      size_t k = 0;
      for (size_t i = 0; i < args.size(); ++i) {
        full.push_back(excluded.count(static_cast<int>(i)) ? args[i] : d[k++]);
      }
      std::vector<Array> outs = f(full);
      if (out_core) {
        if (outs.size() != out_core->size()) {
          fail("vectorize", "the function gave ", outs.size(), " outputs; the signature has ",
               out_core->size());
        }
        auto s = sizes;
        for (size_t o = 0; o < outs.size(); ++o) update_dim_sizes(s, outs[o].shape(), (*out_core)[o], false);
      }
      return outs;
    };
    // Drop each argument's size-1 loop dims; then one vmap per loop dim, innermost first.
    std::vector<Array> squeezed;
    std::vector<Shape> filled;
    for (size_t i = 0; i < dyn.size(); ++i) {
      Axes ones;
      for (size_t a = 0; a < noncore[i].size(); ++a) {
        if (noncore[i][a] == 1) ones.push_back(static_cast<int64_t>(a));
      }
      squeezed.push_back(ones.empty() ? dyn[i] : squeeze(dyn[i], ones));
      Shape fs(bshape.size() - noncore[i].size(), 1);
      fs.insert(fs.end(), noncore[i].begin(), noncore[i].end());
      filled.push_back(fs);
    }
    Axes expand;
    for (int64_t d = static_cast<int64_t>(bshape.size()) - 1; d >= 0; --d) {
      std::vector<bool> mapped;
      for (const Shape& fs : filled) mapped.push_back(fs[d] != 1);
      if (std::none_of(mapped.begin(), mapped.end(), [](bool m) { return m; })) {
        expand.push_back(d);
      } else {
        func = vmap_some(func, mapped);
      }
    }
    std::vector<Array> outs = func(squeezed);
    if (!expand.empty()) {
      std::sort(expand.begin(), expand.end());
      for (Array& o : outs) o = expand_dims(o, expand);
    }
    return outs;
  };
}

Array apply_along_axis(const std::function<Array(const Array&)>& func1d, int64_t axis,
                       const Array& arr) {
  const int64_t nd = arr.ndim();
  if (axis < -nd || axis >= nd) fail("apply_along_axis", "axis ", axis, " is out of range for rank ", nd);
  if (axis < 0) axis += nd;
  std::function<Array(const Array&)> func = func1d;
  for (int64_t i = 1; i < nd - axis; ++i) {
    auto g = vmap(func, {static_cast<int>(i)}, {-1});
    func = [g](const Array& a) { return g(a); };
  }
  for (int64_t i = 0; i < axis; ++i) {
    auto g = vmap(func, {0}, {0});
    func = [g](const Array& a) { return g(a); };
  }
  return func(arr);
}

Array apply_over_axes(const std::function<Array(const Array&, int64_t)>& func, const Array& a,
                      const std::vector<int64_t>& axes) {
  Array cur = a;
  for (int64_t axis : axes) {
    Array b = func(cur, axis);
    if (b.ndim() == cur.ndim()) {
      cur = b;
    } else if (b.ndim() == cur.ndim() - 1) {
      const int64_t nd = cur.ndim();
      if (axis < -nd || axis >= nd) fail("apply_over_axes", "axis ", axis, " is out of range for rank ", nd);
      cur = expand_dims(b, {axis < 0 ? axis + nd : axis});
    } else {
      fail("apply_over_axes", "function is not returning an array of the correct shape: rank ",
           b.ndim(), " from rank ", cur.ndim());
    }
  }
  return cur;
}

Array fromfunction(const std::function<Array(const std::vector<Array>&)>& f, const Shape& shape,
                   DType dtype) {
  const size_t n = shape.size();
  ArraysFn func = [f](const std::vector<Array>& idx) { return std::vector<Array>{f(idx)}; };
  // As JAX: the i-th vmap (from the inside) maps the (n-1-i)-th index, so out[i0, i1, ...].
  for (size_t i = 0; i < n; ++i) {
    std::vector<bool> mapped(n, false);
    mapped[n - 1 - i] = true;
    func = vmap_some(func, mapped);
  }
  std::vector<Array> idx;
  for (int64_t s : shape) {
    if (s < 0) fail("fromfunction", "negative dimension in shape ", shape_str(shape));
    idx.push_back(iota(dtype, {s}));
  }
  return func(idx)[0];
}

Array piecewise(const Array& x, const std::vector<Array>& condlist,
                const std::vector<PiecewiseFn>& funclist) {
  const size_t nc = condlist.size(), nf = funclist.size();
  std::vector<PiecewiseFn> funcs;
  if (nf == nc + 1) {
    funcs.push_back(funclist.back());
    funcs.insert(funcs.end(), funclist.begin(), funclist.end() - 1);
  } else if (nf == nc) {
    funcs.push_back(0.0);
    funcs.insert(funcs.end(), funclist.begin(), funclist.end());
  } else {
    fail("piecewise", "with ", nc, " condition(s), either ", nc, " or ", nc + 1,
         " functions are expected; got ", nf);
  }
  if (nc == 0) fail("piecewise", "condlist is empty");
  std::vector<Array> conds;
  for (const Array& c : condlist) {
    if (c.shape() != condlist[0].shape()) {
      fail("piecewise", "conditions have different shapes ", shape_str(c.shape()), " and ",
           shape_str(condlist[0].shape()));
    }
    conds.push_back(astype(c, DType::kI32));
  }
  // The last true condition's number (1-based), 0 where none holds.
  conds.insert(conds.begin(), zeros(condlist[0].shape(), DType::kI32));
  const Array which = argmax(cumsum(stack(conds), 0), 0);
  const Shape bshape = broadcast_shapes({which.shape(), x.shape()});
  const Array xb = broadcast_to(x, bshape), wb = broadcast_to(which, bshape);
  Array out;
  for (size_t k = 0; k < funcs.size(); ++k) {
    Array v;
    if (const double* c = std::get_if<double>(&funcs[k])) {
      v = full(bshape, *c, x.dtype());
    } else {
      const auto& fk = std::get<std::function<Array(const Array&)>>(funcs[k]);
      ArraysFn per_element = [fk, dt = x.dtype()](const std::vector<Array>& a) {
        return std::vector<Array>{astype(fk(a[0]), dt)};
      };
      v = vectorize(per_element)({xb})[0];
    }
    out = k == 0 ? v : where(wb == static_cast<int>(k), v, out);
  }
  return out;
}

}  // namespace graft
