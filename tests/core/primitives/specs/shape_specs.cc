// Specs of the shape family. Every expected value is computed by index arithmetic over the
// inputs' host values (values_of on the original, contiguous inputs), never by graft ops.
// Non-contiguous cases build the transposed / sliced operand inside fn, and the reference
// indexes the original array.
#include "tests/core/primitives/specs/spec.h"

namespace graft::spec {
namespace {

using Idx = std::vector<int64_t>;
using Fn = std::function<Array(const std::vector<Array>&)>;

// out[idx] = f(idx) for every index of `shape`.
Expected build(const Shape& shape, DType dtype, const std::function<double(const Idx&)>& f) {
  Expected e{shape, dtype, {}};
  for (int64_t i = 0; i < numel(shape); ++i) e.values.push_back(f(unravel(i, shape)));
  return e;
}

// out[idx] = x[src(idx)].
Expected gather(const Array& x, const Shape& shape, const std::function<Idx(const Idx&)>& src) {
  std::vector<double> v = values_of(x);
  return build(shape, x.dtype(), [&](const Idx& i) { return v[ravel(src(i), x.shape())]; });
}

Case make_case(std::string name, std::vector<Array> inputs, Fn fn, Expected e) {
  return Case{std::move(name), std::move(inputs), std::move(fn), std::move(e)};
}

// Reference transpose: out[i] = x[j] with j[perm[k]] = i[k].
Idx permute_back(const Idx& i, const std::vector<int>& perm) {
  Idx j(i.size());
  for (size_t k = 0; k < perm.size(); ++k) j[perm[k]] = i[k];
  return j;
}
Shape permuted(const Shape& s, const std::vector<int>& perm) {
  Shape o(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) o[k] = s[perm[k]];
  return o;
}

// Same flat order as x (reshape of a contiguous array).
Expected flat_ref(const Array& x, const Shape& shape) {
  return Expected{shape, x.dtype(), values_of(x)};
}

}  // namespace

GRAFT_SPEC(Reshape) {
  Spec s{PrimitiveId::kReshape};
  auto x = random_array({2, 3, 4}, DType::kF32, 1);
  s.cases.push_back(make_case(
      "f32 (2,3,4)->(6,4)", {x},
      [](auto& in) {
        return reshape(in[0], {6, 4});
      },
      flat_ref(x, {6, 4})));
  s.cases.push_back(make_case(
      "infer -1", {x},
      [](auto& in) {
        return reshape(in[0], {4, -1, 2});
      },
      flat_ref(x, {4, 3, 2})));
  s.cases.push_back(make_case(
      "ravel", {x}, [](auto& in) { return ravel(in[0]); }, flat_ref(x, {24})));
  auto sc = random_array({}, DType::kF64, 2);
  s.cases.push_back(make_case(
      "scalar -> (1,1)", {sc},
      [](auto& in) {
        return reshape(in[0], {1, 1});
      },
      flat_ref(sc, {1, 1})));
  auto e = random_array({0, 3}, DType::kBF16, 3);
  s.cases.push_back(make_case(
      "empty (0,3)->(3,0)", {e},
      [](auto& in) {
        return reshape(in[0], {3, 0});
      },
      flat_ref(e, {3, 0})));
  auto b = random_array({3, 2}, DType::kBool, 4);
  s.cases.push_back(make_case(
      "bool", {b}, [](auto& in) { return reshape(in[0], {6}); }, flat_ref(b, {6})));
  auto i = random_array({4, 5}, DType::kI32, 5, -100, 100);
  s.cases.push_back(make_case(
      "i32 expand_dims/squeeze", {i},
      [](auto& in) {
        return squeeze(expand_dims(in[0], {0, -1}), {});
      },
      flat_ref(i, {4, 5})));
  s.cases.push_back(make_case(
      "i32 expand_dims", {i}, [](auto& in) { return expand_dims(in[0], {1}); },
      flat_ref(i, {4, 1, 5})));
  // Non-contiguous: reshape of a transpose must see the transposed order.
  auto t = random_array({3, 4}, DType::kF16, 6);
  std::vector<double> tv = values_of(t);
  s.cases.push_back(make_case(
      "reshape of transpose", {t},
      [](auto& in) {
        return reshape(transpose(in[0]), {2, 6});
      },
      build({2, 6}, DType::kF16, [&](const Idx& o) {
        int64_t f = o[0] * 6 + o[1];  // flat index into the (4,3) transpose
        return tv[(f % 3) * 4 + f / 3];
      })));
  return s;
}

GRAFT_SPEC(Transpose) {
  Spec s{PrimitiveId::kTranspose};
  struct T {
    Shape shape;
    DType dtype;
    std::vector<int> perm;
  };
  std::vector<T> ts = {{{5, 7}, DType::kF32, {1, 0}},
                       {{2, 3, 4}, DType::kF64, {2, 0, 1}},
                       {{2, 3, 4, 5}, DType::kBF16, {3, 1, 0, 2}},
                       {{70, 130}, DType::kF32, {1, 0}},   // partial 32x32 tiles
                       {{300, 200}, DType::kI64, {1, 0}},  // parallel
                       {{3, 50, 40}, DType::kU8, {0, 2, 1}},
                       {{4, 6}, DType::kBool, {1, 0}},
                       {{0, 3}, DType::kF32, {1, 0}},
                       {{3, 1, 4}, DType::kI32, {2, 1, 0}},
                       {{20, 36}, DType::kBF16, {1, 0}},  // 2-byte register blocks
                       {{3, 17, 24}, DType::kF16, {0, 2, 1}},
                       {{2, 66, 80}, DType::kI32, {2, 0, 1}},  // 4-byte blocks, tile edges
                       {{40, 9}, DType::kF64, {1, 0}}};
  uint32_t seed = 10;
  for (const T& t : ts) {
    auto x = random_array(t.shape, t.dtype, seed++);
    auto perm = t.perm;
    s.cases.push_back(make_case(
        std::string("perm of ") + shape_str(t.shape) + " " + dtype_name(t.dtype), {x},
        [perm](auto& in) { return transpose(in[0], perm); },
        gather(x, permuted(t.shape, perm),
               [perm](const Idx& i) { return permute_back(i, perm); })));
  }
  auto x = random_array({2, 3, 4}, DType::kF32, 30);
  s.cases.push_back(make_case(
      "default reverses", {x}, [](auto& in) { return transpose(in[0]); },
      gather(x, {4, 3, 2}, [](const Idx& i) {
        return Idx{i[2], i[1], i[0]};
      })));
  s.cases.push_back(make_case(
      "negative perm", {x},
      [](auto& in) {
        return transpose(in[0], std::vector<int>{-1, 0, 1});
      },
      gather(x, {4, 2, 3}, [](const Idx& i) {
        return Idx{i[1], i[2], i[0]};
      })));
  s.cases.push_back(make_case(
      "swapaxes", {x}, [](auto& in) { return swapaxes(in[0], 0, -1); },
      gather(x, {4, 3, 2}, [](const Idx& i) {
        return Idx{i[2], i[1], i[0]};
      })));
  s.cases.push_back(make_case(
      "moveaxis", {x}, [](auto& in) { return moveaxis(in[0], 0, -1); },
      gather(x, {3, 4, 2}, [](const Idx& i) {
        return Idx{i[2], i[0], i[1]};
      })));
  // Non-contiguous operand: transpose of a strided slice.
  auto y = random_array({6, 9}, DType::kF32, 31);
  s.cases.push_back(make_case(
      "transpose of slice", {y},
      [](auto& in) {
        return transpose(slice(in[0], {1, 0}, {6, 9}, {2, 3}));
      },
      gather(y, {3, 3}, [](const Idx& i) {
        return Idx{1 + 2 * i[1], 3 * i[0]};
      })));
  return s;
}

GRAFT_SPEC(BroadcastInDim) {
  Spec s{PrimitiveId::kBroadcastInDim};
  auto sc = random_array({}, DType::kF32, 40);
  s.cases.push_back(make_case(
      "scalar fill", {sc},
      [](auto& in) {
        return broadcast_in_dim(in[0], {3, 4}, {});
      },
      gather(sc, {3, 4}, [](const Idx&) { return Idx{}; })));
  auto row = random_array({4}, DType::kBF16, 41);
  s.cases.push_back(make_case(
      "row repeat", {row},
      [](auto& in) {
        return broadcast_in_dim(in[0], {3, 4}, {1});
      },
      gather(row, {3, 4}, [](const Idx& i) { return Idx{i[1]}; })));
  auto col = random_array({3, 1}, DType::kI32, 42, -50, 50);
  s.cases.push_back(make_case(
      "size-1 dim stretches", {col},
      [](auto& in) {
        return broadcast_in_dim(in[0], {3, 5}, {0, 1});
      },
      gather(col, {3, 5}, [](const Idx& i) {
        return Idx{i[0], 0};
      })));
  auto v = random_array({3}, DType::kF64, 43);
  s.cases.push_back(make_case(
      "leading dim to (3,4,2)", {v},
      [](auto& in) {
        return broadcast_in_dim(in[0], {3, 4, 2}, {0});
      },
      gather(v, {3, 4, 2}, [](const Idx& i) { return Idx{i[0]}; })));
  auto m = random_array({2, 3}, DType::kU8, 44, 0, 200);
  s.cases.push_back(make_case(
      "middle dim inserted", {m},
      [](auto& in) {
        return broadcast_in_dim(in[0], {2, 5, 3}, {0, 2});
      },
      gather(m, {2, 5, 3}, [](const Idx& i) {
        return Idx{i[0], i[2]};
      })));
  auto b = random_array({1, 3}, DType::kBool, 45);
  s.cases.push_back(make_case(
      "broadcast_to bool", {b},
      [](auto& in) {
        return broadcast_to(in[0], {2, 4, 3});
      },
      gather(b, {2, 4, 3}, [](const Idx& i) {
        return Idx{0, i[2]};
      })));
  auto e = random_array({0}, DType::kF32, 46);
  s.cases.push_back(make_case(
      "empty", {e},
      [](auto& in) {
        return broadcast_to(in[0], {2, 0});
      },
      gather(e, {2, 0}, [](const Idx& i) { return Idx{i[1]}; })));
  auto big = random_array({70}, DType::kF16, 47);
  s.cases.push_back(make_case(
      "large row repeat", {big},
      [](auto& in) {
        return broadcast_in_dim(in[0], {600, 70}, {1});
      },
      gather(big, {600, 70}, [](const Idx& i) { return Idx{i[1]}; })));
  auto r = random_array({2, 3}, DType::kU8, 94, 0, 250);
  s.cases.push_back(make_case(
      "tile (2, 2)", {r},
      [](auto& in) {
        return tile(in[0], {2, 2});
      },
      gather(r, {4, 6}, [](const Idx& i) {
        return Idx{i[0] % 2, i[1] % 3};
      })));
  s.cases.push_back(make_case(
      "repeat axis 1", {r}, [](auto& in) { return repeat(in[0], 2, 1); },
      gather(r, {2, 6}, [](const Idx& i) {
        return Idx{i[0], i[1] / 2};
      })));
  s.cases.push_back(make_case(
      "repeat flat", {r}, [](auto& in) { return repeat(in[0], 3); },
      gather(r, {18}, [](const Idx& i) {
        return Idx{i[0] / 9, (i[0] / 3) % 3};
      })));
  auto t = random_array({3, 4}, DType::kF32, 48);
  s.cases.push_back(make_case(
      "of transpose", {t},
      [](auto& in) {
        return broadcast_in_dim(transpose(in[0]), {2, 4, 3}, {1, 2});
      },
      gather(t, {2, 4, 3}, [](const Idx& i) {
        return Idx{i[2], i[1]};
      })));
  return s;
}

GRAFT_SPEC(Slice) {
  Spec s{PrimitiveId::kSlice};
  auto x = random_array({5, 6, 7}, DType::kF32, 50);
  s.cases.push_back(make_case(
      "strided", {x},
      [](auto& in) {
        return slice(in[0], {1, 0, 2}, {5, 6, 7}, {2, 1, 3});
      },
      gather(x, {2, 6, 2}, [](const Idx& i) {
        return Idx{1 + 2 * i[0], i[1], 2 + 3 * i[2]};
      })));
  s.cases.push_back(make_case(
      "unit strides", {x},
      [](auto& in) {
        return slice(in[0], {0, 2, 3}, {5, 4, 7});
      },
      gather(x, {5, 2, 4}, [](const Idx& i) {
        return Idx{i[0], 2 + i[1], 3 + i[2]};
      })));
  s.cases.push_back(make_case(
      "empty result", {x},
      [](auto& in) {
        return slice(in[0], {2, 0, 0}, {2, 6, 7});
      },
      gather(x, {0, 6, 7}, [](const Idx& i) { return i; })));
  auto b = random_array({9}, DType::kBF16, 51);
  s.cases.push_back(make_case(
      "slice_axis [1:8:3]", {b}, [](auto& in) { return slice_axis(in[0], 0, 1, 8, 3); },
      gather(b, {3}, [](const Idx& i) { return Idx{1 + 3 * i[0]}; })));
  s.cases.push_back(make_case(
      "slice_axis [-3:]", {b}, [](auto& in) { return slice_axis(in[0], -1, -3, std::nullopt); },
      gather(b, {3}, [](const Idx& i) { return Idx{6 + i[0]}; })));
  s.cases.push_back(make_case(
      "slice_axis [::-2]", {b},
      [](auto& in) { return slice_axis(in[0], 0, std::nullopt, std::nullopt, -2); },
      gather(b, {5}, [](const Idx& i) { return Idx{8 - 2 * i[0]}; })));
  s.cases.push_back(make_case(
      "slice_axis [7:1:-3]", {b}, [](auto& in) { return slice_axis(in[0], 0, 7, 1, -3); },
      gather(b, {2}, [](const Idx& i) { return Idx{7 - 3 * i[0]}; })));
  s.cases.push_back(make_case(
      "slice_axis clamps [-20:20]", {b}, [](auto& in) { return slice_axis(in[0], 0, -20, 20, 4); },
      gather(b, {3}, [](const Idx& i) { return Idx{4 * i[0]}; })));
  s.cases.push_back(make_case(
      "slice_axis [5:2] empty", {b}, [](auto& in) { return slice_axis(in[0], 0, 5, 2); },
      gather(b, {0}, [](const Idx& i) { return i; })));
  auto i64 = random_array({4, 8}, DType::kI64, 52, -1000, 1000);
  s.cases.push_back(make_case(
      "i64 axis -1", {i64}, [](auto& in) { return slice_axis(in[0], -1, 2, 6, 1); },
      gather(i64, {4, 4}, [](const Idx& i) {
        return Idx{i[0], 2 + i[1]};
      })));
  auto bl = random_array({6, 2}, DType::kBool, 53);
  s.cases.push_back(make_case(
      "bool", {bl},
      [](auto& in) {
        return slice(in[0], {1, 1}, {6, 2}, {2, 1});
      },
      gather(bl, {3, 1}, [](const Idx& i) {
        return Idx{1 + 2 * i[0], 1};
      })));
  auto t = random_array({4, 6}, DType::kF64, 54);
  s.cases.push_back(make_case(
      "slice of transpose", {t},
      [](auto& in) {
        return slice(transpose(in[0]), {1, 1}, {6, 4}, {2, 2});
      },
      gather(t, {3, 2}, [](const Idx& i) {
        return Idx{1 + 2 * i[1], 1 + 2 * i[0]};
      })));
  return s;
}

GRAFT_SPEC(DynamicSlice) {
  Spec s{PrimitiveId::kDynamicSlice};
  auto x = random_array({5, 6}, DType::kF32, 60);
  s.cases.push_back(make_case(
      "in range", {x, Array(1), Array(2)},
      [](auto& in) {
        return dynamic_slice(in[0], {in[1], in[2]}, {3, 2});
      },
      gather(x, {3, 2}, [](const Idx& i) {
        return Idx{1 + i[0], 2 + i[1]};
      })));
  // As in JAX, a negative start is wrapped once (plus the dim), then starts are clamped so
  // the block fits: (4, -3) -> (4, 3) -> (2, 3) (lax.dynamic_slice gives the same block).
  s.cases.push_back(make_case(
      "clamped", {x, scalar(4, DType::kI64), scalar(-3, DType::kI32)},
      [](auto& in) {
        return dynamic_slice(in[0], {in[1], in[2]}, {3, 2});
      },
      gather(x, {3, 2}, [](const Idx& i) {
        return Idx{2 + i[0], 3 + i[1]};
      })));
  s.cases.push_back(make_case(
      "u8 start, big", {x, scalar(200, DType::kU8), Array(0)},
      [](auto& in) {
        return dynamic_slice(in[0], {in[1], in[2]}, {1, 6});
      },
      gather(x, {1, 6}, [](const Idx& i) {
        return Idx{4, i[1]};
      })));
  auto b = random_array({4, 3, 2}, DType::kBF16, 61);
  s.cases.push_back(make_case(
      "bf16 rank 3, empty size", {b, Array(1), Array(1), Array(0)},
      [](auto& in) {
        return dynamic_slice(in[0], {in[1], in[2], in[3]}, {2, 0, 2});
      },
      gather(b, {2, 0, 2}, [](const Idx& i) { return i; })));
  s.cases.push_back(make_case(
      "bf16 rank 3", {b, Array(1), Array(1), Array(0)},
      [](auto& in) {
        return dynamic_slice(in[0], {in[1], in[2], in[3]}, {2, 2, 2});
      },
      gather(b, {2, 2, 2}, [](const Idx& i) {
        return Idx{1 + i[0], 1 + i[1], i[2]};
      })));
  auto sc = random_array({}, DType::kI32, 62, -9, 9);
  s.cases.push_back(make_case(
      "scalar", {sc}, [](auto& in) { return dynamic_slice(in[0], {}, {}); },
      gather(sc, {}, [](const Idx&) { return Idx{}; })));
  // JAX parity: lax.dynamic_slice(jnp.arange(30.).reshape(5, 6), (-1, -1), (3, 2)) reads the
  // block at (2, 4) (wrapped to (4, 5), then clamped); (-6, -100) reads (0, 0) (JAX 0.10.2).
  s.cases.push_back(make_case(
      "negative starts wrap (JAX)", {x, Array(-1), scalar(-1, DType::kI64)},
      [](auto& in) {
        return dynamic_slice(in[0], {in[1], in[2]}, {3, 2});
      },
      gather(x, {3, 2}, [](const Idx& i) {
        return Idx{2 + i[0], 4 + i[1]};
      })));
  s.cases.push_back(make_case(
      "very negative starts clamp to 0 (JAX)", {x, Array(-6), Array(-100)},
      [](auto& in) {
        return dynamic_slice(in[0], {in[1], in[2]}, {3, 2});
      },
      gather(x, {3, 2}, [](const Idx& i) { return i; })));
  auto t = random_array({4, 5}, DType::kF64, 63);
  s.cases.push_back(make_case(
      "of transpose", {t, Array(3), Array(1)},
      [](auto& in) {
        return dynamic_slice(transpose(in[0]), {in[1], in[2]}, {2, 3});
      },
      gather(t, {2, 3}, [](const Idx& i) {
        return Idx{1 + i[1], 3 + i[0]};
      })));
  return s;
}

GRAFT_SPEC(DynamicUpdateSlice) {
  Spec s{PrimitiveId::kDynamicUpdateSlice};
  auto dus_ref = [](const Array& x, const Array& u, Idx start) {
    std::vector<double> xv = values_of(x), uv = values_of(u);
    return build(x.shape(), x.dtype(), [=, xs = x.shape(), us = u.shape()](const Idx& i) {
      Idx j(i.size());
      for (size_t d = 0; d < i.size(); ++d) {
        j[d] = i[d] - start[d];
        if (j[d] < 0 || j[d] >= us[d]) return xv[ravel(i, xs)];
      }
      return uv[ravel(j, us)];
    });
  };
  auto x = random_array({5, 6}, DType::kF32, 70);
  auto u = random_array({2, 3}, DType::kF32, 71);
  s.cases.push_back(make_case(
      "in range", {x, u, Array(1), Array(2)},
      [](auto& in) {
        return dynamic_update_slice(in[0], in[1], {in[2], in[3]});
      },
      dus_ref(x, u, {1, 2})));
  // -1 wraps to 5, then clamps to 3 (as lax.dynamic_update_slice).
  s.cases.push_back(make_case(
      "clamped (9, -1) -> (3, 3)", {x, u, Array(9), scalar(-1, DType::kI64)},
      [](auto& in) {
        return dynamic_update_slice(in[0], in[1], {in[2], in[3]});
      },
      dus_ref(x, u, {3, 3})));
  // JAX parity: lax.dynamic_update_slice of a (2, 3) update into a (5, 6) operand at
  // (-2, -4) writes at (3, 2) (wrapped to (3, 2), in range) (JAX 0.10.2).
  s.cases.push_back(make_case(
      "negative starts wrap (JAX)", {x, u, Array(-2), scalar(-4, DType::kI64)},
      [](auto& in) {
        return dynamic_update_slice(in[0], in[1], {in[2], in[3]});
      },
      dus_ref(x, u, {3, 2})));
  auto xi = random_array({3, 4, 2}, DType::kI32, 72, -100, 100);
  auto ui = random_array({3, 1, 2}, DType::kI32, 73, -100, 100);
  s.cases.push_back(make_case(
      "i32 rank 3", {xi, ui, Array(0), Array(3), Array(0)},
      [](auto& in) {
        return dynamic_update_slice(in[0], in[1], {in[2], in[3], in[4]});
      },
      dus_ref(xi, ui, {0, 3, 0})));
  auto xb = random_array({4}, DType::kBF16, 74);
  auto ue = random_array({0}, DType::kBF16, 75);
  s.cases.push_back(make_case(
      "empty update", {xb, ue, Array(2)},
      [](auto& in) { return dynamic_update_slice(in[0], in[1], {in[2]}); }, dus_ref(xb, ue, {2})));
  auto xs = random_array({}, DType::kF64, 76);
  auto us = random_array({}, DType::kF64, 77);
  s.cases.push_back(make_case(
      "scalar", {xs, us}, [](auto& in) { return dynamic_update_slice(in[0], in[1], {}); },
      dus_ref(xs, us, {})));
  auto xl = random_array({4, 3}, DType::kBool, 78);
  auto ul = random_array({3, 1}, DType::kBool, 79);
  s.cases.push_back(make_case(
      "bool into transpose", {xl, ul, Array(0), Array(1)},
      [](auto& in) {
        return dynamic_update_slice(transpose(in[0]), in[1], {in[2], in[3]});
      },
      [&] {
        std::vector<double> xv = values_of(xl), uv = values_of(ul);
        return build({3, 4}, DType::kBool,
                     [=](const Idx& i) { return i[1] == 1 ? uv[i[0]] : xv[i[1] * 3 + i[0]]; });
      }()));
  return s;
}

}  // namespace graft::spec
