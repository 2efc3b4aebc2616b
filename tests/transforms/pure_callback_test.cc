// pure_callback: eager and under jit (every run, dropped when unused), several results and
// dtypes, vmap with each vmap_method (the shapes the callback sees, values against a loop),
// inside scan, no derivative (and custom_jvp giving it one), and clear errors for results of
// the wrong shape, dtype or count and for exceptions the callback throws.
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/transforms/expect_util.h"
#include "transforms/autodiff.h"
#include "transforms/control_flow.h"
#include "transforms/custom_derivatives.h"
#include "transforms/jit.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using testing_util::expect_error;
using testing_util::vals;

// A host function that computes 2 * x + 1 with a plain loop over the values (not graft ops),
// counting its calls and remembering the shapes it was given.
struct HostAffine {
  std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
  std::shared_ptr<std::vector<std::string>> shapes = std::make_shared<std::vector<std::string>>();
  HostCallback fn() const {
    auto c = calls;
    auto s = shapes;
    return [c, s](const std::vector<Array>& in) {
      ++*c;
      s->push_back(shape_str(in[0].shape()));
      std::vector<float> v = in[0].to_vector<float>();
      for (float& x : v) x = 2 * x + 1;
      return std::vector<Array>{array(v, in[0].shape())};
    };
  }
};

Array affine(const HostAffine& h, const Array& x, VmapMethod m = VmapMethod::kNone) {
  return pure_callback(h.fn(), {x.aval()}, {x}, m)[0];
}

TEST(PureCallbackTest, EagerComputesTheHostFunction) {
  HostAffine h;
  Array y = affine(h, array<float>({1, 2, 3}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{3, 5, 7}));
  EXPECT_EQ(*h.calls, 1);
  EXPECT_EQ(y.dtype(), DType::kF32);
}

TEST(PureCallbackTest, JitRunsItOnEveryCallAndDropsItWhenUnused) {
  HostAffine h;
  auto f = jit([&](const Array& x) { return affine(h, x * 2.0f) + 1.0f; });
  EXPECT_EQ(f(array<float>({1, 2})).to_vector<float>(), (std::vector<float>{6, 10}));
  EXPECT_EQ(f(array<float>({0, -1})).to_vector<float>(), (std::vector<float>{2, -2}));
  EXPECT_EQ(*h.calls, 2);
  EXPECT_EQ(f.stats().hits, 1);
  HostAffine unused;
  auto g = jit([&](const Array& x) {
    affine(unused, x);  // pure: its result is unused, so it never runs
    return x + 1.0f;
  });
  EXPECT_EQ(g(array<float>({1})).to_vector<float>(), (std::vector<float>{2}));
  EXPECT_EQ(*unused.calls, 0);
}

TEST(PureCallbackTest, SeveralResultsOfOtherDtypes) {
  HostCallback split = [](const std::vector<Array>& in) {
    std::vector<double> v = in[0].to_vector<double>();
    std::vector<int32_t> floors;
    std::vector<double> fracs;
    for (double x : v) {
      floors.push_back(static_cast<int32_t>(std::floor(x)));
      fracs.push_back(x - std::floor(x));
    }
    return std::vector<Array>{array(floors, Shape{2}), array(fracs, Shape{2})};
  };
  auto f = jit([&](const Array& x) {
    return pure_callback(split, {Aval{{2}, DType::kI32}, Aval{{2}, DType::kF64}}, {x});
  });
  std::vector<Array> r = f(array<double>({2.25, -0.5}));
  EXPECT_EQ(r[0].dtype(), DType::kI32);
  EXPECT_EQ(r[0].to_vector<int32_t>(), (std::vector<int32_t>{2, -1}));
  EXPECT_EQ(r[1].to_vector<double>(), (std::vector<double>{0.25, 0.5}));
  // The shapes may also come from arrays (eval_shape's placeholders are ShapeDtypeStructs).
  std::vector<Array> like = {zeros({2}, DType::kI32), Array::placeholder(Aval{{2}, DType::kF64})};
  std::vector<Array> r2 = pure_callback(split, like, {array<double>({1.5, 3.0})});
  EXPECT_EQ(r2[0].to_vector<int32_t>(), (std::vector<int32_t>{1, 3}));
}

// vmap against a loop over the batch, for each method, with the shapes the callback saw.
TEST(PureCallbackTest, VmapMethods) {
  Array xs = array<float>({1, 2, 3, 4, 5, 6}, Shape{3, 2});
  const std::vector<float> want = {3, 5, 7, 9, 11, 13};
  {
    HostAffine h;
    Array y = vmap([&](const Array& x) { return affine(h, x, VmapMethod::kSequential); })(xs);
    EXPECT_EQ(y.to_vector<float>(), want);
    EXPECT_EQ(*h.calls, 3);
    EXPECT_EQ(*h.shapes, (std::vector<std::string>{"(2,)", "(2,)", "(2,)"}));
  }
  {
    HostAffine h;
    Array y = vmap([&](const Array& x) { return affine(h, x, VmapMethod::kExpandDims); })(xs);
    EXPECT_EQ(y.to_vector<float>(), want);
    EXPECT_EQ(*h.calls, 1);
    EXPECT_EQ(*h.shapes, (std::vector<std::string>{"(3, 2)"}));
  }
  // Batched along axis 1, under jit: the batch is moved to the front for the callback.
  {
    HostAffine h;
    auto f =
        jit(vmap([&](const Array& x) { return affine(h, x, VmapMethod::kBroadcastAll); }, {1}));
    Array y = f(transpose(xs, std::vector<int>{1, 0}));
    EXPECT_EQ(y.to_vector<float>(), want);
    EXPECT_EQ(*h.shapes, (std::vector<std::string>{"(3, 2)"}));
  }
}

// An unbatched second argument: expand_dims gives it a leading 1, broadcast_all the batch
// size, sequential passes it whole to each call.
TEST(PureCallbackTest, VmapOfAnUnbatchedArgument) {
  auto seen = std::make_shared<std::vector<std::string>>();
  HostCallback add = [seen](const std::vector<Array>& in) {
    seen->push_back(shape_str(in[1].shape()));
    return std::vector<Array>{in[0] + in[1]};  // graft ops on the host arrays
  };
  Array xs = array<float>({1, 2, 3, 4, 5, 6}, Shape{3, 2});
  Array b = array<float>({10, 20});
  for (VmapMethod m :
       {VmapMethod::kSequential, VmapMethod::kExpandDims, VmapMethod::kBroadcastAll}) {
    seen->clear();
    Array y = vmap(
        [&](const Array& x, const Array& bias) {
          return pure_callback(add, {x.aval()}, {x, bias}, m)[0];
        },
        {0, none})(xs, b);
    EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{11, 22, 13, 24, 15, 26}));
    const std::string want = m == VmapMethod::kSequential   ? "(2,)"
                             : m == VmapMethod::kExpandDims ? "(1, 2)"
                                                            : "(3, 2)";
    ASSERT_FALSE(seen->empty());
    EXPECT_EQ(seen->back(), want);
  }
}

TEST(PureCallbackTest, VmapWithoutAMethodIsAnError) {
  HostAffine h;
  expect_error(
      [&] {
        vmap([&](const Array& x) { return affine(h, x); })(zeros({3, 2}));
      },
      "[pure_callback]", "vmap needs a vmap_method");
}

TEST(PureCallbackTest, InsideScanRunsOncePerStep) {
  HostAffine h;
  auto f = jit([&](const Array& init) {
    return scan(
               [&](const Array& c, const Array& x) {
                 Array n = affine(h, c) + x;
                 return std::pair{n, n};
               },
               init, array<float>({0, 1, 2}))
        .first;
  });
  // c -> 2c + 1 + x from 0: 1, 4, 11.
  EXPECT_EQ(f(array<float>({0})).to_vector<float>(), (std::vector<float>{11}));
  EXPECT_EQ(*h.calls, 3);
}

TEST(PureCallbackTest, NoDerivativeButCustomJvpGivesOne) {
  HostAffine h;
  expect_error([&] { grad([&](const Array& x) { return sum(affine(h, x)); })(zeros({2})); },
               "[pure_callback]", "do not support JVP");
  auto with_rule = custom_jvp([&](const Array& x) { return affine(h, x); },
                              [&](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                                return std::pair{affine(h, std::get<0>(p)), std::get<0>(t) * 2.0f};
                              });
  Array g = grad([&](const Array& x) { return sum(with_rule(x)); })(array<float>({1, 5}));
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{2, 2}));
}

TEST(PureCallbackTest, WrongResultsAndThrowingCallbacksAreErrors) {
  Array x = array<float>({1, 2, 3});
  HostCallback short_result = [](const std::vector<Array>&) {
    return std::vector<Array>{zeros({2}, DType::kF32)};
  };
  expect_error([&] { pure_callback(short_result, {x.aval()}, {x})[0].to_vector<float>(); },
               "[pure_callback]", "result 0 is f32[2], declared f32[3]");
  HostCallback f64_result = [](const std::vector<Array>&) {
    return std::vector<Array>{zeros({3}, DType::kF64)};
  };
  expect_error([&] { pure_callback(f64_result, {x.aval()}, {x})[0].to_vector<float>(); },
               "[pure_callback]", "result 0 is f64[3], declared f32[3]");
  HostCallback two = [](const std::vector<Array>& in) { return std::vector<Array>{in[0], in[0]}; };
  expect_error([&] { pure_callback(two, {x.aval()}, {x})[0].to_vector<float>(); },
               "[pure_callback]", "returned 2 arrays, 1 were declared");
  HostCallback boom = [](const std::vector<Array>&) -> std::vector<Array> {
    throw std::runtime_error("boom");
  };
  auto f = jit([&](const Array& a) { return pure_callback(boom, {a.aval()}, {a})[0] + 1.0f; });
  expect_error([&] { f(x).to_vector<float>(); }, "[pure_callback]", "the callback threw: boom");
  // The jitted function, and the arrays it was given, are still usable afterwards.
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  expect_error([&] { f(x).to_vector<float>(); }, "[pure_callback]", "boom");
  expect_error([&] { pure_callback(nullptr, {x.aval()}, {x}); }, "[pure_callback]",
               "the callback is empty");
}

// An array the callback returns and keeps is not overwritten by later in-place kernels.
TEST(PureCallbackTest, KeptResultsStayUnchanged) {
  Array kept = array<float>({1, 2, 3});
  HostCallback give = [kept](const std::vector<Array>&) { return std::vector<Array>{kept}; };
  auto f = jit([&](const Array& x) { return exp(pure_callback(give, {x.aval()}, {x})[0]) * 0.0f; });
  EXPECT_EQ(f(zeros({3})).to_vector<float>(), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(kept.to_vector<float>(), (std::vector<float>{1, 2, 3}));
}

}  // namespace
}  // namespace graft
