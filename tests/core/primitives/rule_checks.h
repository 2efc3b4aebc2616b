// Shared checks for the *_rules_test files: transform rules (jvp, vjp, vmap) called directly
// on concrete arrays. jvp and vjp are compared with Jacobians from central finite differences
// in f64, second order by differentiating the rules through the drivers, vmap against a loop
// of the primitive over the batch slices. Families differ only in details (seeds, ranges,
// tolerances, NaN handling), which the option structs below spell out.
#ifndef GRAFT_TESTS_CORE_RULE_CHECKS_H_
#define GRAFT_TESTS_CORE_RULE_CHECKS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/array.h"
#include "core/ir/primitive.h"

namespace graft::testing_rules {

using Prim = std::shared_ptr<const Primitive>;
using Arrays = std::vector<Array>;

constexpr int kUnbatched = 1000;  // an in_axes entry meaning "not batched"

// The primitive of y's node (y must come straight from the op under test).
Prim prim_of(const Array& y, PrimitiveId id);

// Values in [lo, hi) of the given dtype (rounded down for integers, > midpoint for bool).
Array random_array(const Shape& s, DType dtype, uint32_t seed, double lo = -1, double hi = 1);
Array f64(const Shape& s, uint32_t seed = 3, double lo = -1, double hi = 1);
Array ints(std::vector<int32_t> v, Shape s);

std::vector<double> vals(const Array& a);
// All values of the arrays, concatenated (an empty Array counts as `like`'s zeros).
std::vector<double> flat(const Arrays& xs, const Arrays& like = {});
double inner(const std::vector<double>& a, const std::vector<double>& b);

// |got - want| <= tol (1 + |want|) elementwise. A NaN in `want` fails unless nan_equal, where
// it asks for a NaN in `got`.
void expect_near(const std::vector<double>& got, const std::vector<double>& want,
                 const std::string& what, double tol = 1e-7, bool nan_equal = false);

// (f(x + h d) - f(x - h d)) / 2h, h = 1e-6, with the entries `pos` of x moved along d,
// concatenated over f's outputs. With zero_nan, outputs that are NaN at x (a gather's fill
// value: a constant) get 0.
std::vector<double> fd(const std::function<Arrays(const Arrays&)>& f, const Arrays& x,
                       const std::vector<size_t>& pos, const Arrays& d, bool zero_nan = true);

std::vector<size_t> float_positions(const Arrays& in);

struct AdCheck {
  uint32_t seed = 1;
  uint32_t tangent_offset = 10;    // t_i = f64(in_i's shape, seed + tangent_offset + i)
  uint32_t cotangent_offset = 50;  // ct_o = f64(out_o's shape, seed + cotangent_offset + o)
  // Diagonal Jacobian (elementwise): one FD pass along all-ones per input gives it.
  bool diagonal = false;
  bool fd_zero_nan = true;  // see fd
  bool nan_equal = false;   // see expect_near
  // vjp of all-zero (symbolic) cotangents gives zero cotangents.
  bool check_zero_cotangents = true;
  // jvp outputs must be valid, and <ct, jvp(t_i)> == <vjp(ct)_i, t_i> one input at a time.
  bool check_each_input = false;
};

// First order: jvp(t) == J t and vjp(ct) == J^T ct, with J by finite differences (column by
// column, or the diagonal); non-float inputs get no cotangent; all-zero tangents give zero
// tangents.
void check_ad(const Prim& p, const Arrays& in, const AdCheck& o = {});
inline void check_ad(const Prim& p, const Arrays& in, uint32_t seed) {
  check_ad(p, in, AdCheck{.seed = seed});
}

// Second order: the rules are differentiable. G(x, ct) = vjp(x; ct) and H(x, t) = jvp(x; t)
// are differentiated by the drivers (which apply the rules to the rules' graphs) w.r.t. the
// float primals and ct / t, and compared with finite differences of G and H; the drivers'
// pullbacks are checked against their jvps (<pullback(c), s> == <c, jvp(s)>).
void check_ad2(const Prim& p, const Arrays& in, uint32_t seed = 1);

// Slice k of x along axis a.
Array at(const Array& x, int a, int64_t k);

// Equal values, NaN matching NaN.
bool same_values(const std::vector<double>& a, const std::vector<double>& b);

struct VmapCheck {
  // Batched args stack `b` variants of in[i] drawn in these ranges (unsigned integers from 0;
  // bool counts as float).
  double int_lo = -3, int_hi = 8;
  double float_lo = -1, float_hi = 1;
  uint32_t seed = 7;  // variant k of arg i: seed + 10 i + k
  int64_t b = 3;
  // Floating outputs: 0 = bitwise equal, else expect_near with this tolerance (batched kernels
  // may sum in another order). Other outputs are always compared exactly.
  double float_tol = 0;
  bool nan_equal = true;               // a NaN matches a NaN
  bool expect_same_primitive = false;  // the batched output comes from p itself
};

// vmap of p with in_axes (kUnbatched, or an axis; negative counts from the end) against a
// loop over the batch.
void check_vmap(const Prim& p, const Arrays& in, const std::vector<int>& in_axes,
                const VmapCheck& o = {});

// Every in_axes combination of {unbatched, 0, 1, -1} per argument (at least one batched).
std::vector<std::vector<int>> axis_mixes(size_t n);

}  // namespace graft::testing_rules

#endif  // GRAFT_TESTS_CORE_RULE_CHECKS_H_
