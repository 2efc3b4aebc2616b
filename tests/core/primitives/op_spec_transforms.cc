// The op-spec table, extended to transforms: every case of every primitive's spec is checked
//  - jvp against central finite differences (f64 tight, f32 loose), vjp against jvp by the
//    transpose identity <c, J t> == <J^T c, t>, and second order (the jvp of a vjp) against
//    finite differences, in f64;
//  - vmap against a loop that slices, applies and stacks, for in_axes 0, 1 and -1 on every
//    argument and mixes with unbatched (none) arguments.
// A case skips a check only with a stated reason (Case::skip_grad / skip_vmap).
#include <cmath>
#include <random>

#include "core/interpreters/ad.h"
#include "core/interpreters/batching.h"
#include "core/lax/util.h"
#include "core/ir/primitive.h"
#include "core/primitives/collective.h"
#include "gtest/gtest.h"
#include "tests/core/primitives/specs/spec.h"
#include "transforms/jit.h"

namespace graft::spec {
namespace {

FlatFn flat(const Case& c) {
  return [fn = c.fn](const std::vector<Array>& in) { return std::vector<Array>{fn(in)}; };
}

// Deterministic direction with the shape and dtype of x (zero tangent for non-floats).
Array direction(const Array& x, uint32_t seed) {
  if (!is_floating(x.dtype())) return Array();
  return random_array(x.shape(), x.dtype(), seed, -1.0, 1.0);
}

double dot_all(const Array& a, const Array& b) {
  if (!a.valid() || !b.valid()) return 0.0;
  std::vector<double> va = values_of(a), vb = values_of(b);
  double s = 0;
  for (size_t i = 0; i < va.size(); ++i) s += va[i] * vb[i];
  return s;
}

bool all_finite(const std::vector<double>& v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

std::vector<Array> shifted(const std::vector<Array>& xs, const std::vector<Array>& ts, double h) {
  std::vector<Array> out;
  for (size_t i = 0; i < xs.size(); ++i) {
    out.push_back(ts[i].valid()
                      ? detail::convert(xs[i] + ts[i] * h, xs[i].dtype(), xs[i].weak_type())
                      : xs[i]);
  }
  return out;
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 1.0 + max_abs(want);
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]) && std::isnan(got[i])) continue;
    ASSERT_NEAR(got[i], want[i], tol * scale) << what << " at flat index " << i;
  }
}

class OpSpecGradTest : public ::testing::TestWithParam<int> {};

TEST_P(OpSpecGradTest, JvpVjpAndSecondOrderMatchFiniteDifferences) {
  auto it = registry().find(static_cast<PrimitiveId>(GetParam()));
  if (it == registry().end()) GTEST_SKIP() << "no spec (reported by EveryPrimitiveHasASpec)";
  Spec spec = it->second();
  int checked = 0;
  for (const Case& c : spec.cases) {
    SCOPED_TRACE(c.name);
    if (!c.skip_grad.empty()) continue;  // reason stated in the spec
    FlatFn f = flat(c);
    std::vector<Array> ts;
    bool any_float_in = false, f64 = true, f32 = true;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      ts.push_back(direction(c.inputs[i], 1000 + i));
      if (ts.back().valid()) {
        any_float_in = true;
        f64 = f64 && c.inputs[i].dtype() == DType::kF64;
        f32 = f32 && c.inputs[i].dtype() == DType::kF32;
      }
    }
    Array y = c.fn(c.inputs);
    bool float_out = is_floating(y.dtype());
    // Finite differences are checked in f64 (tight) and f32 (loose); at 8-11 mantissa bits
    // (bf16, f16) they measure rounding, not derivatives: those cases are not differentiated
    // here (every floating spec also has f32 and f64 cases).
    bool precise =
        any_float_in && (f64 || f32) && (y.dtype() == DType::kF64 || y.dtype() == DType::kF32);
    if (any_float_in && !float_out) {
      // Not differentiable (comparisons, argmax...): the derivative is explicitly zero.
      auto [outs, touts] = detail::jvp_flat(f, c.inputs, ts);
      EXPECT_EQ(max_abs(values_of(astype(touts[0], DType::kF64))), 0.0);
      detail::VjpResult v = detail::vjp_flat(f, c.inputs);
      std::vector<Array> cts = v.pullback({Array()});
      for (size_t i = 0; i < cts.size(); ++i) {
        if (is_floating(c.inputs[i].dtype())) EXPECT_EQ(max_abs(values_of(cts[i])), 0.0);
      }
      ++checked;
      continue;
    }
    if (!any_float_in || !float_out || !precise) continue;
    DType d = f64 ? DType::kF64 : DType::kF32;
    if (!all_finite(values_of(y))) continue;  // outside the domain: nothing to differentiate
    // First order: jvp vs central differences.
    auto [outs, touts] = detail::jvp_flat(f, c.inputs, ts);
    double h = d == DType::kF64 ? 1e-6 : 3e-3;
    double tol = d == DType::kF64 ? 1e-6 : 3e-2;
    std::vector<double> plus = values_of(c.fn(shifted(c.inputs, ts, h)));
    std::vector<double> minus = values_of(c.fn(shifted(c.inputs, ts, -h)));
    std::vector<double> fd(plus.size());
    for (size_t i = 0; i < fd.size(); ++i) fd[i] = (plus[i] - minus[i]) / (2 * h);
    if (!all_finite(fd)) continue;
    std::vector<double> jt = values_of(touts[0]);
    expect_close(jt, fd, tol, "jvp vs finite differences");
    // vjp by transposition: <c, J t> == <J^T c, t>.
    Array ct = random_array(y.shape(), y.dtype(), 77, -1.0, 1.0);
    detail::VjpResult v = detail::vjp_flat(f, c.inputs);
    std::vector<Array> cts = v.pullback({ct});
    double lhs = dot_all(ct, touts[0]), rhs = 0;
    for (size_t i = 0; i < cts.size(); ++i) rhs += dot_all(cts[i], ts[i]);
    double scale = 1 + std::fabs(lhs);
    EXPECT_NEAR(lhs, rhs, (d == DType::kF64 ? 1e-9 : 1e-4) * scale * (1 + values_of(ct).size()))
        << "vjp is not the transpose of jvp";
    ++checked;
    if (d != DType::kF64) continue;
    // Second order: g(x) = <vjp(x)(c), t>; its jvp along t2 vs finite differences.
    FlatFn g = [&](const std::vector<Array>& xs) {
      detail::VjpResult vv = detail::vjp_flat(f, xs);
      std::vector<Array> gs = vv.pullback({ct});
      Array acc = zeros({}, DType::kF64);
      for (size_t i = 0; i < gs.size(); ++i) {
        if (ts[i].valid()) acc = acc + sum(gs[i] * ts[i]);
      }
      return std::vector<Array>{acc};
    };
    std::vector<Array> t2;
    for (size_t i = 0; i < c.inputs.size(); ++i) t2.push_back(direction(c.inputs[i], 2000 + i));
    auto [g0, gt] = detail::jvp_flat(g, c.inputs, t2);
    double gp = values_of(g(shifted(c.inputs, t2, h))[0])[0];
    double gm = values_of(g(shifted(c.inputs, t2, -h))[0])[0];
    double fd2 = (gp - gm) / (2 * h);
    if (std::isfinite(fd2)) {
      EXPECT_NEAR(values_of(gt[0])[0], fd2, 1e-5 * (1 + std::fabs(fd2)))
          << "second order (jvp of vjp) vs finite differences";
    }
  }
  RecordProperty("grad_checked_cases", checked);
  bool all_skipped_with_reason = true;
  bool any_float = false;
  for (const Case& c : spec.cases) {
    all_skipped_with_reason = all_skipped_with_reason && !c.skip_grad.empty();
    for (const Array& x : c.inputs) any_float = any_float || is_floating(x.dtype());
  }
  if (any_float && !all_skipped_with_reason) {
    EXPECT_GT(checked, 0) << "no case of this spec could be differentiated: add an f32 or f64 "
                             "case, or state in skip_grad why not";
  }
}

// Every primitive states its rules explicitly: calling its jvp, vjp and batching rules on a
// real application never hits the "has no rule" default, even for integer-only primitives
// whose derivatives the drivers never ask for.
TEST(OpSpecRules, EveryPrimitiveDefinesJvpVjpAndBatchingRules) {
  for (auto& [id, make] : registry()) {
    Spec spec = make();
    SCOPED_TRACE(kPrimitiveNames[static_cast<int>(id)]);
    const Case& c = spec.cases.front();
    Array y = c.fn(c.inputs);
    // Find an application of the primitive in the case's graph, or in a body there (a
    // collective runs inside pmap: its rules are then called on placeholders of its inputs,
    // with its axes bound as they were when the body was traced).
    std::vector<const Node*> stack{y.node().get()};
    std::shared_ptr<const Primitive> prim;
    std::vector<Array> ins;
    std::function<bool(const Program&)> search_body = [&](const Program& b) {
      for (const Instr& instr : b.instrs) {
        if (instr.prim->id() == id) {
          prim = instr.prim;
          for (int v : instr.in) ins.push_back(Array::placeholder(b.avals[v]));
          return true;
        }
        for (const SubProgram& sub : instr.prim->sub_programs()) {
          if (search_body(*sub.program)) return true;
        }
      }
      return false;
    };
    while (!stack.empty() && prim == nullptr) {
      const Node* n = stack.back();
      stack.pop_back();
      if (n->primitive && n->primitive->id() == id) {
        prim = n->primitive;
        ins = n->inputs;
        break;
      }
      if (n->primitive) {
        for (const SubProgram& sub : n->primitive->sub_programs()) {
          if (search_body(*sub.program)) break;
        }
      }
      for (const Array& in : n->inputs) stack.push_back(in.node().get());
    }
    ASSERT_NE(prim, nullptr);
    const Primitive& p = *prim;
    std::vector<std::unique_ptr<AxisScope>> bound;
    if (const auto* c = dynamic_cast<const Collective*>(&p)) {
      for (size_t k = 0; k < c->axes().size(); ++k) {
        bound.push_back(std::make_unique<AxisScope>(c->axes()[k], c->sizes()[k]));
      }
    }
    // Re-apply the primitive so its outputs are arrays of one node.
    std::vector<Array> rebuilt = graft::bind(prim, ins);
    std::vector<Array> tangents(ins.size());
    std::vector<Array> cts(rebuilt.size());
    for (size_t i = 0; i < rebuilt.size(); ++i) {
      if (is_floating(rebuilt[i].dtype())) cts[i] = zeros_like(rebuilt[i]);
    }
    // pure_callback's rules are an explicit error once a derivative is asked for (as in JAX).
    const bool no_derivative = p.id() == PrimitiveId::kPureCallback;
    if (p.id() == PrimitiveId::kCustomVjpCall) {
      // Its rule is an explicit error: forward mode of a custom_vjp function is undefined.
      EXPECT_THROW(p.jvp(ins, tangents, rebuilt), Error);
    } else {
      EXPECT_NO_THROW(p.jvp(ins, tangents, rebuilt));
      bool any_tangent = false;
      for (size_t i = 0; i < ins.size(); ++i) {
        if (is_floating(ins[i].dtype())) tangents[i] = zeros_like(ins[i]);
        any_tangent = any_tangent || tangents[i].valid();
      }
      if (no_derivative && any_tangent) {
        EXPECT_THROW(p.jvp(ins, tangents, rebuilt), Error);
      } else {
        EXPECT_NO_THROW(p.jvp(ins, tangents, rebuilt));
      }
    }
    bool any_ct = false;
    for (const Array& ct : cts) any_ct = any_ct || ct.valid();
    if (p.id() == PrimitiveId::kWhileLoop || (no_derivative && any_ct)) {
      // Its reverse rule is an explicit error: the trip count is dynamic (as in JAX).
      EXPECT_THROW(p.vjp(ins, rebuilt, cts), Error);
    } else {
      EXPECT_NO_THROW(p.vjp(ins, rebuilt, cts));
    }
    if (!ins.empty()) {
      std::vector<Array> batched;
      for (const Array& x : ins) batched.push_back(expand_dims(x, {0}));
      EXPECT_NO_THROW(p.vmap(batched, std::vector<int>(ins.size(), 0)));
    }
  }
}

class OpSpecVmapTest : public ::testing::TestWithParam<int> {};

// The b-th member of the batch: floating inputs scaled; integer inputs (start and gather
// indices, group sizes, switch indices, keys...) shifted by -7 (b = 1) and +5 (b = 2), so that
// members differ and indices go negative and out of range, and a batching rule that mishandles
// a batched index operand fails (unsigned values wrap; a signed input the shift would take
// out of its dtype's range stays as it is). Bools stay as they are.
Array member(const Array& x, int b) {
  if (is_floating(x.dtype())) {
    return detail::convert(x * (1.0 + 0.1 * b), x.dtype(), x.weak_type());
  }
  if (!is_integral(x.dtype()) || b == 0) return x;
  const double shift = b == 1 ? -7.0 : 5.0;
  const int bits = 8 * static_cast<int>(dtype_size(x.dtype()));
  const bool wraps = is_unsigned(x.dtype());
  const double span = std::ldexp(1.0, std::min(bits, 53));
  std::vector<double> v = values_of(x);
  for (double& e : v) {
    e += shift;
    if (wraps) {
      e = std::fmod(e + span, span);
    } else if (std::fabs(e) >= span / 2) {
      return x;  // near the dtype's limits: data, not an index
    }
  }
  return detail::convert(make(v, x.shape(), x.dtype()), x.dtype(), x.weak_type());
}

TEST_P(OpSpecVmapTest, VmapMatchesALoop) {
  auto it = registry().find(static_cast<PrimitiveId>(GetParam()));
  if (it == registry().end()) GTEST_SKIP() << "no spec (reported by EveryPrimitiveHasASpec)";
  Spec spec = it->second();
  constexpr int kB = 3;
  for (const Case& c : spec.cases) {
    SCOPED_TRACE(c.name);
    if (!c.skip_vmap.empty()) continue;  // reason stated in the spec
    std::vector<std::vector<Array>> members(kB);
    for (int b = 0; b < kB; ++b)
      for (const Array& x : c.inputs) members[b].push_back(member(x, b));
    std::vector<Array> loop;
    for (int b = 0; b < kB; ++b) loop.push_back(c.fn(members[b]));
    std::vector<double> want = values_of(stack(loop, 0));
    double tol = std::max(c.rtol, default_rtol(loop[0].dtype()) * 4);
    // in_axes patterns: all 0, all 1, all -1, and each argument left unbatched in turn.
    std::vector<std::vector<int>> patterns;
    const size_t n = c.inputs.size();
    for (int axis : {0, 1, -1}) {
      std::vector<int> p(n);
      bool ok = true;
      for (size_t i = 0; i < n; ++i) {
        int r = c.inputs[i].ndim() + 1;
        int a = axis < 0 ? axis + r : axis;
        ok = ok && a >= 0 && a < r;
        p[i] = a;
      }
      if (ok) patterns.push_back(p);
    }
    if (n == 0) patterns.push_back({});  // nothing to map: axis_size gives the batch
    for (size_t skip = 0; n > 1 && skip < n; ++skip) {
      std::vector<int> p(n, 0);
      p[skip] = -1;
      patterns.push_back(p);
    }
    for (const auto& p : patterns) {
      std::vector<Array> args;
      std::vector<std::vector<Array>> ref_members = members;
      for (size_t i = 0; i < n; ++i) {
        if (p[i] < 0) {
          args.push_back(c.inputs[i]);
          for (int b = 0; b < kB; ++b) ref_members[b][i] = c.inputs[i];
          continue;
        }
        std::vector<Array> slices;
        for (int b = 0; b < kB; ++b) slices.push_back(members[b][i]);
        args.push_back(stack(slices, p[i]));
      }
      std::vector<double> ref = want;
      if (std::find(p.begin(), p.end(), -1) != p.end()) {
        std::vector<Array> l;
        for (int b = 0; b < kB; ++b) l.push_back(c.fn(ref_members[b]));
        ref = values_of(stack(l, 0));
      }
      std::string what = "in_axes (";
      for (int a : p) what += (a < 0 ? std::string("none") : std::to_string(a)) + ",";
      what += ")";
      detail::VmapResult r =
          detail::vmap_flat(flat(c), args, p, n == 0 ? std::optional<int64_t>(kB) : std::nullopt);
      Array out = detail::move_batch_axis(r.outputs[0], r.dims[0], 0, kB);
      std::vector<double> got = values_of(out);
      ASSERT_EQ(got.size(), ref.size()) << what;
      for (size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(ref[i])) {
          EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i;
        } else if (std::isinf(ref[i])) {
          EXPECT_EQ(got[i], ref[i]) << what << " at " << i;
        } else {
          ASSERT_NEAR(got[i], ref[i], c.atol + tol * (1 + std::fabs(ref[i])))
              << what << " at " << i;
        }
      }
    }
  }
}

class OpSpecJit : public ::testing::TestWithParam<int> {};

// Every case also runs under jit (compiled: passes, fusion, buffer planning) and must equal
// eager evaluation: a first call (compile) and a second (cache hit).
TEST_P(OpSpecJit, JitMatchesEager) {
  auto it = registry().find(static_cast<PrimitiveId>(GetParam()));
  if (it == registry().end()) GTEST_SKIP() << "no spec (reported by EveryPrimitiveHasASpec)";
  Spec spec = it->second();
  for (const Case& c : spec.cases) {
    SCOPED_TRACE(c.name);
    auto fn = c.fn;
    auto jitted = jit([fn](const std::vector<Array>& in) { return fn(in); });
    std::vector<double> want = values_of(c.fn(c.inputs));
    for (int call = 0; call < 2; ++call) {
      Array out = jitted(c.inputs);
      std::vector<double> got = values_of(out);
      ASSERT_EQ(got.size(), want.size());
      double tol = std::max(c.rtol, default_rtol(out.dtype()) * 4);
      for (size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(want[i])) {
          EXPECT_TRUE(std::isnan(got[i])) << "call " << call << " at " << i;
        } else if (std::isinf(want[i])) {
          EXPECT_EQ(got[i], want[i]) << "call " << call << " at " << i;
        } else if (want[i] == 0 && got[i] == 0) {
          EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i]))
              << "call " << call << ": sign of zero at " << i;
        } else {
          ASSERT_NEAR(got[i], want[i], c.atol + tol * std::fabs(want[i]))
              << "call " << call << " at " << i;
        }
      }
    }
  }
}

auto name_of = [](const ::testing::TestParamInfo<int>& info) {
  return std::string(kPrimitiveNames[info.param]);
};
INSTANTIATE_TEST_SUITE_P(AllPrimitives, OpSpecGradTest, ::testing::Range(0, kNumPrimitives),
                         name_of);
INSTANTIATE_TEST_SUITE_P(AllPrimitives, OpSpecVmapTest, ::testing::Range(0, kNumPrimitives),
                         name_of);
INSTANTIATE_TEST_SUITE_P(AllPrimitives, OpSpecJit, ::testing::Range(0, kNumPrimitives), name_of);

}  // namespace
}  // namespace graft::spec
