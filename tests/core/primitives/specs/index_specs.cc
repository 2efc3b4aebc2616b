// Specs of the index family (gather, scatter_add, sort) through the public ops take,
// take_along_axis, scatter_add, sort, sort_key_val and argsort. References are plain loops
// over multi-indices on double values.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "tests/core/primitives/specs/jax_edge_specs.h"
#include "tests/core/primitives/specs/spec.h"

namespace graft::spec {
namespace {

using Fn = std::function<Array(const std::vector<Array>&)>;

std::string name(DType d, const std::string& what) {
  return std::string(dtype_name(d)) + " " + what;
}

// jnp's fill value for out-of-range gathers.
double fill_of(DType d) {
  switch (d) {
    case DType::kBool:
      return 1;
    case DType::kU8:
      return 255;
    case DType::kU16:
      return 65535;
    case DType::kU64:
      return 18446744073709551615.0;
    case DType::kI8:
      return -128;
    case DType::kI16:
      return -32768;
    case DType::kU32:
      return 4294967295.0;
    case DType::kI32:
      return -2147483648.0;
    case DType::kI64:
      return -9223372036854775808.0;
    default:
      return NAN;
  }
}

// The values of the transpose of a 2-D array, as a new (contiguous) host-made array.
Array transposed(const Array& a) {
  std::vector<double> v = values_of(a), t;
  int64_t r = a.shape()[0], c = a.shape()[1];
  for (int64_t j = 0; j < c; ++j)
    for (int64_t i = 0; i < r; ++i) t.push_back(v[i * c + j]);
  return make(t, {c, r}, a.dtype());
}

Array ints(const std::vector<double>& v, const Shape& shape, DType d = DType::kI32) {
  return make(v, shape, d);
}

// jnp.take: negative indices wrap in fill mode; clip mode clamps (negatives to 0).
Expected ref_take(const Array& x, const Array& idx, int axis, bool clip) {
  const Shape &xs = x.shape(), &is = idx.shape();
  const int64_t n = xs[axis], ni = static_cast<int64_t>(is.size());
  Shape out(xs.begin(), xs.begin() + axis);
  out.insert(out.end(), is.begin(), is.end());
  out.insert(out.end(), xs.begin() + axis + 1, xs.end());
  std::vector<double> xv = values_of(x), iv = values_of(idx);
  Expected e{out, x.dtype(), {}};
  for (int64_t f = 0; f < numel(out); ++f) {
    auto o = unravel(f, out);
    std::vector<int64_t> ii(o.begin() + axis, o.begin() + axis + ni);
    auto k = static_cast<int64_t>(iv[ravel(ii, is)]);
    if (clip) {
      k = std::clamp<int64_t>(k, 0, n - 1);
    } else if (k < 0) {
      k += n;
    }
    if (k < 0 || k >= n) {
      e.values.push_back(fill_of(x.dtype()));
      continue;
    }
    std::vector<int64_t> src(o.begin(), o.begin() + axis);
    src.push_back(k);
    src.insert(src.end(), o.begin() + axis + ni, o.end());
    e.values.push_back(xv[ravel(src, xs)]);
  }
  return e;
}

// jnp.take_along_axis: other dims broadcast; indices wrap, then fill or clamp.
Expected ref_take_along(const Array& x, const Array& idx, int axis, bool clip) {
  const Shape &xs = x.shape(), &is = idx.shape();
  Shape out(xs.size());
  for (size_t d = 0; d < xs.size(); ++d) out[d] = std::max(xs[d], is[d]);
  out[axis] = is[axis];
  const int64_t n = xs[axis];
  std::vector<double> xv = values_of(x), iv = values_of(idx);
  Expected e{out, x.dtype(), {}};
  for (int64_t f = 0; f < numel(out); ++f) {
    auto o = unravel(f, out);
    auto io = o, xo = o;
    for (size_t d = 0; d < xs.size(); ++d) {
      if (is[d] == 1) io[d] = 0;
      if (xs[d] == 1 && static_cast<int>(d) != axis) xo[d] = 0;
    }
    auto k = static_cast<int64_t>(iv[ravel(io, is)]);
    if (k < 0) k += n;
    if (clip) k = std::clamp<int64_t>(k, 0, n - 1);
    if (k < 0 || k >= n) {
      e.values.push_back(fill_of(x.dtype()));
      continue;
    }
    xo[axis] = k;
    e.values.push_back(xv[ravel(xo, xs)]);
  }
  return e;
}

// x with updates (of take's shape; a scalar broadcasts) added along axis.
Expected ref_scatter_add(const Array& x, const Array& idx, const Array& upd, int axis) {
  const Shape &xs = x.shape(), &is = idx.shape();
  const int64_t n = xs[axis], ni = static_cast<int64_t>(is.size());
  Shape us(xs.begin(), xs.begin() + axis);
  us.insert(us.end(), is.begin(), is.end());
  us.insert(us.end(), xs.begin() + axis + 1, xs.end());
  std::vector<double> acc = values_of(x), iv = values_of(idx), uv = values_of(upd);
  for (int64_t f = 0; f < numel(us); ++f) {
    auto o = unravel(f, us);
    std::vector<int64_t> ii(o.begin() + axis, o.begin() + axis + ni);
    auto k = static_cast<int64_t>(iv[ravel(ii, is)]);
    if (k < 0) k += n;
    if (k < 0 || k >= n) continue;
    std::vector<int64_t> dst(o.begin(), o.begin() + axis);
    dst.push_back(k);
    dst.insert(dst.end(), o.begin() + axis + ni, o.end());
    acc[ravel(dst, xs)] += uv.size() == 1 ? uv[0] : uv[f];
  }
  Expected e{xs, x.dtype(), {}};
  for (double v : acc) e.values.push_back(round_to(v, x.dtype()));
  return e;
}

// JAX's sort order: NaN last (NaNs tie), -0 and +0 tie (jnp.argsort of
// [0., -0., nan, 1., -nan, -0., 0., -inf, inf, -1.] is [7, 9, 0, 1, 5, 6, 3, 8, 2, 4], JAX 0.10.2).
bool sort_less(double a, double b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return a < b;
}

// The stable sorting permutation of every row along axis: perm[row-major position of
// (pre, j, post)] = source j.
std::vector<int64_t> ref_perm(const std::vector<double>& keys, const Shape& shape, int axis) {
  int64_t n = shape[axis], inner = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  std::vector<int64_t> perm(keys.size());
  if (keys.empty()) return perm;
  for (int64_t row = 0; row < numel(shape) / n; ++row) {
    int64_t base = (row / inner) * n * inner + row % inner;
    std::vector<int64_t> p(n);
    std::iota(p.begin(), p.end(), 0);
    std::stable_sort(p.begin(), p.end(), [&](int64_t a, int64_t b) {
      return sort_less(keys[base + a * inner], keys[base + b * inner]);
    });
    for (int64_t j = 0; j < n; ++j) perm[base + j * inner] = p[j];
  }
  return perm;
}

Expected permuted(const std::vector<double>& v, const Shape& shape, int axis, DType d,
                  const std::vector<int64_t>& perm) {
  int64_t n = shape[axis], inner = 1;
  for (size_t k = axis + 1; k < shape.size(); ++k) inner *= shape[k];
  Expected e{shape, d, std::vector<double>(v.size())};
  for (size_t f = 0; f < v.size(); ++f) {
    int64_t j = (static_cast<int64_t>(f) / inner) % n;
    e.values[f] = v[f + (perm[f] - j) * inner];
  }
  return e;
}

Expected ref_sort(const Array& x, int axis) {
  std::vector<double> v = values_of(x);
  return permuted(v, x.shape(), axis, x.dtype(), ref_perm(v, x.shape(), axis));
}

Expected ref_argsort(const Array& x, int axis) {
  std::vector<int64_t> perm = ref_perm(values_of(x), x.shape(), axis);
  return Expected{x.shape(), DType::kI32, std::vector<double>(perm.begin(), perm.end())};
}

}  // namespace

GRAFT_SPEC(Gather) {
  Spec s{PrimitiveId::kGather};
  auto take_case = [&](const std::string& nm, Array x, Array idx, int64_t axis, GatherMode mode,
                       double rtol = 0) {
    int ax = static_cast<int>(axis < 0 ? axis + x.ndim() : axis);
    Expected e = ref_take(x, idx, ax, mode == GatherMode::kClip);
    s.cases.push_back(
        {nm,
         {x, idx},
         [axis, mode](const std::vector<Array>& in) { return take(in[0], in[1], axis, mode); },
         e,
         rtol});
  };
  const GatherMode kFill = GatherMode::kFill, kClip = GatherMode::kClip;
  // Rows of an embedding table, with a wrapped negative index.
  take_case("f32 rows", random_array({5, 4}, DType::kF32, 1), ints({4, -1, 0, 2}, {4}), 0, kFill);
  // Middle axis, 2-D i64 indices, out-of-range ones (both sides) fill with NaN.
  take_case("f64 middle axis", random_array({3, 4, 5}, DType::kF64, 2),
            ints({3, 7, -5, -4, 0, 1}, {2, 3}, DType::kI64), 1, kFill);
  take_case("bf16 last axis u8 indices", random_array({4, 6}, DType::kBF16, 3),
            ints({5, 6, 0, 200}, {4}, DType::kU8), -1, kFill);
  take_case("f16 u32 indices", random_array({3, 2}, DType::kF16, 4),
            ints({2, 3, 0}, {3}, DType::kU32), 0, kFill);
  // Integer and bool fills: lowest signed, highest unsigned, true.
  for (DType d : {DType::kI32, DType::kI64, DType::kU8, DType::kU32, DType::kBool, DType::kI8,
                  DType::kI16, DType::kU16, DType::kU64}) {
    take_case(name(d, "fill"), random_array({6}, d, 5, -50, 50), ints({1, 9, -7, -6}, {2, 2}), 0,
              kFill);
  }
  // jnp.take clip: negatives clamp to 0 (they do not wrap), large ones to n - 1.
  take_case("f16 clip", random_array({4, 3}, DType::kF16, 6), ints({-1, 9, 2, -9}, {4}), 0, kClip);
  take_case("i64 clip i64 indices", random_array({2, 5}, DType::kI64, 7, -9, 9),
            ints({-2, 7, 4}, {3}, DType::kI64), 1, kClip);
  take_case("u8 clip u8 indices", random_array({5}, DType::kU8, 8, 0, 200),
            ints({0, 255, 3}, {3}, DType::kU8), 0, kClip);
  take_case("scalar index", random_array({4, 3}, DType::kF32, 9), ints({2}, {}), 0, kFill);
  take_case("scalar index drops the axis", random_array({4}, DType::kF32, 10), ints({-1}, {}), 0,
            kFill);
  take_case("empty indices", random_array({4, 3}, DType::kF32, 11), ints({}, {0}), 0, kFill);
  take_case("empty operand", random_array({0, 3}, DType::kF32, 12), ints({1, 5}, {2}), 1, kFill);
  // Many rows so that the kernel splits the work over threads.
  std::vector<double> many = random_values(700, DType::kI32, 13, -320, 320);
  take_case("f32 many rows", random_array({300, 70}, DType::kF32, 14), ints(many, {700}), 0, kFill);
  take_case("bool many elements", random_array({40000}, DType::kBool, 15),
            ints(random_values(30000, DType::kI32, 16, -40000, 40010), {30000}), 0, kFill);
  // Non-contiguous operand: take from the transpose of a stored (4, 5) array.
  {
    Array base = random_array({4, 5}, DType::kF32, 17);
    Array idx = ints({3, -1, 0}, {3});
    s.cases.push_back(
        {"transposed operand",
         {base, idx},
         [](const std::vector<Array>& in) { return take(transpose(in[0]), in[1], 1); },
         ref_take(transposed(base), idx, 1, false)});
  }

  // take_along_axis: gather with batch dims.
  auto along_case = [&](const std::string& nm, Array x, Array idx, int64_t axis, GatherMode mode) {
    int ax = static_cast<int>(axis < 0 ? axis + x.ndim() : axis);
    s.cases.push_back({nm,
                       {x, idx},
                       [axis, mode](const std::vector<Array>& in) {
                         return take_along_axis(in[0], in[1], axis, mode);
                       },
                       ref_take_along(x, idx, ax, mode == GatherMode::kClip)});
  };
  along_case("along last axis", random_array({3, 4}, DType::kF32, 20),
             ints({3, 0, -1, 1, 2, 2, 4, -5, 0}, {3, 3}), -1, kFill);
  along_case("along axis 0", random_array({3, 4}, DType::kF64, 21),
             ints({2, 0, 1, 1, 0, 0, 2, -1}, {2, 4}, DType::kI64), 0, kFill);
  along_case("along middle axis rank 3", random_array({2, 5, 3}, DType::kBF16, 22),
             ints(random_values(24, DType::kI32, 23, -6, 6), {2, 4, 3}), 1, kFill);
  along_case("along clip wraps then clamps", random_array({2, 4}, DType::kI32, 24, -9, 9),
             ints({-1, 7, -9, 2, 0, 3}, {2, 3}), 1, kClip);
  along_case("along broadcasts other dims", random_array({3, 4}, DType::kU8, 25, 0, 99),
             ints({1, 3}, {1, 2}, DType::kU32), 1, kFill);
  along_case("along broadcasts the operand", random_array({1, 4}, DType::kF32, 26),
             ints({0, 1, 2, 3, 3, 2}, {3, 2}), 1, kFill);
  along_case("along empty", random_array({3, 4}, DType::kF32, 27), ints({}, {3, 0}), 1, kFill);
  along_case("along 1-D", random_array({6}, DType::kBool, 28), ints({5, 0, -2, 6}, {4}), 0, kFill);
  return s;
}

GRAFT_SPEC(ScatterAdd) {
  Spec s{PrimitiveId::kScatterAdd};
  auto add_case = [&](const std::string& nm, Array x, Array idx, Array upd, int64_t axis,
                      double rtol = 0, double atol = 0) {
    int ax = static_cast<int>(axis < 0 ? axis + x.ndim() : axis);
    s.cases.push_back(
        {nm,
         {x, idx, upd},
         [axis](const std::vector<Array>& in) { return scatter_add(in[0], in[1], in[2], axis); },
         ref_scatter_add(x, idx, upd, ax),
         rtol,
         atol});
  };
  // Duplicates accumulate, negatives wrap, out-of-range updates are dropped.
  Array idx5 = ints({0, 2, 0, -1, 7}, {5});
  add_case("f32 rows", random_array({5, 3}, DType::kF32, 1), idx5,
           random_array({5, 3}, DType::kF32, 2), 0, 4e-7, 1e-6);
  add_case("f64 middle axis 2-D indices", random_array({2, 4, 3}, DType::kF64, 3),
           ints({3, 3, -4, 9}, {2, 2}, DType::kI64), random_array({2, 2, 2, 3}, DType::kF64, 4), 1,
           1e-15, 1e-15);
  // f16 / bf16 sums accumulate in f32 and round once.
  for (DType d : {DType::kBF16, DType::kF16}) {
    add_case(name(d, "duplicates"), random_array({3, 4}, d, 5),
             ints({1, 1, 1, 1, 1, 1, 0, -1}, {8}, DType::kU32), random_array({3, 8}, d, 6), -1,
             default_rtol(d), default_rtol(d));
  }
  for (DType d : {DType::kI32, DType::kI64, DType::kU8, DType::kU32, DType::kI16, DType::kU16,
                  DType::kU64}) {
    add_case(name(d, "ints"), random_array({4, 2}, d, 7, 0, 120), ints({3, 3, -2, 4, 0}, {5}),
             random_array({5, 2}, d, 8, 0, 120), 0);
  }
  // i8: small values, so the duplicate index's sums stay in range.
  add_case(name(DType::kI8, "ints"), random_array({4, 2}, DType::kI8, 7, -30, 30),
           ints({3, 3, -2, 4, 0}, {5}), random_array({5, 2}, DType::kI8, 8, -30, 30), 0);
  // u8 sums wrap around.
  add_case("u8 wraps", ints({250}, {1}, DType::kU8), ints({0, 0}, {2}),
           ints({5, 9}, {2}, DType::kU8), 0);
  // A scalar update broadcasts: a histogram.
  {
    Array idx = ints(random_values(40, DType::kI32, 9, -3, 8), {40});
    Array x = make(std::vector<double>(6, 0.0), {6}, DType::kF32);
    Expected e = ref_scatter_add(x, idx, make({1}, {}, DType::kF32), 0);
    s.cases.push_back({"histogram of a broadcast scalar",
                       {x, idx},
                       [](const std::vector<Array>& in) { return scatter_add(in[0], in[1], 1.0); },
                       e});
  }
  add_case("empty indices", random_array({3, 2}, DType::kF32, 10), ints({}, {0}),
           random_array({0, 2}, DType::kF32, 11), 0);
  add_case("empty rows", random_array({3, 0}, DType::kF32, 12), ints({1, 2}, {2}),
           random_array({2, 0}, DType::kF32, 13), 0);
  // Embedding gradient: many updates into a few rows; work split along the rows' elements.
  add_case("embedding gradient", random_array({64, 300}, DType::kF32, 14),
           ints(random_values(200, DType::kI32, 15, -64, 70), {200}),
           random_array({200, 300}, DType::kF32, 16), 0, 1e-5, 1e-5);
  // One long vector: work split across target ranges. Integers keep it exact.
  add_case("i32 long vector", random_array({1000}, DType::kI32, 17, -100, 100),
           ints(random_values(50000, DType::kI32, 18, -1000, 1100), {50000}, DType::kI64),
           random_array({50000}, DType::kI32, 19, -100, 100), 0);
  // Non-contiguous operand and updates.
  {
    Array base = random_array({3, 5}, DType::kF32, 20);
    Array upd = random_array({3, 4}, DType::kF32, 21);  // transposed: (4, 3)
    Array idx = ints({1, 4, 1, -5}, {4});
    s.cases.push_back({"transposed operand and updates",
                       {base, idx, upd},
                       [](const std::vector<Array>& in) {
                         return scatter_add(transpose(in[0]), in[1], transpose(in[2]), 0);
                       },
                       ref_scatter_add(transposed(base), idx, transposed(upd), 0),
                       4e-7,
                       1e-6});
  }
  return s;
}

GRAFT_SPEC(Sort) {
  Spec s{PrimitiveId::kSort};
  auto sort_case = [&](const std::string& nm, Array x, int64_t axis) {
    int ax = static_cast<int>(axis < 0 ? axis + x.ndim() : axis);
    s.cases.push_back({nm,
                       {x},
                       [axis](const std::vector<Array>& in) { return sort(in[0], axis); },
                       ref_sort(x, ax)});
  };
  auto argsort_case = [&](const std::string& nm, Array x, int64_t axis) {
    int ax = static_cast<int>(axis < 0 ? axis + x.ndim() : axis);
    s.cases.push_back({nm,
                       {x},
                       [axis](const std::vector<Array>& in) { return argsort(in[0], axis); },
                       ref_argsort(x, ax)});
  };
  double inf = std::numeric_limits<double>::infinity();
  sort_case("f32 specials", make({3, NAN, -inf, 0.0, -0.0, inf, -2, NAN, 1}, {9}, DType::kF32), 0);
  for (DType d : {DType::kF64, DType::kF32, DType::kBF16}) {
    argsort_case(name(d, "argsort specials: NaN last, -0 and +0 tie"),
                 make({0.0, NAN, -0.0, inf, -inf, 0.0, -0.0, -NAN}, {8}, d), 0);
  }
  for (DType d : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16, DType::kI32, DType::kI64,
                  DType::kU8, DType::kU32, DType::kBool, DType::kI8, DType::kI16, DType::kU16,
                  DType::kU64}) {
    sort_case(name(d, "last axis"), random_array({3, 7}, d, 1, -20, 20), -1);
    sort_case(name(d, "axis 0"), random_array({6, 2, 3}, d, 2, -20, 20), 0);
    // Few distinct values: argsort must keep equal keys in their original order.
    argsort_case(name(d, "argsort stable"), random_array({4, 9}, d, 3, -2, 2), 1);
  }
  argsort_case("argsort middle axis", random_array({2, 6, 3}, DType::kI32, 4, -3, 3), -2);
  sort_case("empty", random_array({0}, DType::kF32, 5), 0);
  sort_case("empty rows", random_array({2, 0}, DType::kF32, 6), 1);
  sort_case("length-1 axis", random_array({3, 1}, DType::kF32, 7), 1);
  sort_case("many rows", random_array({40, 1000}, DType::kF32, 8), -1);
  s.cases.back().skip_grad =
      "1000 f32 values in [-2, 2) per row are ~0.004 apart: the f32 finite-difference step "
      "(3e-3) reorders neighbours, crossing the sort's kinks (the smaller f32 / f64 cases and "
      "tests/core/primitives/index_rules_test.cc check the derivative)";
  {
    Array base = random_array({5, 4}, DType::kI64, 9, -9, 9);
    s.cases.push_back({"transposed operand",
                       {base},
                       [](const std::vector<Array>& in) { return sort(transpose(in[0]), 0); },
                       ref_sort(transposed(base), 0)});
  }
  // sort_key_val: values follow their keys; equal keys keep the values' order.
  for (DType vd : {DType::kF32, DType::kI64, DType::kBF16}) {
    Array k = random_array({3, 8}, DType::kI32, 10, -2, 2);
    Array v = random_array({3, 8}, vd, 11, -50, 50);
    std::vector<int64_t> perm = ref_perm(values_of(k), k.shape(), 1);
    Expected ek = permuted(values_of(k), k.shape(), 1, DType::kI32, perm);
    Expected ev = permuted(values_of(v), v.shape(), 1, vd, perm);
    s.cases.push_back(
        {name(vd, "sort_key_val values"),
         {k, v},
         [](const std::vector<Array>& in) { return sort_key_val(in[0], in[1]).second; },
         ev});
    s.cases.push_back(
        {name(vd, "sort_key_val keys"),
         {k, v},
         [](const std::vector<Array>& in) { return sort_key_val(in[0], in[1]).first; },
         ek});
  }
  return with_jax_edges(s);
}

}  // namespace graft::spec
