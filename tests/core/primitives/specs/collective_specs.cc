// Specs of the collectives and pmap: each case runs the collective inside pmap over 4 members
// (GRAFT_CPU_DEVICES=4, set for the tests that use this table), member d on x[d]. References
// are loops over the stacked input. The transform harness then differentiates, batches and
// jits the pmap, which interprets the collective's rules inside its body.
#include <cmath>
#include <string>

#include "tests/core/primitives/specs/spec.h"
#include "transforms/pmap.h"
#include "transforms/shard_map.h"

namespace graft::spec {
namespace {

constexpr int kN = 4;

using Fn = std::function<Array(const std::vector<Array>&)>;

// A case applying op inside pmap to one input stacked over the members.
Fn mapped(std::function<Array(const Array&)> op) {
  return [op](const std::vector<Array>& in) { return pmap(op, "i")(in[0]); };
}

// Values and shape of a stacked input: v[d * per + k] is member d's element k.
struct Stacked {
  std::vector<double> v;
  int64_t per;
  double at(int d, int64_t k) const { return v[static_cast<size_t>(d * per + k)]; }
};

Stacked stacked(const Array& x) { return {values_of(x), numel(x.shape()) / kN}; }

std::string name(DType d, const std::string& what) {
  return std::string(dtype_name(d)) + " " + what;
}

double tol(DType d) { return is_floating(d) ? default_rtol(d) * 4 : 0; }

void add_all_reduce(Spec& s, PrimitiveId id) {
  for (DType d : {DType::kF64, DType::kF32, DType::kI32, DType::kBF16}) {
    // Distinct values, so that pmax / pmin have no ties (their derivative is defined there).
    Array x = random_array({kN, 2, 3}, d, 300 + static_cast<int>(id), -3, 3);
    Stacked h = stacked(x);
    std::vector<double> want;
    for (int m = 0; m < kN; ++m) {
      for (int64_t k = 0; k < h.per; ++k) {
        double acc = h.at(0, k);
        for (int q = 1; q < kN; ++q) {
          double v = h.at(q, k);
          acc = id == PrimitiveId::kPsum   ? acc + v
                : id == PrimitiveId::kPmax ? std::max(acc, v)
                                           : std::min(acc, v);
        }
        want.push_back(round_to(acc, d));
      }
    }
    std::function<Array(const Array&)> op =
        id == PrimitiveId::kPsum   ? [](const Array& v) { return psum(v, {"i"}); }
        : id == PrimitiveId::kPmax ? [](const Array& v) { return pmax(v, {"i"}); }
                                   : [](const Array& v) { return pmin(v, {"i"}); };
    s.cases.push_back(
        {name(d, "over 4 members"), {x}, mapped(op), {{kN, 2, 3}, d, want}, tol(d), 0});
  }
}

}  // namespace

GRAFT_SPEC(Psum) {
  Spec s{PrimitiveId::kPsum};
  add_all_reduce(s, PrimitiveId::kPsum);
  return s;
}

GRAFT_SPEC(Pmax) {
  Spec s{PrimitiveId::kPmax};
  add_all_reduce(s, PrimitiveId::kPmax);
  return s;
}

GRAFT_SPEC(Pmin) {
  Spec s{PrimitiveId::kPmin};
  add_all_reduce(s, PrimitiveId::kPmin);
  return s;
}

GRAFT_SPEC(AllGather) {
  Spec s{PrimitiveId::kAllGather};
  for (DType d : {DType::kF64, DType::kF32, DType::kI32}) {
    Array x = random_array({kN, 2, 3}, d, 310);
    Stacked h = stacked(x);
    // axis 1: out_m[i, q, j] = x_q[i, j].
    std::vector<double> want;
    for (int m = 0; m < kN; ++m)
      for (int i = 0; i < 2; ++i)
        for (int q = 0; q < kN; ++q)
          for (int j = 0; j < 3; ++j) want.push_back(h.at(q, i * 3 + j));
    s.cases.push_back({name(d, "axis 1"),
                       {x},
                       mapped([](const Array& v) { return all_gather(v, "i", 1); }),
                       {{kN, 2, kN, 3}, d, want},
                       0,
                       0});
    // tiled axis 0: out_m[q * 2 + i, j] = x_q[i, j].
    std::vector<double> tiled;
    for (int m = 0; m < kN; ++m)
      for (int q = 0; q < kN; ++q)
        for (int k = 0; k < 6; ++k) tiled.push_back(h.at(q, k));
    s.cases.push_back({name(d, "tiled axis 0"),
                       {x},
                       mapped([](const Array& v) { return all_gather(v, "i", 0, true); }),
                       {{kN, 2 * kN, 3}, d, tiled},
                       0,
                       0});
  }
  return s;
}

GRAFT_SPEC(PsumScatter) {
  Spec s{PrimitiveId::kPsumScatter};
  for (DType d : {DType::kF64, DType::kF32, DType::kI32}) {
    Array x = random_array({kN, kN, 3}, d, 320);
    Stacked h = stacked(x);
    // dim 0: out_m[j] = sum_q x_q[m, j].
    std::vector<double> want;
    for (int m = 0; m < kN; ++m)
      for (int j = 0; j < 3; ++j) {
        double acc = 0;
        for (int q = 0; q < kN; ++q) acc += h.at(q, m * 3 + j);
        want.push_back(round_to(acc, d));
      }
    s.cases.push_back({name(d, "dim 0"),
                       {x},
                       mapped([](const Array& v) { return psum_scatter(v, "i", 0); }),
                       {{kN, 3}, d, want},
                       tol(d),
                       0});
  }
  Array y = random_array({kN, 2, 8}, DType::kF64, 321);
  Stacked h = stacked(y);
  // tiled dim 1: out_m[i, k] = sum_q y_q[i, m * 2 + k].
  std::vector<double> want;
  for (int m = 0; m < kN; ++m)
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 2; ++k) {
        double acc = 0;
        for (int q = 0; q < kN; ++q) acc += h.at(q, i * 8 + m * 2 + k);
        want.push_back(acc);
      }
  s.cases.push_back({"f64 tiled dim 1",
                     {y},
                     mapped([](const Array& v) { return psum_scatter(v, "i", 1, true); }),
                     {{kN, 2, 2}, DType::kF64, want},
                     1e-14,
                     0});
  return s;
}

GRAFT_SPEC(AllToAll) {
  Spec s{PrimitiveId::kAllToAll};
  for (DType d : {DType::kF64, DType::kF32, DType::kI32}) {
    Array x = random_array({kN, kN, 3}, d, 330);
    Stacked h = stacked(x);
    // split 0, concat 1: out_m[j, q] = x_q[m, j].
    std::vector<double> want;
    for (int m = 0; m < kN; ++m)
      for (int j = 0; j < 3; ++j)
        for (int q = 0; q < kN; ++q) want.push_back(h.at(q, m * 3 + j));
    s.cases.push_back({name(d, "split 0 concat 1"),
                       {x},
                       mapped([](const Array& v) { return all_to_all(v, "i", 0, 1); }),
                       {{kN, 3, kN}, d, want},
                       0,
                       0});
  }
  Array y = random_array({kN, 2, 8}, DType::kF64, 331);
  Stacked h = stacked(y);
  // tiled, split 1, concat 0: out_m[q * 2 + i, k] = y_q[i, m * 2 + k].
  std::vector<double> want;
  for (int m = 0; m < kN; ++m)
    for (int q = 0; q < kN; ++q)
      for (int i = 0; i < 2; ++i)
        for (int k = 0; k < 2; ++k) want.push_back(h.at(q, i * 8 + m * 2 + k));
  s.cases.push_back({"f64 tiled split 1 concat 0",
                     {y},
                     mapped([](const Array& v) { return all_to_all(v, "i", 1, 0, true); }),
                     {{kN, 2 * kN, 2}, DType::kF64, want},
                     0,
                     0});
  return s;
}

GRAFT_SPEC(Ppermute) {
  Spec s{PrimitiveId::kPpermute};
  const int src_of[kN] = {-1, 2, 0, -1};  // perm (0 -> 2), (2 -> 1)
  for (DType d : {DType::kF64, DType::kF32, DType::kI32, DType::kBool}) {
    Array x = random_array({kN, 2, 3}, d, 340);
    Stacked h = stacked(x);
    std::vector<double> want;
    for (int m = 0; m < kN; ++m)
      for (int64_t k = 0; k < h.per; ++k) want.push_back(src_of[m] < 0 ? 0 : h.at(src_of[m], k));
    s.cases.push_back({name(d, "partial permutation"),
                       {x},
                       mapped([](const Array& v) {
                         return ppermute(v, "i", {{0, 2}, {2, 1}});
                       }),
                       {{kN, 2, 3}, d, want},
                       0,
                       0});
  }
  return s;
}

GRAFT_SPEC(AxisIndex) {
  Spec s{PrimitiveId::kAxisIndex};
  for (DType d : {DType::kF64, DType::kF32}) {
    Array x = random_array({kN, 3}, d, 350);
    Stacked h = stacked(x);
    std::vector<double> want;
    for (int m = 0; m < kN; ++m)
      for (int k = 0; k < 3; ++k) want.push_back(round_to(h.at(m, k) * m, d));
    s.cases.push_back({name(d, "scales member d by d"),
                       {x},
                       mapped([d](const Array& v) { return v * astype(axis_index("i"), d); }),
                       {{kN, 3}, d, want},
                       tol(d),
                       0});
  }
  Array x = random_array({kN}, DType::kF32, 351);
  s.cases.push_back(
      {"alone, as i32",
       {x},
       mapped([](const Array& v) { return axis_index("i") + astype(v * 0.0f, DType::kI32); }),
       {{kN}, DType::kI32, {0, 1, 2, 3}},
       0,
       0});
  return s;
}

GRAFT_SPEC(Pvary) {
  Spec s{PrimitiveId::kPvary};
  for (DType d : {DType::kF64, DType::kF32}) {
    Array x = random_array({kN, 3}, d, 360), u = random_array({3}, d, 361);
    std::vector<double> xv = values_of(x), uv = values_of(u), want;
    for (int m = 0; m < kN; ++m)
      for (int k = 0; k < 3; ++k) want.push_back(round_to(xv[m * 3 + k] * uv[k], d));
    Fn fn = [](const std::vector<Array>& in) {
      return pmap([](const Array& v, const Array& w) { return v * pvary(w, {"i"}); }, "i",
                  {0, none})(in[0], in[1]);
    };
    s.cases.push_back(
        {name(d, "of an unmapped argument"), {x, u}, fn, {{kN, 3}, d, want}, tol(d), 0});
  }
  return s;
}

GRAFT_SPEC(ShardingConstraint) {
  Spec s{PrimitiveId::kShardingConstraint};
  // The identity on values; the harness's jit check partitions over the constraint's mesh
  // (the value is cut into [2, 3] blocks and put back together).
  const Mesh mesh({2, 2}, {"a", "b"});
  for (DType d : {DType::kF64, DType::kF32}) {
    Array x = random_array({4, 6}, d, 390);
    Fn fn = [mesh](const std::vector<Array>& in) {
      return with_sharding_constraint(in[0] * 2.0, NamedSharding(mesh, P("a", "b")));
    };
    std::vector<double> want;
    for (double v : values_of(x)) want.push_back(round_to(v * 2, d));
    s.cases.push_back({name(d, "split over both axes"), {x}, fn, {{4, 6}, d, want}, tol(d), 0});
  }
  return s;
}

GRAFT_SPEC(ShardMap) {
  Spec s{PrimitiveId::kShardMap};
  // A 2 x 2 mesh: x [4, 6] split P('data', 'model') into [2, 3] blocks; each device adds its
  // coordinates (axis_index) and the row sums over 'model' (psum): out[r, c] = x[r, c] +
  // 10 data(r) + model(c) + sum of x[r, :] over the columns of the devices in its row.
  {
    Array x = random_array({4, 6}, DType::kF64, 380);
    std::vector<double> xv = values_of(x), want;
    for (int r = 0; r < 4; ++r) {
      double row = 0;
      for (int c = 0; c < 6; ++c) row += xv[r * 6 + c];
      for (int c = 0; c < 6; ++c) want.push_back(xv[r * 6 + c] + 10 * (r / 2) + c / 3 + row);
    }
    Fn fn = [](const std::vector<Array>& in) {
      Mesh mesh({2, 2}, {"data", "model"});
      auto f = [](const Array& v) {
        Array d = astype(axis_index("data"), DType::kF64),
              m = astype(axis_index("model"), DType::kF64);
        return v + d * 10.0 + m + psum(sum(v, {1}, true), {"model"});
      };
      return shard_map(f, mesh, {P("data", "model")}, {P("data", "model")})(in[0]);
    };
    s.cases.push_back({"f64 2x2 mesh", {x}, fn, {{4, 6}, DType::kF64, want}, 1e-14, 0});
  }
  for (DType d : {DType::kF64, DType::kF32}) {
    Array x = random_array({3, kN}, d, 370), u = random_array({3}, d, 371);
    std::vector<double> xv = values_of(x), uv = values_of(u), want;
    // in_axes (1, none), out_axes 0: out[m, k] = sin(x[k, m]) * u[k].
    for (int m = 0; m < kN; ++m)
      for (int k = 0; k < 3; ++k) want.push_back(round_to(std::sin(xv[k * kN + m]) * uv[k], d));
    Fn fn = [](const std::vector<Array>& in) {
      return pmap([](const Array& v, const Array& w) { return sin(v) * w; }, "i", {1, none})(in[0],
                                                                                             in[1]);
    };
    s.cases.push_back({name(d, "in_axes (1, none)"), {x, u}, fn, {{kN, 3}, d, want}, tol(d), 0});
  }
  Array x = random_array({kN, 2}, DType::kF64, 372);
  std::vector<double> xv = values_of(x), want;
  // out_axes 1: out[k, m] = x[m, k] ** 2.
  for (int k = 0; k < 2; ++k)
    for (int m = 0; m < kN; ++m) want.push_back(xv[m * 2 + k] * xv[m * 2 + k]);
  s.cases.push_back({"f64 out_axes 1",
                     {x},
                     [](const std::vector<Array>& in) {
                       return pmap([](const Array& v) { return v * v; }, "i", {0}, {1})(in[0]);
                     },
                     {{2, kN}, DType::kF64, want},
                     1e-15,
                     0});
  return s;
}

}  // namespace graft::spec
