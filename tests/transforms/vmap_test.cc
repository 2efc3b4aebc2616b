// vmap: in_axes / out_axes forms, pytrees, nesting, broadcasting of unbatched outputs,
// axis_size, and errors; each against a loop over the batch.
#include "transforms/vmap.h"

#include "core/ops.h"
#include "gtest/gtest.h"

struct Pair {
  graft::Array a, b;
};
GRAFT_TREE(Pair, a, b);

namespace graft {
namespace {

std::vector<double> vals(const Array& a) { return a.to_vector<double>(); }

Array row(const Array& x, int i) {
  Shape start(x.ndim(), 0), limit = x.shape();
  start[0] = i;
  limit[0] = i + 1;
  Shape s(x.shape().begin() + 1, x.shape().end());
  return reshape(slice(x, start, limit), s);
}

const Array kM = array<double>({1, 2, 3, 4, 5, 6}, Shape{2, 3});

TEST(VmapTest, InAxesIntNoneAndNegative) {
  auto f = [](const Array& x, const Array& y) { return x * y + sum(x); };
  Array y = array<double>({10, 20, 30});
  Array out = vmap(f, {0, none})(kM, y);  // over the rows of kM
  ASSERT_EQ(shape_str(out.shape()), "(2, 3)");
  for (int i = 0; i < 2; ++i) EXPECT_EQ(vals(row(out, i)), vals(f(row(kM, i), y)));
  Array cols = vmap(f, {-1, none})(kM, array<double>({1, 2}));  // over columns
  ASSERT_EQ(shape_str(cols.shape()), "(3, 2)");
  Array t = transpose(kM);
  for (int j = 0; j < 3; ++j)
    EXPECT_EQ(vals(row(cols, j)), vals(f(row(t, j), array<double>({1, 2}))));
}

TEST(VmapTest, OutAxesAndUnbatchedOutputsBroadcast) {
  auto f = [](const Array& x) { return std::pair{x * 2.0, full({}, 7.0, DType::kF64)}; };
  auto [a, b] = vmap(f, {0}, {1, 0})(kM);
  ASSERT_EQ(shape_str(a.shape()), "(3, 2)");
  EXPECT_EQ(vals(a), vals(transpose(kM * 2.0)));
  ASSERT_EQ(shape_str(b.shape()), "(2,)") << "an output that ignores the batch is broadcast";
  EXPECT_EQ(vals(b), (std::vector<double>{7, 7}));
}

TEST(VmapTest, PytreeArgumentsWithPerLeafAxes) {
  auto f = [](const Pair& p) { return p.a + p.b; };
  Pair p{kM, array<double>({100, 200, 300})};
  Array out = vmap(f, {AxisSpec::leaves({0, std::nullopt})})(p);
  EXPECT_EQ(vals(out), vals(kM + p.b));
}

TEST(VmapTest, NestedVmapIsAnOuterProduct) {
  Array u = array<double>({1, 2}), v = array<double>({3, 4, 5});
  auto mul = [](const Array& a, const Array& b) { return a * b; };
  Array out = vmap([&](const Array& a) { return vmap(mul, {none, 0})(a, v); })(u);
  ASSERT_EQ(shape_str(out.shape()), "(2, 3)");
  EXPECT_EQ(vals(out), (std::vector<double>{3, 4, 5, 6, 8, 10}));
}

TEST(VmapTest, AxisSizeWithNothingMapped) {
  Array out = vmap([](const Array& x) { return x + 1.0; }, {none}, {0},
                   {.axis_size = 4})(array<double>({1, 2}));
  ASSERT_EQ(shape_str(out.shape()), "(4, 2)");
}

TEST(VmapTest, ClearErrors) {
  auto f = [](const Array& x, const Array& y) { return x + y; };
  try {
    vmap(f)(kM, ones({3, 3}, DType::kF64));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[vmap] inconsistent sizes along the mapped axes", 0), 0u)
        << e.what();
  }
  EXPECT_THROW(vmap(f, {2, 0})(kM, kM), Error);
  EXPECT_THROW(vmap(f, {0, 0, 0})(kM, kM), Error);
  EXPECT_THROW(vmap(f, {none, none})(kM, kM), Error);
}

}  // namespace
}  // namespace graft
