// Collectives under pmap and under vmap with an axis_name: the two agree with each other and
// with JAX. Gradients are checked against vectors JAX recorded under shard_map
// (tools/make_collective_vectors.py, testdata/collective_grads_jax.inc): each member d
// computes sum(sin(op(x_d)) * (d + 1)) and the gradient is of the members' sum, taken as
// grad(sum(pmap(f))), as pmap(grad(f)) and as vmap(grad(f)) with the axis named.
// GRAFT_CPU_DEVICES=4 (BUILD.bazel).
#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"
#include "transforms/control_flow.h"
#include "transforms/jit.h"
#include "transforms/pmap.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

constexpr int kMembers = 4;

struct JaxCase {
  const char* name;
  Shape member_shape;
  double value;
  std::vector<double> grad;
};

const JaxCase kJaxCases[] = {
#include "tests/transforms/testdata/collective_grads_jax.inc"
};

using Op = std::function<Array(const Array&)>;

const std::map<std::string, Op>& ops() {
  static const auto* m = new std::map<std::string, Op>{
      {"psum", [](const Array& x) { return psum(x, {"i"}); }},
      {"psum_of_square", [](const Array& x) { return psum(x * x, {"i"}) * x; }},
      {"all_gather_axis1", [](const Array& x) { return all_gather(x, "i", 1); }},
      {"all_gather_tiled_axis0", [](const Array& x) { return all_gather(x, "i", 0, true); }},
      {"psum_scatter_dim0", [](const Array& x) { return psum_scatter(x, "i", 0); }},
      {"psum_scatter_tiled_dim1", [](const Array& x) { return psum_scatter(x, "i", 1, true); }},
      {"all_to_all_tiled_split0_concat1",
       [](const Array& x) { return all_to_all(x, "i", 0, 1, true); }},
      {"all_to_all_tiled_split1_concat0",
       [](const Array& x) { return all_to_all(x, "i", 1, 0, true); }},
      {"ppermute_shift",
       [](const Array& x) {
         return ppermute(x, "i", {{0, 1}, {1, 2}, {2, 3}});
       }},
      {"ppermute_cycle",
       [](const Array& x) {
         return ppermute(x, "i", {{0, 1}, {1, 2}, {2, 3}, {3, 0}});
       }},
  };
  return *m;
}

// What member d computes: sum(sin(op(x)) * (d + 1)).
std::function<Array(const Array&)> member_loss(const Op& op) {
  return [op](const Array& x) {
    Array w = astype(axis_index("i"), DType::kF64) + 1.0;
    return sum(sin(op(x)) * w);
  };
}

// cos(0.37 k) over [members, member shape], as the generator makes it.
Array jax_input(const Shape& member) {
  Shape s = member;
  s.insert(s.begin(), kMembers);
  return reshape(cos(arange(0.0, static_cast<double>(numel(s)), 1.0, DType::kF64) * 0.37), s);
}

void expect_near(const Array& a, const std::vector<double>& want, double tol,
                 const std::string& what) {
  std::vector<double> got = a.to_vector<double>();
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tol) << what << " at flat index " << i;
  }
}

TEST(CollectivesTest, GradientsMatchJaxShardMap) {
  ASSERT_EQ(std::size(kJaxCases), ops().size());
  for (const JaxCase& c : kJaxCases) {
    SCOPED_TRACE(c.name);
    auto f = member_loss(ops().at(c.name));
    Array x = jax_input(c.member_shape);
    auto total = [&](const Array& v) { return sum(pmap(f, "i")(v)); };
    EXPECT_NEAR(total(x).item<double>(), c.value, 1e-10);
    expect_near(grad(total)(x), c.grad, 1e-10, "grad of the sum of pmap");
    expect_near(pmap(grad(f), "i")(x), c.grad, 1e-10, "pmap of grad");
    expect_near(vmap(grad(f), {0}, {0}, {.axis_name = "i"})(x), c.grad, 1e-10,
                "vmap(axis_name) of grad");
    auto vtotal = [&](const Array& v) { return sum(vmap(f, {0}, {0}, {.axis_name = "i"})(v)); };
    expect_near(grad(vtotal)(x), c.grad, 1e-10, "grad of the sum of vmap(axis_name)");
  }
}

// Forward values: pmap (the kernels exchanging buffers) against vmap with the axis named (the
// batching rules, plain array ops), on every collective with non-trivial parameters.
TEST(CollectivesTest, PmapAndNamedVmapAgree) {
  std::map<std::string, Op> more = ops();
  more["pmax"] = [](const Array& x) { return pmax(x, {"i"}); };
  more["pmin"] = [](const Array& x) { return pmin(x, {"i"}); };
  more["pmean"] = [](const Array& x) { return pmean(x, {"i"}); };
  more["all_to_all_split0_concat1"] = [](const Array& x) { return all_to_all(x, "i", 0, 1); };
  more["all_to_all_split1_concat0"] = [](const Array& x) { return all_to_all(x, "i", 1, 0); };
  more["all_gather_axis0"] = [](const Array& x) { return all_gather(x, "i", 0); };
  more["all_gather_tiled_axis1"] = [](const Array& x) { return all_gather(x, "i", 1, true); };
  more["axis_index_scaled"] = [](const Array& x) {
    return x * astype(axis_index("i"), DType::kF64);
  };
  more["psum_unvarying"] = [](const Array& x) { return x + psum(ones({}, DType::kF64), {"i"}); };
  for (const auto& [name, op] : more) {
    SCOPED_TRACE(name);
    Shape member = name.find("split1") != std::string::npos ? Shape{3, 4} : Shape{4, 4};
    Array x = jax_input(member);
    Array a = pmap(op, "i")(x);
    Array b = vmap(op, {0}, {0}, {.axis_name = "i"})(x);
    ASSERT_EQ(a.shape(), b.shape());
    expect_near(a, b.to_vector<double>(), 1e-12, "pmap vs vmap");
  }
}

// Plain-loop references for the data movement.
TEST(CollectivesTest, ValuesMatchLoops) {
  Array x = reshape(arange(0.0, 24.0, 1.0, DType::kF64), {4, 2, 3});  // member d: x[d]
  std::vector<double> xs = x.to_vector<double>();
  auto at = [&](int d, int i, int j) { return xs[(d * 2 + i) * 3 + j]; };
  // all_to_all, split 0 (size 2? no: needs 4) -> use [4, 4, 2]-shaped members below.
  Array s = pmap([](const Array& v) { return psum(v, {"i"}); }, "i")(x);
  std::vector<double> want_s;
  for (int d = 0; d < 4; ++d)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        want_s.push_back(at(0, i, j) + at(1, i, j) + at(2, i, j) + at(3, i, j));
  expect_near(s, want_s, 0, "psum");
  Array g = pmap([](const Array& v) { return all_gather(v, "i", 1); }, "i")(x);  // [4, 2, 4, 3]
  std::vector<double> want_g;
  for (int d = 0; d < 4; ++d)
    for (int i = 0; i < 2; ++i)
      for (int q = 0; q < 4; ++q)
        for (int j = 0; j < 3; ++j) want_g.push_back(at(q, i, j));
  expect_near(g, want_g, 0, "all_gather axis 1");
  Array p = pmap([](const Array& v) { return ppermute(v, "i", {{0, 2}, {2, 1}}); }, "i")(x);
  std::vector<double> want_p;
  const int src_of[4] = {-1, 2, 0, -1};
  for (int d = 0; d < 4; ++d)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) want_p.push_back(src_of[d] < 0 ? 0.0 : at(src_of[d], i, j));
  expect_near(p, want_p, 0, "ppermute");
  // all_to_all split 0 concat 1 on members of shape [4, 3]: out_d[j][q] = x_q[d][j].
  Array y = reshape(arange(0.0, 48.0, 1.0, DType::kF64), {4, 4, 3});
  std::vector<double> ys = y.to_vector<double>();
  Array t = pmap([](const Array& v) { return all_to_all(v, "i", 0, 1); }, "i")(y);  // [4, 3, 4]
  std::vector<double> want_t;
  for (int d = 0; d < 4; ++d)
    for (int j = 0; j < 3; ++j)
      for (int q = 0; q < 4; ++q) want_t.push_back(ys[(q * 4 + d) * 3 + j]);
  expect_near(t, want_t, 0, "all_to_all");
  // psum_scatter dim 0 on members [4, 3]: out_d[j] = sum_q y_q[d][j].
  Array r = pmap([](const Array& v) { return psum_scatter(v, "i", 0); }, "i")(y);  // [4, 3]
  std::vector<double> want_r;
  for (int d = 0; d < 4; ++d)
    for (int j = 0; j < 3; ++j) {
      double acc = 0;
      for (int q = 0; q < 4; ++q) acc += ys[(q * 4 + d) * 3 + j];
      want_r.push_back(acc);
    }
  expect_near(r, want_r, 0, "psum_scatter");
}

// Central differences of a scalar function of x, in f64.
std::vector<double> finite_diff(const std::function<double(const Array&)>& f, const Array& x) {
  std::vector<double> v = x.to_vector<double>(), g(v.size());
  const double h = 1e-6;
  for (size_t i = 0; i < v.size(); ++i) {
    std::vector<double> up = v, down = v;
    up[i] += h;
    down[i] -= h;
    g[i] = (f(array(up, x.shape())) - f(array(down, x.shape()))) / (2 * h);
  }
  return g;
}

// Where JAX cannot serve as the reference (its own non-tiled all_to_all gradient fails) and
// for pmax / pmin (JAX defines no derivative): finite differences.
TEST(CollectivesTest, GradientsMatchFiniteDifferences) {
  std::map<std::string, Op> cases = {
      {"all_to_all_split0_concat1", [](const Array& x) { return all_to_all(x, "i", 0, 1); }},
      {"all_to_all_split1_concat0", [](const Array& x) { return all_to_all(x, "i", 1, 0); }},
      {"pmax", [](const Array& x) { return pmax(x, {"i"}); }},
      {"pmin", [](const Array& x) { return pmin(x * x, {"i"}); }},
      {"pmean", [](const Array& x) { return pmean(x, {"i"}) * x; }},
  };
  for (const auto& [name, op] : cases) {
    SCOPED_TRACE(name);
    auto f = member_loss(op);
    Array x = jax_input(name.find("split1") != std::string::npos ? Shape{3, 4} : Shape{4, 3});
    auto total = [&](const Array& v) { return sum(pmap(f, "i")(v)); };
    std::vector<double> fd =
        finite_diff([&](const Array& v) { return total(v).item<double>(); }, x);
    expect_near(grad(total)(x), fd, 1e-6, "grad of pmap");
    expect_near(vmap(grad(f), {0}, {0}, {.axis_name = "i"})(x), fd, 1e-6, "vmap of grad");
  }
}

// An argument every member gets whole (in_axes none) does not vary: psum of it is n * x, and
// its gradient sums over the members.
TEST(CollectivesTest, UnmappedArgumentsAreTheSameOnEveryMember) {
  Array x = jax_input({2, 3});
  Array w = array(std::vector<double>{1.5, -2.0, 0.5}, Shape{3});
  auto f = [](const Array& v, const Array& u) { return sum(sin(v * u)) + sum(psum(u, {"i"})); };
  Array out = pmap(f, "i", {0, none})(x, w);
  std::vector<double> o = out.to_vector<double>(), xs = x.to_vector<double>();
  for (int d = 0; d < kMembers; ++d) {
    double want = 4 * 0.0;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        want += std::sin(xs[(d * 2 + i) * 3 + j] * w.to_vector<double>()[j]);
    want += 4 * (1.5 - 2.0 + 0.5);
    EXPECT_NEAR(o[d], want, 1e-12);
  }
  // d/dw of sum_d f(x_d, w) = sum_d sum_i x_d[i, j] cos(x_d[i, j] w_j) + 16 (psum of an
  // unvarying value is 4 w on each of the 4 members). JAX 0.10.2 gives the same both ways
  // (grad of the shard_map's sum, and shard_map of grad with out_specs P()):
  // [16.27807758 15.69541262 16.13944211].
  Array gw = grad([&](const Array& u) { return sum(pmap(f, "i", {0, none})(x, u)); })(w);
  Array gw_member = pmap(grad(f, argnums<1>), "i", {0, none}, {none})(x, w);
  std::vector<double> want(3, 0.0);
  for (int j = 0; j < 3; ++j) {
    for (int d = 0; d < kMembers; ++d)
      for (int i = 0; i < 2; ++i) {
        double v = xs[(d * 2 + i) * 3 + j];
        want[j] += v * std::cos(v * w.to_vector<double>()[j]);
      }
    want[j] += 16;
  }
  expect_near(gw, {16.27807758, 15.69541262, 16.13944211}, 1e-8, "JAX's values");
  expect_near(gw, want, 1e-12, "grad of pmap");
  expect_near(gw_member, want, 1e-12, "pmap of grad, out_axes none");
}

TEST(CollectivesTest, ComposesWithJitScanAndVmap) {
  Array x = jax_input({2, 3});
  auto f = [](const Array& v) {
    // A scan whose body communicates: three rounds of v <- v + ppermute(v) / psum(|v|).
    auto [c, ys] = scan(
        [](const Array& carry, const Array&) {
          Array next = carry + ppermute(carry, "i", {{0, 1}, {1, 2}, {2, 3}, {3, 0}}) /
                                   psum(sum(abs(carry)), {"i"});
          return std::pair{next, sum(next)};
        },
        v, zeros({3}, DType::kF64));
    return c * squeeze(slice_axis(ys, 0, 2, 3), {0});
  };
  Array eager = pmap(f, "i")(x);
  Array jitted = jit(pmap(f, "i"))(x);
  Array inner_jit = pmap(jit(f), "i")(x);
  Array named = vmap(f, {0}, {0}, {.axis_name = "i"})(x);
  expect_near(jitted, eager.to_vector<double>(), 1e-12, "jit of pmap");
  expect_near(inner_jit, eager.to_vector<double>(), 1e-12, "pmap of jit");
  expect_near(named, eager.to_vector<double>(), 1e-12, "vmap with axis_name");
  // vmap over a batch of inputs of the pmap: each batch element on its own.
  Array batch = stack({x, x * 2.0, x - 1.0}, 0);
  Array vb = vmap(pmap(f, "i"))(batch);
  for (int b = 0; b < 3; ++b) {
    Array one = pmap(f, "i")(squeeze(slice_axis(batch, 0, b, b + 1), {0}));
    expect_near(squeeze(slice_axis(vb, 0, b, b + 1), {0}), one.to_vector<double>(), 1e-12,
                "vmap of pmap, batch element " + std::to_string(b));
  }
  // Gradients through the scan, both ways round.
  auto loss = [&](const Array& v) { return sum(sin(f(v))); };
  Array g1 = grad([&](const Array& v) { return sum(pmap(loss, "i")(v)); })(x);
  Array g2 = pmap(grad(loss), "i")(x);
  expect_near(g2, g1.to_vector<double>(), 1e-12, "pmap of grad vs grad of pmap");
  std::vector<double> fd =
      finite_diff([&](const Array& v) { return sum(pmap(loss, "i")(v)).item<double>(); }, x);
  expect_near(g1, fd, 1e-6, "finite differences");
}

void expect_error(const std::function<void()>& f, const std::string& starts) {
  try {
    f();
    ADD_FAILURE() << "no error; expected " << starts;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(starts, 0), 0u) << e.what();
  }
}

TEST(CollectivesTest, MisuseIsAClearError) {
  Array x = jax_input({2, 3});
  expect_error([&] { psum(x, {"i"}); }, "[psum] unbound axis name 'i'");
  expect_error([&] { pmap([](const Array& v) { return psum(v, {"j"}); }, "i")(x); },
               "[psum] unbound axis name 'j'");
  Array big = zeros({8, 2}, DType::kF64);
  expect_error([&] { pmap([](const Array& v) { return v; }, "i")(big); },
               "[pmap] axis 'i' of size 8 needs 8 devices, but there are 4");
  expect_error([&] { pmap([](const Array& v) { return v; }, "i", {0}, {none})(x); },
               "[pmap] output 0 varies over {i} but its out spec P() does not map it");
  expect_error(
      [&] {
        pmap([](const Array& v) { return pmap([](const Array& u) { return u; }, "j")(v); }, "i")(x);
      },
      "[pmap] a pmap or shard_map inside another is not supported yet");
  expect_error([&] { pmap([](const Array& v) { return psum_scatter(v, "i", 1); }, "i")(x); },
               "[psum_scatter] scatter_dimension 1 of f64[2,3]{i} must equal the axis size 4");
  expect_error(
      [&] {
        pmap([](const Array& v) { return ppermute(v, "i", {{0, 1}, {2, 1}}); }, "i")(x);
      },
      "[ppermute] perm must name each source and each destination at most once");
  expect_error([&] { pmap([](const Array& v) { return all_gather(v, "i", 5); }, "i")(x); },
               "[all_gather] axis 5 is out of range for rank 3");
}

}  // namespace
}  // namespace graft
