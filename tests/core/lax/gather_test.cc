// lax.gather and the lax.scatter family (core/lax/gather.h) against vectors recorded from
// JAX 0.10.2 (tools/make_lax_gather_vectors.py writes tests/core/testdata/
// lax_gather_vectors.txt): the dimension numbers of JAX's own lax_test gather / scatter cases,
// out-of-bounds indices in each mode, duplicates, values and gradients (d sum(out * ct) with
// respect to the operand and the updates). Then vmap against a loop, jit against eager, and
// the shape errors.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/core/numpy/jnp_array_vectors.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using Fn = jnp_vectors::CaseFn;
using GD = GatherDimensionNumbers;
using SD = ScatterDimensionNumbers;
using Mode = GatherScatterMode;

const jnp_vectors::VectorFile& vectors() {
  static const auto* f = new jnp_vectors::VectorFile("tests/core/testdata/lax_gather_vectors.txt");
  return *f;
}

Fn gather_fn(GD dn, Shape sizes, Mode mode = Mode::kPromiseInBounds,
             std::optional<double> fill = std::nullopt) {
  return [=](const std::vector<Array>& x) {
    return std::vector<Array>{gather(x[0], x[1], dn, sizes, false, false, mode, fill)};
  };
}

using ScatterOp = Array (*)(const Array&, const Array&, const Array&,
                            const ScatterDimensionNumbers&, bool, bool, GatherScatterMode);

const std::map<std::string, ScatterOp>& scatter_ops() {
  static const auto* m = new std::map<std::string, ScatterOp>{
      {"set", &scatter},     {"add", &scatter_add}, {"sub", &scatter_sub},
      {"mul", &scatter_mul}, {"min", &scatter_min}, {"max", &scatter_max}};
  return *m;
}

Fn scatter_fn(ScatterOp op, SD dn, Mode mode = Mode::kFillOrDrop) {
  return [=](const std::vector<Array>& x) {
    return std::vector<Array>{op(x[0], x[1], x[2], dn, false, false, mode)};
  };
}

Fn apply_fn(SD dn, Shape update_shape, Mode mode, std::function<Array(const Array&)> func) {
  return [=](const std::vector<Array>& x) {
    return std::vector<Array>{
        scatter_apply(x[0], x[1], func, dn, update_shape, false, false, mode)};
  };
}

// The generator's cases, under its names.
const std::map<std::string, Fn>& cases() {
  static const auto* c = [] {
    auto* m = new std::map<std::string, Fn>{
        {"gather_scalars", gather_fn(GD{{}, {0}, {0}}, {1})},
        {"gather_windows_1d", gather_fn(GD{{1}, {}, {0}}, {2})},
        {"gather_take_rows", gather_fn(GD{{1}, {0}, {0}}, {1, 3})},
        {"gather_two_starts", gather_fn(GD{{1}, {0}, {0, 1}}, {1, 3})},
        {"gather_take_columns", gather_fn(GD{{0}, {1}, {1}}, {4, 1})},
        {"gather_offset_dims_apart", gather_fn(GD{{0, 3}, {1}, {1, 2}}, {2, 1, 2})},
        {"gather_reversed_start_map", gather_fn(GD{{1, 2}, {}, {1, 0}}, {2, 3})},
        {"gather_batching", gather_fn(GD{{}, {1}, {1}, {0}, {0}}, {1, 1})},
        {"gather_batching_two", gather_fn(GD{{2}, {}, {2}, {0, 1}, {1, 0}}, {1, 1, 3})},
        {"gather_oob_clip", gather_fn(GD{{1}, {0}, {0}}, {1, 3}, Mode::kClip)},
        {"gather_oob_fill", gather_fn(GD{{1}, {0}, {0}}, {1, 3}, Mode::kFillOrDrop)},
        {"gather_oob_promise_in_bounds",
         gather_fn(GD{{1}, {0}, {0}}, {1, 3}, Mode::kPromiseInBounds)},
        {"gather_oob_fill_value", gather_fn(GD{{1}, {0}, {0}}, {1, 3}, Mode::kFillOrDrop, -7.5)},
        {"gather_oob_fill_int", gather_fn(GD{{1}, {0}, {0}}, {1, 3}, Mode::kFillOrDrop)},
        {"scatter_apply_drop", apply_fn(SD{{1}, {0}, {0}}, {5, 3}, Mode::kFillOrDrop,
                                        [](const Array& v) { return v * v + 1.0f; })},
        {"scatter_apply_clip", apply_fn(SD{{1}, {0}, {0}}, {5, 3}, Mode::kClip,
                                        [](const Array& v) { return v * v + 1.0f; })},
        {"scatter_apply_scalars", apply_fn(SD{{}, {0}, {0}}, {3}, Mode::kFillOrDrop,
                                           [](const Array& v) { return v * 2.0f - 1.0f; })},
        {"scatter_sub_uint8", scatter_fn(&scatter_sub, SD{{1}, {0}, {0}})},
    };
    for (const char* t : {"int8", "int16", "uint8", "uint16", "uint32"}) {
      (*m)[std::string("gather_oob_fill_") + t] =
          gather_fn(GD{{1}, {0}, {0}}, {1, 3}, Mode::kFillOrDrop);
    }
    const std::map<std::string, SD> dnums = {
        {"scalars", SD{{}, {0}, {0}}},
        {"windows_1d", SD{{1}, {}, {0}}},
        {"rows", SD{{1}, {0}, {0}}},
        {"columns", SD{{0}, {1}, {1}}},
        {"two_starts", SD{{1}, {0}, {0, 1}}},
        {"batching", SD{{}, {1}, {1}, {0}, {0}}},
        {"batching_two", SD{{2}, {}, {2}, {0, 1}, {1, 0}}},
        {"duplicates", SD{{1}, {0}, {0}}},
        {"oob_drop", SD{{1}, {0}, {0}}},
        {"int", SD{{1}, {0}, {0}}},
    };
    for (const auto& [op, f] : scatter_ops()) {
      for (const auto& [name, dn] : dnums) {
        (*m)["scatter_" + op + "_" + name] = scatter_fn(f, dn);
      }
      (*m)["scatter_" + op + "_oob_clip"] = scatter_fn(f, SD{{1}, {0}, {0}}, Mode::kClip);
    }
    return m;
  }();
  return *c;
}

TEST(LaxGather, ValuesMatchJax) {
  vectors().expect_outputs_match(cases(), [](const std::string&) { return 1e-5; });
  // Every recorded case has its C++ twin.
  for (const auto& [key, v] : vectors().all()) {
    const std::string name = key.substr(0, key.rfind('.'));
    EXPECT_TRUE(cases().count(name)) << "no C++ case for " << name;
  }
}

TEST(LaxGather, GradientsMatchJax) {
  int with_grads =
      vectors().expect_gradients_match(cases(), [](const std::string&) { return 1e-5; });
  EXPECT_GE(with_grads, 50);
}

// scatter_mul with duplicate indices, where JAX has no gradient: against central
// differences in f64 (a zero update among the duplicates too).
TEST(LaxGather, ScatterMulGradientWithDuplicates) {
  Array x = astype(array<float>({1.5, -2, 0.5, 3}), DType::kF64);
  Array u = astype(array<float>({2, -0.5, 0, 1.25, 4}), DType::kF64);
  Array idx = reshape(array<int32_t>({1, 1, 3, 3, 1}), {5, 1});
  SD dn{{}, {0}, {0}};
  Array w = astype(array<float>({1, 2, -1, 0.5}), DType::kF64);
  auto f = [&](const Array& xx, const Array& uu) { return sum(w * scatter_mul(xx, idx, uu, dn)); };
  auto g = grad(f, argnums<0, 1>)(x, u);
  std::vector<double> gx = std::get<0>(g).to_vector<double>();
  std::vector<double> gu = std::get<1>(g).to_vector<double>();
  const double h = 1e-6;
  for (int which = 0; which < 2; ++which) {
    Array base = which == 0 ? x : u;
    std::vector<double> b = base.to_vector<double>();
    for (size_t i = 0; i < b.size(); ++i) {
      std::vector<double> p = b, m = b;
      p[i] += h;
      m[i] -= h;
      Array ap = array(p, base.shape()), am = array(m, base.shape());
      double fp = which == 0 ? f(ap, u).item<double>() : f(x, ap).item<double>();
      double fm = which == 0 ? f(am, u).item<double>() : f(x, am).item<double>();
      EXPECT_NEAR(which == 0 ? gx[i] : gu[i], (fp - fm) / (2 * h), 1e-6) << which << " " << i;
    }
  }
}

// vmap over a leading batch of operands (and of indices) against a loop; jit against eager.
TEST(LaxGather, VmapMatchesALoopAndJitMatchesEager) {
  Array idx = array<int32_t>({2, 0, 5, 1}, Shape{2, 2});
  Array uidx = array<int32_t>({3, 0, 3}, Shape{3, 1});
  using F = std::function<Array(const Array&)>;
  const std::vector<std::pair<std::string, F>> fns = {
      {"gather_window",
       [&](const Array& x) {
         return gather(x, idx, GD{{1, 2}, {}, {0, 1}}, {2, 3});
       }},
      {"gather_fill",
       [&](const Array& x) {
         return gather(x, idx, GD{{1}, {0}, {0, 1}}, {1, 3}, false, false, Mode::kFillOrDrop);
       }},
      {"scatter_set",
       [&](const Array& x) {
         return scatter(x, uidx, slice_axis(x, 0, 0, 3), SD{{1}, {0}, {0}});
       }},
      {"scatter_mul",
       [&](const Array& x) {
         return scatter_mul(x, uidx, slice_axis(x, 0, 1, 4), SD{{1}, {0}, {0}});
       }},
      {"scatter_min",
       [&](const Array& x) {
         return scatter_min(x, uidx, full({3, 6}, 0.5), SD{{1}, {0}, {0}});
       }},
      {"scatter_max_clip",
       [&](const Array& x) {
         return scatter_max(x, array<int32_t>({7, -2}, Shape{2, 1}), slice_axis(x, 0, 2, 4),
                            SD{{1}, {0}, {0}}, false, false, Mode::kClip);
       }},
      {"grad_scatter_max",
       [&](const Array& x) {
         return grad([&](const Array& y) {
           return sum(
               square(scatter_max(y, uidx, 0.5f * slice_axis(y, 0, 0, 3), SD{{1}, {0}, {0}})));
         })(x);
       }},
      {"scatter_apply",
       [&](const Array& x) {
         return scatter_apply(x, uidx, [](const Array& v) { return v * 0.5f + 1.0f; },
                              SD{{1}, {0}, {0}}, {3, 6});
       }},
      {"grad_gather",
       [&](const Array& x) {
         return grad([&](const Array& y) {
           return sum(square(gather(y, idx, GD{{1, 2}, {}, {0, 1}}, {2, 3})));
         })(x);
       }},
  };
  Array xs = reshape(arange(72.0f) * 0.25f - 5.0f, {3, 4, 6});
  for (const auto& [name, f] : fns) {
    SCOPED_TRACE(name);
    std::vector<Array> loop;
    for (int b = 0; b < 3; ++b) loop.push_back(f(squeeze(slice_axis(xs, 0, b, b + 1), {0})));
    std::vector<double> want = stack(loop).to_vector<double>();
    std::vector<double> got = vmap(f)(xs).to_vector<double>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << i;
      } else {
        EXPECT_NEAR(got[i], want[i], 1e-5) << i;
      }
    }
    Array x0 = squeeze(slice_axis(xs, 0, 0, 1), {0});
    std::vector<double> jitted = jit(f)(x0).to_vector<double>();
    std::vector<double> eager = f(x0).to_vector<double>();
    ASSERT_EQ(jitted.size(), eager.size());
    for (size_t i = 0; i < jitted.size(); ++i) {
      if (!std::isnan(eager[i])) {
        EXPECT_NEAR(jitted[i], eager[i], 1e-5) << i;
      }
    }
  }
  // Batched indices, shared operand: every batch element gathers / scatters its own.
  Array x = reshape(arange(24.0f), {4, 6});
  Array idxs = array<int32_t>({0, 3, 1, 1, 2, 0}, Shape{3, 2, 1});
  auto g = [&](const Array& i) { return gather(x, i, GD{{1}, {0}, {0}}, {1, 6}); };
  auto s = [&](const Array& i) { return scatter_add(x, i, ones({2, 6}), SD{{1}, {0}, {0}}); };
  for (const auto& f :
       {std::function<Array(const Array&)>(g), std::function<Array(const Array&)>(s)}) {
    std::vector<Array> loop;
    for (int b = 0; b < 3; ++b) loop.push_back(f(squeeze(slice_axis(idxs, 0, b, b + 1), {0})));
    std::vector<double> want = stack(loop).to_vector<double>();
    std::vector<double> got = vmap(f)(idxs).to_vector<double>();
    ASSERT_EQ(got, want);
  }
}

// scatter_apply differentiates through func (JAX has no rule): against central differences
// in f64, with an element func is applied to twice.
TEST(LaxGather, ScatterApplyGradient) {
  Array x = astype(array<float>({1.5, -2, 0.5, 3}), DType::kF64);
  Array idx = reshape(array<int32_t>({1, 3, 1}), {3, 1});
  Array w = astype(array<float>({1, 2, -1, 0.5}), DType::kF64);
  auto f = [&](const Array& xx) {
    return sum(w * scatter_apply(xx, idx, [](const Array& v) { return sin(v) * v; },
                                 SD{{}, {0}, {0}}, {3}));
  };
  std::vector<double> g = grad(f)(x).to_vector<double>();
  std::vector<double> b = x.to_vector<double>();
  const double h = 1e-6;
  for (size_t i = 0; i < b.size(); ++i) {
    std::vector<double> p = b, m = b;
    p[i] += h;
    m[i] -= h;
    double fd =
        (f(array(p, x.shape())).item<double>() - f(array(m, x.shape())).item<double>()) / (2 * h);
    EXPECT_NEAR(g[i], fd, 1e-6) << i;
  }
  // Traced indices (jit arguments): the repeats run in a while_loop; same values as eager.
  auto apply = [](const Array& xx, const Array& ii) {
    return scatter_apply(xx, ii, [](const Array& v) { return sin(v) * v; }, SD{{}, {0}, {0}}, {3});
  };
  std::vector<double> eager = apply(x, idx).to_vector<double>();
  std::vector<double> jitted = jit(apply)(x, idx).to_vector<double>();
  ASSERT_EQ(jitted.size(), eager.size());
  for (size_t i = 0; i < eager.size(); ++i) EXPECT_NEAR(jitted[i], eager[i], 1e-12) << i;
  EXPECT_NE(eager[1], std::sin(b[1]) * b[1]);  // element 1 was hit twice
}

// u64 (not in the JAX vectors: they are made with x64 off): the default fill is 2^64 - 1.
TEST(LaxGather, DefaultFillOfUint64IsItsMaximum) {
  Array x = astype(reshape(arange(6), {3, 2}), DType::kU64);
  Array g = gather(x, array<int32_t>({1, 5}, Shape{2, 1}), GD{{1}, {0}, {0}}, {1, 2}, false, false,
                   Mode::kFillOrDrop);
  EXPECT_EQ(g.to_vector<uint64_t>(),
            (std::vector<uint64_t>{2, 3, 18446744073709551615ull, 18446744073709551615ull}));
}

TEST(LaxGather, ShapeErrors) {
  using jnp_vectors::expect_error;
  Array x = zeros({4, 5});
  Array i = zeros({3, 1}, DType::kI32);
  expect_error(
      [&] {
        gather(x, zeros({3, 1}), GD{{1}, {0}, {0}}, {1, 5});
      },
      "[gather] indices must have an integer type");
  expect_error(
      [&] {
        gather(x, i, GD{{1}, {0}, {0}}, {2, 5});
      },
      "[gather] collapsed and operand batching dims must have slice size 0 or 1");
  expect_error([&] { gather(x, i, GD{{1}, {0}, {0}}, {1, 6}); }, "[gather] slice_sizes");
  expect_error([&] { gather(x, i, GD{{1}, {0}, {0, 1}}, {1, 5}); }, "[gather] start_index_map");
  expect_error([&] { gather(x, i, GD{{}, {0}, {0}}, {1, 5}); }, "[gather] offset_dims");
  expect_error([&] { gather(x, i, GD{{2, 1}, {}, {0}}, {1, 5}); }, "[gather] offset_dims");
  expect_error(
      [&] {
        gather(x, i, GD{{1}, {0}, {0}, {1}, {0}}, {1, 1});
      },
      "[gather] operand_batching_dims");
  SD dn{{1}, {0}, {0}};
  expect_error([&] { scatter_add(x, i, zeros({2, 5}), dn); }, "[scatter_add] updates");
  expect_error([&] { scatter_mul(x, i, zeros({2, 5}), dn); }, "[scatter_mul] updates");
  expect_error([&] { scatter_min(x, i, zeros({3, 6}), dn); }, "[scatter_min] updates");
  expect_error(
      [&] {
        scatter_max(x, i, zeros({3, 5}, DType::kF64), dn);
      },
      "[scatter_max] operand and updates must have the same dtype");
  expect_error(
      [&] {
        scatter(x, i, zeros({3, 5}), SD{{1}, {0}, {2}});
      },
      "[scatter] scatter_dims_to_operand_dims");
  expect_error(
      [&] {
        scatter_add(zeros({3}, DType::kBool), i, zeros({3}, DType::kBool), SD{{}, {0}, {0}});
      },
      "[scatter_add] requires a numeric dtype");
  expect_error(
      [&] {
        scatter_sub(zeros({3}, DType::kBool), i, zeros({3}, DType::kBool), SD{{}, {0}, {0}});
      },
      "[scatter_sub] requires a numeric dtype");
  expect_error(
      [&] {
        scatter_apply(x, i, [](const Array& v) { return sum(v); }, dn, {3, 5});
      },
      "[scatter_apply] func must return an array like its argument f32[4,5]");
  expect_error(
      [&] {
        scatter_apply(x, i, [](const Array& v) { return v; }, dn, {3, 6});
      },
      "[scatter_apply] updates");
}

}  // namespace
}  // namespace graft
