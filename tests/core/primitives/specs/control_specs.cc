// Specs of the control-flow primitives (scan, cond, while_loop) through scan, cond,
// switch_case, while_loop and fori_loop. References are plain loops in double.
#include <cmath>

#include "tests/core/primitives/specs/spec.h"
#include "transforms/control_flow.h"

namespace graft::spec {
namespace {

std::string dn(DType d) { return dtype_name(d); }

Expected rounded(Shape shape, DType d, std::vector<double> v) {
  for (double& x : v) x = round_to(x, d);
  return {std::move(shape), d, std::move(v)};
}

// c <- tanh(c * 0.5 + x) over the rows of xs (n, m); returns the stacked carries (n, m)
// scaled by the final carry's sum.
Expected ref_rnn(const Array& init, const Array& xs, bool reverse) {
  std::vector<double> c = values_of(init), x = values_of(xs);
  int64_t n = xs.shape()[0], m = xs.shape()[1];
  std::vector<double> ys(n * m);
  for (int64_t s = 0; s < n; ++s) {
    int64_t i = reverse ? n - 1 - s : s;
    for (int64_t j = 0; j < m; ++j) ys[i * m + j] = c[j] = std::tanh(c[j] * 0.5 + x[i * m + j]);
  }
  double total = 0;
  for (double v : c) total += v;
  for (double& y : ys) y *= total;
  return rounded({n, m}, xs.dtype(), ys);
}

Array rnn(const Array& init, const Array& xs, bool reverse) {
  auto [c, ys] = scan(
      [](const Array& c, const Array& x) {
        Array n = tanh(c * 0.5 + x);
        return std::pair{n, n};
      },
      init, xs, {.reverse = reverse});
  return ys * sum(c);
}

}  // namespace

GRAFT_SPEC(Scan) {
  Spec s{PrimitiveId::kScan};
  for (DType d : {DType::kF64, DType::kF32}) {
    for (bool rev : {false, true}) {
      Array init = random_array({3}, d, 51), xs = random_array({4, 3}, d, 52);
      s.cases.push_back({dn(d) + (rev ? " reverse" : "") + " rnn",
                         {init, xs},
                         [rev](const std::vector<Array>& in) { return rnn(in[0], in[1], rev); },
                         ref_rnn(init, xs, rev),
                         default_rtol(d) * 8,
                         default_rtol(d)});
    }
  }
  // Non-contiguous xs (a transpose), empty length, and an i32 counter in a pytree carry.
  Array base = random_array({3, 4}, DType::kF64, 53), init = random_array({3}, DType::kF64, 54);
  s.cases.push_back({"f64 transposed xs",
                     {init, base},
                     [](const std::vector<Array>& in) {
                       return rnn(in[0], transpose(in[1], std::vector<int>{1, 0}), false);
                     },
                     ref_rnn(init, transpose(base, std::vector<int>{1, 0}), false),
                     1e-12,
                     1e-12});
  Array empty = zeros({0, 3}, DType::kF64);
  s.cases.push_back({"f64 length 0",
                     {init, empty},
                     [](const std::vector<Array>& in) { return rnn(in[0], in[1], false); },
                     Expected{{0, 3}, DType::kF64, {}},
                     0,
                     0});
  Array x = random_array({2}, DType::kF64, 55);
  std::vector<double> xv = values_of(x), want;
  for (double v : xv) want.push_back(v * (1 * 2 * 3 * 4 + 1));
  s.cases.push_back({"fori_loop with i32 counter",
                     {x},
                     [](const std::vector<Array>& in) {
                       auto r = fori_loop(
                           1, 5,
                           [](const Array& i, const std::pair<Array, Array>& c) {
                             return std::pair{c.first * astype(i, DType::kF64), c.second + 1};
                           },
                           std::pair{in[0], zeros({}, DType::kI32)});
                       return r.first + in[0] * astype(r.second - 3, DType::kF64);
                     },
                     Expected{{2}, DType::kF64, want},
                     1e-12,
                     0});
  return s;
}

GRAFT_SPEC(Cond) {
  Spec s{PrimitiveId::kCond};
  for (DType d : {DType::kF64, DType::kF32}) {
    for (double shift : {2.0, -2.0}) {
      Array x = random_array({2, 3}, d, 61, -1, 1) + shift;
      Array y = random_array({3}, d, 62);
      std::vector<double> xv = values_of(x), yv = values_of(y), want;
      bool pos = shift > 0;
      for (size_t i = 0; i < xv.size(); ++i) {
        want.push_back(pos ? std::sin(xv[i]) * yv[i % 3] : xv[i] - yv[i % 3] * yv[i % 3]);
      }
      s.cases.push_back(
          {dn(d) + (pos ? " true branch" : " false branch"),
           {x, y},
           [](const std::vector<Array>& in) {
             return cond(
                 sum(in[0]) > 0, [](const Array& a, const Array& b) { return sin(a) * b; },
                 [](const Array& a, const Array& b) { return a - b * b; }, in[0], in[1]);
           },
           rounded({2, 3}, d, want),
           default_rtol(d) * 4,
           default_rtol(d)});
    }
  }
  Array x = random_array({4}, DType::kF64, 63);
  std::vector<double> xv = values_of(x);
  for (int k : {-1, 1, 5}) {
    std::vector<double> want;
    for (double v : xv) want.push_back(k <= 0 ? std::exp(v) : k == 1 ? v * v * v : std::cos(v));
    s.cases.push_back({"switch index " + std::to_string(k),
                       {x},
                       [k](const std::vector<Array>& in) {
                         std::vector<std::function<Array(const Array&)>> bs = {
                             [](const Array& a) { return exp(a); },
                             [](const Array& a) { return a * a * a; },
                             [](const Array& a) { return cos(a); }};
                         return switch_case(Array(k), bs, in[0]);
                       },
                       Expected{{4}, DType::kF64, want},
                       1e-12,
                       1e-14});
  }
  return s;
}

GRAFT_SPEC(WhileLoop) {
  Spec s{PrimitiveId::kWhileLoop};
  for (DType d : {DType::kF64, DType::kF32}) {
    Array x = random_array({3}, d, 71, 0.5, 1.0);
    std::vector<double> v = values_of(x);
    for (;;) {
      double total = 0;
      for (double e : v) total += round_to(e, d);
      if (!(total < 10)) break;
      for (double& e : v) e = round_to(round_to(e * 1.5, d) + 0.25, d);
    }
    Case c{dn(d) + " grow until sum >= 10",
           {x},
           [](const std::vector<Array>& in) {
             return while_loop([](const Array& v) { return sum(v) < 10.0; },
                               [](const Array& v) { return v * 1.5 + 0.25; }, in[0]);
           },
           Expected{{3}, d, v},
           default_rtol(d),
           0};
    c.skip_grad =
        "while_loop has no reverse mode (like JAX); its jvp is checked in "
        "tests/transforms/control_flow_test.cc";
    s.cases.push_back(c);
  }
  return s;
}

}  // namespace graft::spec
