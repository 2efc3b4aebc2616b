// Specs of the shape family, part 2: concatenate (and stack, tile, repeat, split), pad, rev,
// iota. Expected values come from index arithmetic over the inputs' host values.
#include "tests/core/primitives/specs/spec.h"

namespace graft::spec {
namespace {

using Idx = std::vector<int64_t>;
using Fn = std::function<Array(const std::vector<Array>&)>;

Expected build(const Shape& shape, DType dtype, const std::function<double(const Idx&)>& f) {
  Expected e{shape, dtype, {}};
  for (int64_t i = 0; i < numel(shape); ++i) e.values.push_back(f(unravel(i, shape)));
  return e;
}

Expected gather(const Array& x, const Shape& shape, const std::function<Idx(const Idx&)>& src) {
  std::vector<double> v = values_of(x);
  return build(shape, x.dtype(), [&](const Idx& i) { return v[ravel(src(i), x.shape())]; });
}

Case make_case(std::string name, std::vector<Array> inputs, Fn fn, Expected e) {
  return Case{std::move(name), std::move(inputs), std::move(fn), std::move(e)};
}

// Concatenation of xs along axis, values converted to `dtype`.
Expected concat_ref(const std::vector<Array>& xs, int axis, DType dtype) {
  Shape out = xs[0].shape();
  out[axis] = 0;
  std::vector<std::vector<double>> vals;
  for (const Array& x : xs) {
    out[axis] += x.shape()[axis];
    vals.push_back(values_of(x));
  }
  return build(out, dtype, [&](const Idx& i) {
    Idx j = i;
    for (size_t k = 0; k < xs.size(); ++k) {
      if (j[axis] < xs[k].shape()[axis]) return round_to(vals[k][ravel(j, xs[k].shape())], dtype);
      j[axis] -= xs[k].shape()[axis];
    }
    return 0.0;
  });
}

// lax.pad reference: out position p of dim d holds operand element (p - lo) / (interior + 1)
// when that divides exactly and is in range, else the padding value.
Expected pad_ref(const Array& x, double value, const std::vector<std::array<int64_t, 3>>& cfg) {
  const Shape& s = x.shape();
  Shape out(s.size());
  for (size_t d = 0; d < s.size(); ++d) {
    out[d] = cfg[d][0] + cfg[d][1] + (s[d] == 0 ? 0 : s[d] + (s[d] - 1) * cfg[d][2]);
  }
  std::vector<double> v = values_of(x);
  double pv = round_to(value, x.dtype());
  return build(out, x.dtype(), [&](const Idx& i) {
    Idx j(i.size());
    for (size_t d = 0; d < i.size(); ++d) {
      int64_t q = i[d] - cfg[d][0], step = cfg[d][2] + 1;
      if (q < 0 || q % step != 0 || q / step >= s[d]) return pv;
      j[d] = q / step;
    }
    return v[ravel(j, s)];
  });
}

}  // namespace

GRAFT_SPEC(Concatenate) {
  Spec s{PrimitiveId::kConcatenate};
  auto a = random_array({2, 3}, DType::kF32, 80), b = random_array({4, 3}, DType::kF32, 81);
  s.cases.push_back(make_case(
      "axis 0", {a, b},
      [](auto& in) {
        return concatenate({in[0], in[1]}, 0);
      },
      concat_ref({a, b}, 0, DType::kF32)));
  auto c = random_array({2, 5}, DType::kF32, 82), d = random_array({2, 1}, DType::kF32, 83);
  s.cases.push_back(make_case(
      "three, axis -1", {a, c, d},
      [](auto& in) {
        return concatenate({in[0], in[1], in[2]}, -1);
      },
      concat_ref({a, c, d}, 1, DType::kF32)));
  auto i = random_array({2, 3}, DType::kI32, 84, -100, 100);
  s.cases.push_back(make_case(
      "i32 + f32 promotes to f32", {i, a},
      [](auto& in) {
        return concatenate({in[0], in[1]}, 1);
      },
      concat_ref({i, a}, 1, DType::kF32)));
  auto h = random_array({1, 3}, DType::kBF16, 85);
  s.cases.push_back(make_case(
      "bf16 + f64 promotes to f64", {h, random_array({2, 3}, DType::kF64, 86)},
      [](auto& in) {
        return concatenate({in[0], in[1]}, 0);
      },
      concat_ref({h, random_array({2, 3}, DType::kF64, 86)}, 0, DType::kF64)));
  auto e = random_array({0, 3}, DType::kF32, 87);
  s.cases.push_back(make_case(
      "with an empty operand", {a, e, b},
      [](auto& in) {
        return concatenate({in[0], in[1], in[2]}, 0);
      },
      concat_ref({a, e, b}, 0, DType::kF32)));
  auto p = random_array({3, 2}, DType::kBool, 88), q = random_array({3, 2}, DType::kBool, 89);
  s.cases.push_back(make_case(
      "bool", {p, q},
      [](auto& in) {
        return concatenate({in[0], in[1]}, 1);
      },
      concat_ref({p, q}, 1, DType::kBool)));
  auto v1 = random_array({3}, DType::kI64, 90, -50, 50),
       v2 = random_array({3}, DType::kI64, 91, -50, 50);
  s.cases.push_back(make_case(
      "stack axis 1", {v1, v2},
      [](auto& in) {
        return stack({in[0], in[1]}, 1);
      },
      [&] {
        auto x1 = values_of(v1), x2 = values_of(v2);
        return build({3, 2}, DType::kI64,
                     [=](const Idx& i) { return i[1] == 0 ? x1[i[0]] : x2[i[0]]; });
      }()));
  auto t = random_array({3, 2}, DType::kF16, 92), u = random_array({2, 4}, DType::kF16, 93);
  s.cases.push_back(make_case(
      "transpose operand", {t, u},
      [](auto& in) {
        return concatenate({transpose(in[0]), in[1]}, 1);
      },
      [&] {
        auto tv = values_of(t), uv = values_of(u);
        return build({2, 7}, DType::kF16, [=](const Idx& i) {
          return i[1] < 3 ? tv[i[1] * 2 + i[0]] : uv[i[0] * 4 + i[1] - 3];
        });
      }()));
  // split then concatenate the pieces in reverse order.
  auto w = random_array({7, 2}, DType::kF32, 95);
  s.cases.push_back(make_case(
      "split at (2, 5), reversed", {w},
      [](auto& in) {
        auto parts = split(in[0], std::vector<int64_t>{2, 5}, 0);
        return concatenate({parts[2], parts[1], parts[0]}, 0);
      },
      gather(w, {7, 2}, [](const Idx& i) {
        int64_t r = i[0] < 2 ? 5 + i[0] : i[0] < 5 ? i[0] : i[0] - 5;
        return Idx{r, i[1]};
      })));
  return s;
}

GRAFT_SPEC(Pad) {
  Spec s{PrimitiveId::kPad};
  auto x = random_array({2, 3}, DType::kF32, 100);
  s.cases.push_back(make_case(
      "jnp.pad zeros", {x},
      [](auto& in) {
        return pad(in[0], {{1, 2}, {0, 1}});
      },
      pad_ref(x, 0, {{{1, 2, 0}}, {{0, 1, 0}}})));
  s.cases.push_back(make_case(
      "jnp.pad one pair for all, value 7", {x},
      [](auto& in) {
        return pad(in[0], {{1, 1}}, Array(7.0));
      },
      pad_ref(x, 7, {{{1, 1, 0}}, {{1, 1, 0}}})));
  s.cases.push_back(make_case(
      "lax_pad negative + interior", {x, scalar(-1.5, DType::kF32)},
      [](auto& in) {
        return lax_pad(in[0], in[1], {{-1, 2, 1}, {1, -2, 2}});
      },
      pad_ref(x, -1.5, {{{-1, 2, 1}}, {{1, -2, 2}}})));
  auto b = random_array({5}, DType::kBF16, 101);
  s.cases.push_back(make_case(
      "bf16 crop both ends, interior 2", {b, Array(0.5)},
      [](auto& in) {
        return lax_pad(in[0], in[1], {{-4, -3, 2}});
      },
      pad_ref(b, 0.5, {{{-4, -3, 2}}})));
  auto i = random_array({3, 2, 2}, DType::kI32, 102, -9, 9);
  s.cases.push_back(make_case(
      "i32 rank 3", {i, Array(-5)},
      [](auto& in) {
        return lax_pad(in[0], in[1], {{0, 1, 0}, {2, 0, 1}, {1, 1, 0}});
      },
      pad_ref(i, -5, {{{0, 1, 0}}, {{2, 0, 1}}, {{1, 1, 0}}})));
  auto e = random_array({0}, DType::kF64, 103);
  s.cases.push_back(make_case(
      "empty operand", {e, scalar(3, DType::kF64)},
      [](auto& in) {
        return lax_pad(in[0], in[1], {{2, 1, 4}});
      },
      pad_ref(e, 3, {{{2, 1, 4}}})));
  auto sc = random_array({}, DType::kF32, 104);
  s.cases.push_back(make_case(
      "scalar operand", {sc, Array(1.0)}, [](auto& in) { return lax_pad(in[0], in[1], {}); },
      pad_ref(sc, 1, {})));
  auto bl = random_array({2, 2}, DType::kBool, 105);
  s.cases.push_back(make_case(
      "bool", {bl, Array(true)},
      [](auto& in) {
        return lax_pad(in[0], in[1], {{1, 0, 1}, {0, 1, 0}});
      },
      pad_ref(bl, 1, {{{1, 0, 1}}, {{0, 1, 0}}})));
  auto t = random_array({3, 2}, DType::kF32, 106);
  s.cases.push_back(make_case(
      "of transpose", {t},
      [](auto& in) {
        return pad(transpose(in[0]), {{1, 0}, {0, 2}});
      },
      [&] {
        auto tv = values_of(t);
        return build({3, 5}, DType::kF32, [=](const Idx& i) {
          return i[0] == 0 || i[1] >= 3 ? 0.0 : tv[i[1] * 2 + (i[0] - 1)];
        });
      }()));
  return s;
}

GRAFT_SPEC(Rev) {
  Spec s{PrimitiveId::kRev};
  auto x = random_array({3, 4, 5}, DType::kF32, 110);
  s.cases.push_back(make_case(
      "all axes", {x}, [](auto& in) { return flip(in[0]); }, gather(x, {3, 4, 5}, [](const Idx& i) {
        return Idx{2 - i[0], 3 - i[1], 4 - i[2]};
      })));
  s.cases.push_back(make_case(
      "axis -1", {x}, [](auto& in) { return flip(in[0], {-1}); },
      gather(x, {3, 4, 5}, [](const Idx& i) {
        return Idx{i[0], i[1], 4 - i[2]};
      })));
  s.cases.push_back(make_case(
      "axes (0, 2)", {x},
      [](auto& in) {
        return flip(in[0], {0, 2});
      },
      gather(x, {3, 4, 5}, [](const Idx& i) {
        return Idx{2 - i[0], i[1], 4 - i[2]};
      })));
  auto b = random_array({7}, DType::kBF16, 111);
  s.cases.push_back(make_case(
      "bf16", {b}, [](auto& in) { return flip(in[0]); },
      gather(b, {7}, [](const Idx& i) { return Idx{6 - i[0]}; })));
  auto l = random_array({4, 3}, DType::kBool, 112);
  s.cases.push_back(make_case(
      "bool axis 0", {l}, [](auto& in) { return flip(in[0], {0}); },
      gather(l, {4, 3}, [](const Idx& i) {
        return Idx{3 - i[0], i[1]};
      })));
  auto i = random_array({300, 150}, DType::kI64, 113, -1000, 1000);
  s.cases.push_back(make_case(
      "i64 large, axis 1", {i}, [](auto& in) { return flip(in[0], {1}); },
      gather(i, {300, 150}, [](const Idx& j) {
        return Idx{j[0], 149 - j[1]};
      })));
  auto e = random_array({2, 0}, DType::kF64, 114);
  s.cases.push_back(make_case(
      "empty", {e}, [](auto& in) { return flip(in[0]); },
      gather(e, {2, 0}, [](const Idx& j) { return j; })));
  auto t = random_array({3, 4}, DType::kU32, 115, 0, 1000);
  s.cases.push_back(make_case(
      "of transpose", {t}, [](auto& in) { return flip(transpose(in[0]), {0}); },
      gather(t, {4, 3}, [](const Idx& j) {
        return Idx{j[1], 3 - j[0]};
      })));
  return s;
}

GRAFT_SPEC(Iota) {
  Spec s{PrimitiveId::kIota};
  auto add = [&](DType dt, Shape shape, int dim, int norm_dim) {
    s.cases.push_back(make_case(
        std::string(dtype_name(dt)) + " " + shape_str(shape) + " dim " + std::to_string(dim), {},
        [=](auto&) { return iota(dt, shape, dim); },
        build(shape, dt, [=](const Idx& i) { return static_cast<double>(i[norm_dim]); })));
  };
  add(DType::kI32, {5}, 0, 0);
  add(DType::kF32, {3, 4}, 1, 1);
  add(DType::kBF16, {6, 2}, 0, 0);
  add(DType::kU8, {2, 3, 4}, -2, 1);
  add(DType::kI64, {0, 3}, 1, 1);
  add(DType::kF64, {200, 300}, 1, 1);
  add(DType::kF16, {4, 2}, -1, 1);
  add(DType::kU32, {2, 70}, 1, 1);
  return s;
}

}  // namespace graft::spec
