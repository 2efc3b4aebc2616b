// Specs of reduce_{sum,prod,max,min,and,or} through the public ops (sum, mean, var, prod,
// max, min, logsumexp, softmax, log_softmax, all, any). References are loops in double
// (tests/core/primitives/specs/reduce_ref.h) rounded to the output dtype. Large cases cover the
// kernels' parallel and pairwise paths; transposed / strided inputs cover non-contiguous
// operands (the reference indexes the original array).
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/core/primitives/specs/reduce_ref.h"

namespace graft::spec {
namespace {

using Pub = std::function<Array(const Array&, const Axes&, bool)>;
using Pre = std::function<Array(const Array&)>;
using Fold = std::function<double(double, double)>;

Array identity(const Array& x) { return x; }

// What a public reduction computes, for the reference.
struct Red {
  Pub pub;
  double init;
  Fold fold;
  enum Err { kExact, kSumLike, kProdLike } err;  // how rounding errors grow
  std::function<DType(DType)> out;
};

DType same(DType d) { return d; }
DType sum_out(DType d) {
  if (d == DType::kBool || d == DType::kI8 || d == DType::kI16) return DType::kI32;
  return d == DType::kU8 || d == DType::kU16 ? DType::kU32 : d;
}

const Red kSum{[](const Array& x, const Axes& a, bool k) { return sum(x, a, k); }, 0, plus,
               Red::kSumLike, sum_out};
const Red kProd{[](const Array& x, const Axes& a, bool k) { return prod(x, a, k); }, 1, times,
                Red::kProdLike, sum_out};
const Red kMax{[](const Array& x, const Axes& a, bool k) { return max(x, a, k); }, -INFINITY,
               max_nan, Red::kExact, same};
const Red kMin{[](const Array& x, const Axes& a, bool k) { return min(x, a, k); }, INFINITY,
               min_nan, Red::kExact, same};
const Red kAll{[](const Array& x, const Axes& a, bool k) { return all(x, a, k); }, 1,
               [](double a, double v) { return double(a != 0 && v != 0); }, Red::kExact,
               [](DType) { return DType::kBool; }};
const Red kAny{[](const Array& x, const Axes& a, bool k) { return any(x, a, k); }, 0,
               [](double a, double v) { return double(a != 0 || v != 0); }, Red::kExact,
               [](DType) { return DType::kBool; }};

std::string label(DType d, const Shape& s, const Axes& axes, bool keepdims,
                  const std::string& extra = "") {
  return absl::StrCat(dtype_name(d), shape_str(s), " axes=(", absl::StrJoin(axes, ","), ")",
                      keepdims ? " keepdims" : "", extra.empty() ? "" : " ", extra);
}

// A case reducing pre(x): `h` is pre(x) computed on the host.
void add(Spec& s, const Red& r, const Array& x, const Axes& axes, bool keepdims, const Host& h,
         const Pre& pre, const std::string& extra) {
  DType out = r.out(x.dtype());
  Expected e = ref_reduce(h, axes, keepdims, out, r.init, r.fold);
  double rtol = default_rtol(out), atol = 0;
  if (r.err == Red::kSumLike && is_floating(out)) {
    atol = 4 * acc_eps(out) * abs_sum_max(h, axes);
  }
  if (r.err == Red::kProdLike && is_floating(out)) {  // relative error grows with the count
    int64_t n = numel(h.shape) / std::max<int64_t>(1, numel(e.shape));
    rtol += 2 * acc_eps(out) * static_cast<double>(n);
  }
  Pub pub = r.pub;
  s.cases.push_back({label(x.dtype(), h.shape, axes, keepdims, extra),
                     {x},
                     [pub, pre, axes, keepdims](const std::vector<Array>& in) {
                       return pub(pre(in[0]), axes, keepdims);
                     },
                     e,
                     rtol,
                     atol});
}

void add(Spec& s, const Red& r, const Array& x, const Axes& axes, bool keepdims = false) {
  add(s, r, x, axes, keepdims, host_of(x), identity, "");
}

// Non-contiguous operands: a transpose and a strided slice of stored arrays.
void add_noncontiguous(Spec& s, const Red& r, DType d, uint32_t seed, double lo, double hi) {
  Array a = random_array({4, 6}, d, seed, lo, hi);
  add(
      s, r, a, {1}, false, host_transpose(host_of(a), {1, 0}),
      [](const Array& x) { return transpose(x); }, "of transpose");
  Array b = random_array({2, 3, 4}, d, seed + 1, lo, hi);
  add(
      s, r, b, {0, 2}, false, host_transpose(host_of(b), {2, 0, 1}),
      [](const Array& x) {
        return transpose(x, std::vector<int>{2, 0, 1});
      },
      "of transpose");
  Array c = random_array({5, 8}, d, seed + 2, lo, hi);
  add(
      s, r, c, {0}, true, host_slice(host_of(c), {0, 1}, {5, 8}, {2, 3}),
      [](const Array& x) {
        return slice(x, {0, 1}, {5, 8}, {2, 3});
      },
      "of strided slice");
}

// Shapes and axes every reduction runs on: one axis, several (non-adjacent) axes, all,
// negative axes, keepdims, only size-1 axes, zero-sized reduced or kept axes.
void add_common(Spec& s, const Red& r, DType d, uint32_t seed, double lo, double hi) {
  add(s, r, random_array({3, 4, 5}, d, seed, lo, hi), {1});
  add(s, r, random_array({3, 4, 5}, d, seed + 1, lo, hi), {0, 2}, true);
  add(s, r, random_array({3, 4, 5}, d, seed + 2, lo, hi), {});
  add(s, r, random_array({2, 3, 4, 5}, d, seed + 3, lo, hi), {-1, -3});
  add(s, r, random_array({3, 1, 4}, d, seed + 4, lo, hi), {1});
  add(s, r, random_array({7}, d, seed + 5, lo, hi), {0});
}

void add_empty(Spec& s, const Red& r, DType d) {
  add(s, r, random_array({0, 3}, d, 1), {0});  // reduced axis empty: the identity
  add(s, r, random_array({3, 0}, d, 1), {1});
  add(s, r, random_array({0, 3}, d, 1), {1});  // output empty
}

// Long reductions: the pairwise, split-the-axis and column-block paths of the kernels.
void add_large(Spec& s, const Red& r, DType d, uint32_t seed, double lo, double hi) {
  add(s, r, random_array({131075}, d, seed, lo, hi), {});
  add(s, r, random_array({70000, 3}, d, seed + 1, lo, hi), {0});
  add(s, r, random_array({5, 40000}, d, seed + 2, lo, hi), {1});
  add(s, r, random_array({60, 600}, d, seed + 3, lo, hi), {0});
}

Array with_values(std::vector<double> v, const Shape& shape, DType d) { return make(v, shape, d); }

}  // namespace

GRAFT_SPEC(ReduceSum) {
  Spec s{PrimitiveId::kReduceSum};
  for (DType d : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16, DType::kI32, DType::kI64,
                  DType::kU32, DType::kI8, DType::kI16, DType::kU16, DType::kU64}) {
    add_common(s, kSum, d, 10 + static_cast<int>(d) * 10, -4, 4);
  }
  add(s, kSum, random_array({50, 3}, DType::kU8, 3, 0, 255), {0});  // u8 sums as u32
  add(s, kSum, random_array({4, 5}, DType::kBool, 4), {1});         // bool sums as i32
  add(s, kSum, random_array({64, 40}, DType::kF16, 5, -1, 1), {0});
  add_empty(s, kSum, DType::kF32);
  add_noncontiguous(s, kSum, DType::kF32, 6, -3, 3);
  add_noncontiguous(s, kSum, DType::kI32, 9, -9, 9);
  add_large(s, kSum, DType::kF32, 20, 0.5, 1);
  add_large(s, kSum, DType::kF64, 30, -1, 1);
  // bf16 accumulates in f32: a bf16 running sum would stall near 256 here.
  add(s, kSum, random_array({20000}, DType::kBF16, 40, 0.5, 1), {});

  // mean: a sum divided by the count, in f32 for ints and halves.
  auto add_mean = [&](const Array& x, const Axes& axes, bool keepdims) {
    DType out = is_floating(x.dtype()) ? x.dtype() : DType::kF32;
    Host h = host_of(x);
    std::vector<int> ax = norm_axes(axes, x.ndim());
    double n = 1;
    for (int a : ax) n *= static_cast<double>(x.shape()[a]);
    Expected e = ref_reduce(h, axes, keepdims, DType::kF64, 0, plus);
    for (double& v : e.values) v = round_to(v / n, out);
    e.dtype = out;
    double atol = 4 * acc_eps(out) * abs_sum_max(h, axes) / std::max(n, 1.0);
    s.cases.push_back(
        {label(x.dtype(), x.shape(), axes, keepdims, "mean"),
         {x},
         [axes, keepdims](const std::vector<Array>& in) { return mean(in[0], axes, keepdims); },
         e,
         default_rtol(out),
         atol});
  };
  add_mean(random_array({3, 4}, DType::kF32, 50), {1}, false);
  add_mean(random_array({2, 5}, DType::kI32, 51, -20, 20), {}, false);
  add_mean(random_array({8, 16}, DType::kBF16, 52), {0}, true);
  add_mean(random_array({4, 3}, DType::kF64, 53), {-2}, false);
  add_mean(random_array({0, 3}, DType::kF32, 54), {0}, false);  // 0 / 0: NaN

  // var: mean of squared deviations, divided by n - ddof.
  auto add_var = [&](const Array& x, const Axes& axes, bool keepdims, int64_t ddof) {
    DType out = is_floating(x.dtype()) ? x.dtype() : DType::kF32;
    Host h = host_of(x);
    std::vector<int> ax = norm_axes(axes, x.ndim());
    double n = 1;
    for (int a : ax) n *= static_cast<double>(x.shape()[a]);
    Expected m = ref_reduce(h, axes, false, DType::kF64, 0, plus);
    std::vector<double> ss(m.values.size(), 0.0);
    for (int64_t i = 0; i < numel(h.shape); ++i) {
      int64_t o = out_index(i, h.shape, ax);
      double dev = h.v[i] - m.values[o] / n;
      ss[o] += dev * dev;
    }
    Expected e{reduced_shape(h.shape, ax, keepdims), out, {}};
    for (double v : ss) e.values.push_back(round_to(v / (n - static_cast<double>(ddof)), out));
    s.cases.push_back({label(x.dtype(), x.shape(), axes, keepdims, absl::StrCat("var ddof=", ddof)),
                       {x},
                       [axes, keepdims, ddof](const std::vector<Array>& in) {
                         return var(in[0], axes, keepdims, ddof);
                       },
                       e,
                       4 * default_rtol(out) + 1e-6,
                       0});
  };
  add_var(random_array({4, 6}, DType::kF32, 60), {1}, false, 0);
  add_var(random_array({5, 3}, DType::kF64, 61), {0}, true, 1);
  add_var(random_array({10}, DType::kI32, 62, -30, 30), {}, false, 0);
  add_var(random_array({3, 50}, DType::kBF16, 63), {-1}, false, 0);
  return s;
}

GRAFT_SPEC(ReduceProd) {
  Spec s{PrimitiveId::kReduceProd};
  for (DType d : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16}) {
    add_common(s, kProd, d, 100 + static_cast<int>(d) * 10, 0.6, 1.5);
  }
  add(s, kProd, random_array({4, 3}, DType::kI32, 101, -3, 4), {0});
  add(s, kProd, random_array({2, 3, 2}, DType::kI64, 102, -5, 6), {0, 2});
  add(s, kProd, random_array({3, 4}, DType::kU8, 103, 1, 7), {1});  // products > 255: as u32
  add(s, kProd, random_array({2, 3}, DType::kBool, 104), {1});      // bool: i32
  add_empty(s, kProd, DType::kF32);
  add_noncontiguous(s, kProd, DType::kF64, 105, 0.5, 1.5);
  add(s, kProd, random_array({40000}, DType::kF32, 106, 0.9999, 1.0001), {});
  s.cases.back().skip_grad =
      "40000 factors: at f32's h=3e-3 the central difference is ~4% off (curvature "
      "exp(-h^2 sum t^2 / 2)), not a rounding-free check; the f64 (3, 5000) case checks the rule";
  add(s, kProd, random_array({3, 5000}, DType::kF64, 107, 0.999, 1.001), {1});
  return s;
}

GRAFT_SPEC(ReduceMax) {
  Spec s{PrimitiveId::kReduceMax};
  for (DType d : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16, DType::kI32, DType::kI64,
                  DType::kU8, DType::kU32, DType::kBool, DType::kI8, DType::kI16, DType::kU16,
                  DType::kU64}) {
    add_common(s, kMax, d, 200 + static_cast<int>(d) * 10, -100, 100);
  }
  add(s, kMax, random_array({6}, DType::kU32, 201, 0, 4.2e9), {0});
  add(s, kMax, random_array({3, 4}, DType::kI32, 202, -100, -50), {1});  // all negative
  double inf = INFINITY;
  add(s, kMax, with_values({1, NAN, 3, -inf, -inf, -inf, 2, 5, NAN}, {3, 3}, DType::kF32), {1});
  add(s, kMax, with_values({1, NAN, 3, -inf, -inf, -inf}, {2, 3}, DType::kBF16), {0});
  add_noncontiguous(s, kMax, DType::kF32, 203, -5, 5);
  add_noncontiguous(s, kMax, DType::kU8, 206, 0, 255);
  add_large(s, kMax, DType::kF32, 210, -1000, 1000);
  add_large(s, kMax, DType::kI64, 220, -1e12, 1e12);

  // logsumexp, softmax and log_softmax shift by a reduce_max.
  auto lse_ref = [](const Host& h, const Axes& axes, bool keepdims, DType out) {
    std::vector<int> ax = norm_axes(axes, static_cast<int>(h.shape.size()));
    Expected m = ref_reduce(h, axes, false, DType::kF64, -INFINITY, max_nan);
    for (double& v : m.values) v = std::isfinite(v) ? v : 0;
    std::vector<double> se(m.values.size(), 0.0);
    for (int64_t i = 0; i < numel(h.shape); ++i) {
      int64_t o = out_index(i, h.shape, ax);
      se[o] += std::exp(h.v[i] - m.values[o]);
    }
    Expected e{reduced_shape(h.shape, ax, keepdims), out, {}};
    for (size_t o = 0; o < se.size(); ++o) {
      e.values.push_back(round_to(std::log(se[o]) + m.values[o], out));
    }
    return e;
  };
  auto add_lse = [&](const Array& x, const Axes& axes, bool keepdims) {
    DType out = is_floating(x.dtype()) ? x.dtype() : DType::kF32;
    s.cases.push_back({label(x.dtype(), x.shape(), axes, keepdims, "logsumexp"),
                       {x},
                       [axes, keepdims](const std::vector<Array>& in) {
                         return logsumexp(in[0], axes, keepdims);
                       },
                       lse_ref(host_of(x), axes, keepdims, out),
                       4 * default_rtol(out),
                       4 * default_rtol(out)});
  };
  add_lse(random_array({3, 5}, DType::kF32, 230), {1}, false);
  add_lse(random_array({2, 3, 4}, DType::kF64, 231), {}, false);
  add_lse(random_array({4, 6}, DType::kBF16, 232), {0}, true);
  add_lse(random_array({6}, DType::kI32, 233, -5, 5), {0}, false);
  add_lse(with_values({-inf, -inf, 1, -inf, inf, 0, 1000, 1000}, {4, 2}, DType::kF32), {1}, false);
  add_lse(random_array({0, 3}, DType::kF32, 234), {0}, false);  // empty: -inf

  auto softmax_ref = [](const Host& h, int axis, bool log_out, DType out) {
    Expected m = ref_reduce(h, {axis}, false, DType::kF64, -INFINITY, max_nan);
    std::vector<double> se(m.values.size(), 0.0);
    std::vector<int> ax{axis};
    for (int64_t i = 0; i < numel(h.shape); ++i) {
      int64_t o = out_index(i, h.shape, ax);
      se[o] += std::exp(h.v[i] - m.values[o]);
    }
    Expected e{h.shape, out, {}};
    for (int64_t i = 0; i < numel(h.shape); ++i) {
      int64_t o = out_index(i, h.shape, ax);
      double sh = h.v[i] - m.values[o];
      e.values.push_back(round_to(log_out ? sh - std::log(se[o]) : std::exp(sh) / se[o], out));
    }
    return e;
  };
  for (bool log_out : {false, true}) {
    auto add_sm = [&](const Array& x, int64_t axis) {
      int a = static_cast<int>(axis < 0 ? axis + x.ndim() : axis);
      DType out = is_floating(x.dtype()) ? x.dtype() : DType::kF32;
      double tol = 4 * default_rtol(out);
      s.cases.push_back(
          {label(x.dtype(), x.shape(), {axis}, false, log_out ? "log_softmax" : "softmax"),
           {x},
           [axis, log_out](const std::vector<Array>& in) {
             return log_out ? log_softmax(in[0], axis) : softmax(in[0], axis);
           },
           softmax_ref(host_of(x), a, log_out, out),
           tol,
           tol});
    };
    add_sm(random_array({3, 5}, DType::kF32, 240), -1);
    add_sm(random_array({4, 3}, DType::kF64, 241), 0);
    add_sm(random_array({2, 8}, DType::kBF16, 242), 1);
    add_sm(with_values({1000, 1001, 0, -1000}, {2, 2}, DType::kF32), -1);  // no overflow
  }
  return s;
}

GRAFT_SPEC(ReduceMin) {
  Spec s{PrimitiveId::kReduceMin};
  for (DType d : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16, DType::kI32, DType::kI64,
                  DType::kU8, DType::kU32, DType::kBool, DType::kI8, DType::kI16, DType::kU16,
                  DType::kU64}) {
    add_common(s, kMin, d, 300 + static_cast<int>(d) * 10, -100, 100);
  }
  add(s, kMin, random_array({6}, DType::kU32, 301, 0, 4.2e9), {0});
  double inf = INFINITY;
  add(s, kMin, with_values({1, NAN, 3, inf, inf, inf, 2, -5, NAN}, {3, 3}, DType::kF32), {1});
  add_noncontiguous(s, kMin, DType::kF64, 303, -5, 5);
  add_large(s, kMin, DType::kF32, 310, -1000, 1000);
  return s;
}

GRAFT_SPEC(ReduceAnd) {
  Spec s{PrimitiveId::kReduceAnd};
  // Bool rows of 2 are often all true; ints and floats convert with != 0 (NaN is true).
  add(s, kAll, random_array({6, 2}, DType::kBool, 400), {1});
  add(s, kAll, random_array({2, 3, 2}, DType::kBool, 401), {0, 2}, true);
  add(s, kAll, random_array({3, 2}, DType::kI32, 402, 0, 3), {});
  add(s, kAll, with_values({1, NAN, 2, 0, 3, 4}, {2, 3}, DType::kF32), {1});
  add(s, kAll, with_values({1, 2, 0, 0}, {2, 2}, DType::kBF16), {-1});
  add(s, kAll, random_array({0, 3}, DType::kBool, 403), {0});  // empty: true
  add_noncontiguous(s, kAll, DType::kU8, 404, 0, 3);
  std::vector<double> v(100000, 1.0);
  add(s, kAll, with_values(v, {100000}, DType::kBool), {});
  v[99999] = 0;
  add(s, kAll, with_values(v, {4, 25000}, DType::kBool), {1});
  add(s, kAll, with_values(v, {25000, 4}, DType::kBool), {0});
  return s;
}

GRAFT_SPEC(ReduceOr) {
  Spec s{PrimitiveId::kReduceOr};
  add(s, kAny, random_array({6, 2}, DType::kBool, 500), {1});
  add(s, kAny, random_array({2, 3, 2}, DType::kBool, 501), {0, 2}, true);
  add(s, kAny, random_array({3, 2}, DType::kI64, 502, 0, 2), {0});
  add(s, kAny, with_values({0, NAN, 0, 0, 0, 0}, {2, 3}, DType::kF32), {1});
  add(s, kAny, random_array({0, 3}, DType::kBool, 503), {0});  // empty: false
  add_noncontiguous(s, kAny, DType::kF64, 504, -1, 1);
  std::vector<double> v(100000, 0.0);
  add(s, kAny, with_values(v, {100000}, DType::kBool), {});
  v[77777] = 1;
  add(s, kAny, with_values(v, {100000}, DType::kBool), {});
  add(s, kAny, with_values(v, {25000, 4}, DType::kBool), {0});
  return s;
}

}  // namespace graft::spec
