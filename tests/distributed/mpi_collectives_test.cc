// Every collective over one mesh axis of all the devices of all processes, whatever the world
// (mpi_collectives_test.sh runs it as 2 x 1, 4 x 1, 2 x 2 and 4 x 2 processes x devices), so
// each crosses processes with one or several devices on each: values against plain loops over
// the global input (every process holds it whole), NaN in pmax / pmin, i32 sums, a gradient,
// and the same under jit and pmap.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/device/device.h"
#include "core/distributed/mpi.h"
#include "core/ops.h"
#include "core/sharding/device_put.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/pmap.h"
#include "transforms/shard_map.h"

namespace graft {
namespace {

int n() { return device_count(); }
Mesh line() { return Mesh({n()}, {"i"}); }

// [2n, n]: device d holds rows 2d, 2d + 1; distinct values, the same on every process.
Array input(DType dt = DType::kF32) {
  const int64_t count = 2 * n() * n();
  Array a = reshape(sin(arange(0.0, static_cast<double>(count), 1.0, DType::kF32) * 0.71) * 50.0f,
                    {2 * n(), n()});
  return astype(dt == DType::kI32 ? rint(a) : a, dt);
}

std::vector<double> values(const Array& a) { return astype(a, DType::kF64).to_vector<double>(); }

void expect_values(const Array& got, const std::vector<double>& want, double tol,
                   const std::string& what) {
  std::vector<double> g = values(got);
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << what << " at " << i;
    } else {
      ASSERT_NEAR(g[i], want[i], tol) << what << " at " << i << " (process " << process_index()
                                      << " of " << process_count() << ")";
    }
  }
}

template <typename F>
Array over_line(F f, const PartitionSpec& out = P("i")) {
  return shard_map(f, line(), {P("i")}, {out})(input());
}

// Sum over devices of each device's [2, n] block: [2n] values.
std::vector<double> block_sum(const std::vector<double>& in) {
  const int m = 2 * n();
  std::vector<double> s(static_cast<size_t>(m), 0);
  for (int d = 0; d < n(); ++d) {
    for (int e = 0; e < m; ++e) s[e] += in[d * m + e];
  }
  return s;
}

TEST(MpiCollectivesTest, ReductionsF32AndI32) {
  for (DType dt : {DType::kF32, DType::kI32}) {
    Array a = input(dt);
    const std::vector<double> in = values(a), s = block_sum(in);
    Array summed =
        shard_map([](const Array& v) { return psum(v, {"i"}); }, line(), {P("i")}, {P("i")})(a);
    std::vector<double> want;
    for (int d = 0; d < n(); ++d) want.insert(want.end(), s.begin(), s.end());
    expect_values(summed, want, 1e-3, "psum");
    // psum_scatter along columns: device d keeps column d of the sum, [2, 1]; by rows [2, n].
    Array scattered = shard_map([](const Array& v) { return psum_scatter(v, "i", 1, true); },
                                line(), {P("i")}, {P(none, "i")})(a);
    expect_values(scattered, s, 1e-3, "psum_scatter");
  }
}

TEST(MpiCollectivesTest, MaxAndMinWithNaN) {
  Array a = input();
  std::vector<double> in = values(a);
  in[2 * n() + 1] = NAN;  // device 1's first row, column 1
  std::vector<float> as_f32(in.begin(), in.end());
  Array with_nan = array(as_f32, Shape{2 * n(), n()});
  const int m = 2 * n();
  std::vector<double> hi(static_cast<size_t>(m), -INFINITY), lo(static_cast<size_t>(m), INFINITY);
  for (int d = 0; d < n(); ++d) {
    for (int e = 0; e < m; ++e) {
      const double v = in[d * m + e];
      hi[e] = std::isnan(hi[e]) || std::isnan(v) ? NAN : std::max(hi[e], v);
      lo[e] = std::isnan(lo[e]) || std::isnan(v) ? NAN : std::min(lo[e], v);
    }
  }
  std::vector<double> want_hi, want_lo;
  for (int d = 0; d < n(); ++d) {
    want_hi.insert(want_hi.end(), hi.begin(), hi.end());
    want_lo.insert(want_lo.end(), lo.begin(), lo.end());
  }
  expect_values(shard_map([](const Array& v) { return pmax(v, {"i"}); }, line(), {P("i")},
                          {P("i")})(with_nan),
                want_hi, 0, "pmax");
  expect_values(shard_map([](const Array& v) { return pmin(v, {"i"}); }, line(), {P("i")},
                          {P("i")})(with_nan),
                want_lo, 0, "pmin");
}

TEST(MpiCollectivesTest, GatherAllToAllAndPermute) {
  const std::vector<double> in = values(input());
  const int m = 2 * n();  // elements per block
  std::vector<double> want;
  for (int d = 0; d < n(); ++d) want.insert(want.end(), in.begin(), in.end());
  expect_values(over_line([](const Array& v) { return all_gather(v, "i", 0, true); }), want, 0,
                "all_gather");
  // all_to_all, split columns, concat rows: device r gets column r of every block, [2n, 1].
  want.assign(static_cast<size_t>(n() * m), 0);
  for (int r = 0; r < n(); ++r) {
    for (int q = 0; q < n(); ++q) {
      for (int i = 0; i < 2; ++i) want[r * m + 2 * q + i] = in[(2 * q + i) * n() + r];
    }
  }
  expect_values(over_line([](const Array& v) { return all_to_all(v, "i", 1, 0, true); }), want, 0,
                "all_to_all");
  // A cyclic shift: device r gets device r - 1's block.
  std::vector<std::pair<int, int>> perm;
  for (int d = 0; d < n(); ++d) perm.push_back({d, (d + 1) % n()});
  want.assign(in.size(), 0);
  for (int r = 0; r < n(); ++r) {
    const int q = (r + n() - 1) % n();
    for (int e = 0; e < m; ++e) want[r * m + e] = in[q * m + e];
  }
  expect_values(over_line([perm](const Array& v) { return ppermute(v, "i", perm); }), want, 0,
                "ppermute");
}

// d/dx sum(x * psum(x)) = 2 psum(x), through pmap; and a jitted shard_map.
TEST(MpiCollectivesTest, GradientJitAndPmap) {
  Array a = reshape(input(), {n(), 2 * n()});
  const std::vector<double> in = values(a), s = block_sum(in);
  auto f = [](const Array& x) { return sum(x * psum(x, {"i"})); };
  Array g = grad([&](const Array& x) { return sum(pmap(f, "i")(x)); })(a);
  std::vector<double> want;
  for (int d = 0; d < n(); ++d) {
    for (double v : s) want.push_back(2 * v);
  }
  expect_values(g, want, 1e-2, "grad of pmap");
  auto jitted = jit(shard_map([](const Array& v) { return psum(v, {"i"}); }, line(), {P("i")},
                              {P("i")}));
  std::vector<double> summed;
  for (int d = 0; d < n(); ++d) summed.insert(summed.end(), s.begin(), s.end());
  expect_values(jitted(input()), summed, 1e-3, "jit of shard_map");
}

}  // namespace
}  // namespace graft
