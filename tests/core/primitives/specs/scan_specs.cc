// Specs of argmax, argmin and cumsum through the public ops. References are loops in double
// (tests/core/primitives/specs/reduce_ref.h): first occurrence on ties, first NaN wins; running sums
// rounded once per output.
#include "absl/strings/str_cat.h"
#include "tests/core/primitives/specs/jax_parity_cases.h"
#include "tests/core/primitives/specs/reduce_ref.h"

namespace graft::spec {
namespace {

using Pre = std::function<Array(const Array&)>;

Array identity(const Array& x) { return x; }

std::string axis_str(std::optional<int64_t> axis) {
  return axis ? absl::StrCat("axis=", *axis) : "axis=None";
}

// argmax/argmin of pre(x) whose host value is h.
void add_arg(Spec& s, bool kmax, const Array& x, std::optional<int64_t> axis, bool keepdims,
             const Host& h, const Pre& pre = identity, const std::string& extra = "") {
  Expected e;
  if (axis) {
    int a = static_cast<int>(*axis < 0 ? *axis + h.shape.size() : *axis);
    e = ref_arg(h, a, kmax, keepdims);
  } else {
    e = ref_arg(Host{h.v, {numel(h.shape)}}, 0, kmax, false);
    if (keepdims) e.shape = Shape(h.shape.size(), 1);
  }
  s.cases.push_back({absl::StrCat(dtype_name(x.dtype()), shape_str(h.shape), " ", axis_str(axis),
                                  keepdims ? " keepdims " : " ", extra),
                     {x},
                     [kmax, axis, keepdims, pre](const std::vector<Array>& in) {
                       return kmax ? argmax(pre(in[0]), axis, keepdims)
                                   : argmin(pre(in[0]), axis, keepdims);
                     },
                     e});
}

void add_arg(Spec& s, bool kmax, const Array& x, std::optional<int64_t> axis,
             bool keepdims = false) {
  add_arg(s, kmax, x, axis, keepdims, host_of(x));
}

Spec arg_spec(PrimitiveId id, bool kmax) {
  Spec s{id};
  uint32_t seed = kmax ? 600 : 700;
  for (DType d : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16, DType::kI32, DType::kI64,
                  DType::kU8, DType::kU32, DType::kBool}) {
    add_arg(s, kmax, random_array({3, 4, 5}, d, ++seed, -50, 50), 1);
    add_arg(s, kmax, random_array({3, 4, 5}, d, ++seed, -50, 50), -1);
    add_arg(s, kmax, random_array({3, 4, 5}, d, ++seed, -50, 50), 0, true);
    add_arg(s, kmax, random_array({6, 8}, d, ++seed, 0, 3), 1);  // many ties
    add_arg(s, kmax, random_array({6, 8}, d, ++seed, 0, 3), std::nullopt);
  }
  add_arg(s, kmax, random_array({2, 3, 4}, DType::kF32, ++seed), std::nullopt, true);
  add_arg(s, kmax, random_array({}, DType::kF32, ++seed), std::nullopt);  // a scalar: 0
  add_arg(s, kmax, random_array({0, 4}, DType::kF32, ++seed), 1);         // no outputs
  double inf = INFINITY;
  Array special =
      make({1, NAN, 3, NAN, NAN, 5, 5, 1, 2, 2, 2, 2, -inf, inf, -inf, inf}, {4, 4}, DType::kF32);
  add_arg(s, kmax, special, 1);
  add_arg(s, kmax, special, 0);
  add_arg(s, kmax, make({3, NAN, 1, NAN}, {2, 2}, DType::kBF16), 0);
  // Non-contiguous operands.
  Array t = random_array({5, 7}, DType::kF32, ++seed);
  add_arg(
      s, kmax, t, 1, false, host_transpose(host_of(t), {1, 0}),
      [](const Array& x) { return transpose(x); }, "of transpose");
  Array u = random_array({6, 9}, DType::kI32, ++seed, 0, 4);
  add_arg(
      s, kmax, u, 0, false, host_slice(host_of(u), {1, 0}, {6, 9}, {2, 2}),
      [](const Array& x) {
        return slice(x, {1, 0}, {6, 9}, {2, 2});
      },
      "of strided slice");
  // Rows long enough for the kernel's interleaved lanes: ties and NaNs across lanes.
  add_arg(s, kmax, random_array({3, 100}, DType::kI32, ++seed, 0, 5), 1);
  add_arg(s, kmax, random_array({5, 70}, DType::kBool, ++seed), -1);
  std::vector<double> w = random_values(200, DType::kF32, ++seed, -1, 1);
  w[37] = w[18] = NAN;
  add_arg(s, kmax, make(w, {200}, DType::kF32), 0);
  // Long rows (split across threads): ties and NaNs in different pieces; first wins.
  std::vector<double> v = random_values(100000, DType::kF32, ++seed, -1, 1);
  double extreme = kmax ? 5 : -5;
  v[30000] = v[80000] = extreme;
  add_arg(s, kmax, make(v, {100000}, DType::kF32), 0);
  v[60000] = v[90000] = NAN;
  add_arg(s, kmax, make(v, {100000}, DType::kF32), 0);
  add_arg(s, kmax, make(v, {4, 25000}, DType::kF32), 1);
  add_arg(s, kmax, random_array({50000, 3}, DType::kI32, ++seed, 0, 1000), 0);
  add_arg(s, kmax, random_array({40, 600}, DType::kF64, ++seed), 0);
  return s;
}

// cumsum of pre(x) whose host value is h.
void add_cumsum(Spec& s, const Array& x, std::optional<int64_t> axis, bool reverse, const Host& h,
                const Pre& pre = identity, const std::string& extra = "", double rtol = -1) {
  DType d = x.dtype();
  DType out = d == DType::kBool ? DType::kI32 : d;  // jnp.cumsum: only bool promotes
  Expected e;
  if (axis) {
    int a = static_cast<int>(*axis < 0 ? *axis + h.shape.size() : *axis);
    e = ref_cumsum(h, a, reverse, out);
  } else {
    e = ref_cumsum(Host{h.v, {numel(h.shape)}}, 0, reverse, out);
  }
  double atol = 0;
  if (is_floating(out)) {
    // Rounding of the running sum scales with the running sum of |x|.
    Host ah{h.v, h.shape};
    for (double& a : ah.v) a = std::fabs(a);
    atol = 4 * acc_eps(out) * abs_sum_max(ah, {});
  }
  s.cases.push_back({absl::StrCat(dtype_name(d), shape_str(h.shape), " ", axis_str(axis),
                                  reverse ? " reverse " : " ", extra),
                     {x},
                     [axis, reverse, pre](const std::vector<Array>& in) {
                       return cumsum(pre(in[0]), axis, reverse);
                     },
                     e,
                     rtol >= 0 ? rtol : default_rtol(out),
                     atol});
}

void add_cumsum(Spec& s, const Array& x, std::optional<int64_t> axis, bool reverse = false) {
  add_cumsum(s, x, axis, reverse, host_of(x));
}

}  // namespace

GRAFT_SPEC(Argmax) { return arg_spec(PrimitiveId::kArgmax, true); }
GRAFT_SPEC(Argmin) { return arg_spec(PrimitiveId::kArgmin, false); }

GRAFT_SPEC(Cumsum) {
  Spec s{PrimitiveId::kCumsum};
  uint32_t seed = 800;
  for (DType d : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16, DType::kI32, DType::kI64,
                  DType::kU32}) {
    add_cumsum(s, random_array({3, 4}, d, ++seed, -5, 5), 1);
    add_cumsum(s, random_array({3, 4}, d, ++seed, -5, 5), 0, true);
    add_cumsum(s, random_array({2, 3, 4}, d, ++seed, -5, 5), -2, true);
    add_cumsum(s, random_array({2, 3}, d, ++seed, -5, 5), std::nullopt);
  }
  add_cumsum(s, random_array({50, 2}, DType::kU8, ++seed, 0, 255), 0);  // u8 wraps in u8
  add_cumsum(s, random_array({4, 5}, DType::kBool, ++seed), 1, true);   // bool as i32
  add_cumsum(s, random_array({5, 40}, DType::kF16, ++seed, 0, 4), 1);   // f32 accumulation
  add_cumsum(s, random_array({}, DType::kF32, ++seed), std::nullopt);   // scalar: (1,)
  add_cumsum(s, random_array({0, 3}, DType::kF32, ++seed), 0);
  add_cumsum(s, random_array({3, 0}, DType::kI32, ++seed), 1);
  Array t = random_array({4, 6}, DType::kF32, ++seed);
  add_cumsum(
      s, t, 1, false, host_transpose(host_of(t), {1, 0}),
      [](const Array& x) { return transpose(x); }, "of transpose");
  Array u = random_array({6, 9}, DType::kI64, ++seed, -9, 9);
  add_cumsum(
      s, u, 0, true, host_slice(host_of(u), {0, 1}, {6, 9}, {2, 3}),
      [](const Array& x) {
        return slice(x, {0, 1}, {6, 9}, {2, 3});
      },
      "of strided slice");
  // Long scans (the parallel two-phase path where few scans are long) and column blocks.
  add_cumsum(s, random_array({200000}, DType::kF64, ++seed, -1, 1), 0);
  add_cumsum(s, random_array({200000}, DType::kI32, ++seed, -100, 100), 0, true);
  Array big = random_array({70000, 3}, DType::kF32, ++seed, 0.5, 1);
  add_cumsum(s, big, 0, true, host_of(big), identity, "", /*sequential f32 sums*/ 2e-4);
  s.cases.back().skip_grad =
      "f32 running sums up to 5e4 (ulp 4e-3): central differences at h=3e-3 measure rounding; "
      "the rule is checked in f64 on the 200000-long case";
  add_cumsum(s, random_array({3, 70000}, DType::kI64, ++seed, -50, 50), 1);
  add_cumsum(s, random_array({5, 600}, DType::kF32, ++seed), 0);
  add_jax_cumsum_cases(s);
  return s;
}

}  // namespace graft::spec
