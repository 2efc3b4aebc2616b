// Specs for ragged_dot (both modes), reached through ragged_dot and ragged_dot_transposed.
// References are plain loops in double over the inputs' stored values, with the group sizes
// clamped as documented (negative -> 0, groups cut at row m), rounded to the dtype at the end.
#include <algorithm>

#include "tests/core/primitives/specs/spec.h"

namespace graft::spec {
namespace {

// [start, end) of each group after clamping.
std::vector<std::pair<int64_t, int64_t>> bounds(const std::vector<double>& sizes, int64_t m) {
  std::vector<std::pair<int64_t, int64_t>> b;
  int64_t s = 0;
  for (double v : sizes) {
    int64_t e = std::min<int64_t>(s + std::max<int64_t>(static_cast<int64_t>(v), 0), m);
    b.push_back({s, e});
    s = e;
  }
  return b;
}

Expected ref_rows(const Array& l, const Array& r, const std::vector<double>& sizes) {
  const int64_t m = l.shape()[0], k = l.shape()[1], n = r.shape()[2];
  std::vector<double> lv = values_of(l), rv = values_of(r);
  Expected e{{m, n}, l.dtype(), std::vector<double>(m * n, 0.0)};
  auto b = bounds(sizes, m);
  for (size_t g = 0; g < b.size(); ++g) {
    for (int64_t i = b[g].first; i < b[g].second; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += lv[i * k + p] * rv[(g * k + p) * n + j];
        e.values[i * n + j] = s;
      }
    }
  }
  for (double& v : e.values) v = round_to(v, l.dtype());
  return e;
}

Expected ref_contract(const Array& l, const Array& r, const std::vector<double>& sizes) {
  const int64_t m = l.shape()[0], k = l.shape()[1], n = r.shape()[1];
  const int64_t g = static_cast<int64_t>(sizes.size());
  std::vector<double> lv = values_of(l), rv = values_of(r);
  Expected e{{g, k, n}, l.dtype(), std::vector<double>(g * k * n, 0.0)};
  auto b = bounds(sizes, m);
  for (int64_t gi = 0; gi < g; ++gi) {
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t i = b[gi].first; i < b[gi].second; ++i) s += lv[i * k + p] * rv[i * n + j];
        e.values[(gi * k + p) * n + j] = round_to(s, l.dtype());
      }
    }
  }
  return e;
}

void tol(Case& c, DType dt) {
  c.rtol = dt == DType::kBF16 ? 1e-2 : dt == DType::kF16 ? 2e-3 : dt == DType::kF32 ? 1e-5 : 1e-12;
  c.atol = dt == DType::kBF16 ? 1e-2 : dt == DType::kF16 ? 2e-3 : dt == DType::kF32 ? 1e-4 : 1e-12;
}

void add_rows(Spec& s, std::string name, int64_t m, int64_t k, int64_t n,
              const std::vector<double>& sizes, DType dt, uint32_t seed) {
  const int64_t g = static_cast<int64_t>(sizes.size());
  Array l = random_array({m, k}, dt, seed), r = random_array({g, k, n}, dt, seed + 1);
  Array gs = make(sizes, {g}, DType::kI32);
  Case c{name,
         {l, r, gs},
         [](const std::vector<Array>& in) { return ragged_dot(in[0], in[1], in[2]); },
         ref_rows(l, r, sizes)};
  tol(c, dt);
  s.cases.push_back(std::move(c));
}

void add_contract(Spec& s, std::string name, int64_t m, int64_t k, int64_t n,
                  const std::vector<double>& sizes, DType dt, uint32_t seed) {
  const int64_t g = static_cast<int64_t>(sizes.size());
  Array l = random_array({m, k}, dt, seed), r = random_array({m, n}, dt, seed + 1);
  Array gs = make(sizes, {g}, DType::kI32);
  Case c{name,
         {l, r, gs},
         [](const std::vector<Array>& in) { return ragged_dot_transposed(in[0], in[1], in[2]); },
         ref_contract(l, r, sizes)};
  tol(c, dt);
  s.cases.push_back(std::move(c));
}

}  // namespace

GRAFT_SPEC(RaggedDot) {
  Spec s{PrimitiveId::kRaggedDot};
  // Rows mode: an empty group, and a last row past the groups (gives 0).
  for (DType dt : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16}) {
    add_rows(s, std::string("rows_") + dtype_name(dt), 7, 3, 4, {2, 0, 4}, dt, 10);
  }
  // Bad sizes are clamped: a negative size counts as 0, the group past m is cut.
  add_rows(s, "rows_clamped_f64", 7, 3, 2, {-1, 5, 9}, DType::kF64, 20);
  add_rows(s, "rows_no_groups", 3, 2, 2, {}, DType::kF32, 21);
  add_rows(s, "rows_k0", 4, 0, 3, {1, 3}, DType::kF32, 22);
  // Groups longer than one kernel piece (512 rows): pieces 512 + 128 + 32 + ... .
  add_rows(s, "rows_long_group_f32", 700, 4, 3, {650, 50}, DType::kF32, 23);
  // Contract mode (the rhs gradient form): out[i] = lhs_i^T @ rhs_i.
  for (DType dt : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16}) {
    add_contract(s, std::string("contract_") + dtype_name(dt), 6, 3, 4, {3, 0, 2}, dt, 30);
  }
  add_contract(s, "contract_clamped_f64", 6, 2, 3, {4, -2, 7}, DType::kF64, 40);
  add_contract(s, "contract_long_group_f32", 700, 3, 2, {20, 660}, DType::kF32, 41);
  // Mixed operand dtypes promote (bf16 rhs with an f32 lhs computes in f32).
  {
    Array l = random_array({5, 3}, DType::kF32, 50), r = random_array({2, 3, 2}, DType::kBF16, 51);
    Array gs = make({2, 3}, {2}, DType::kI32);
    Case c{"promotes_bf16_f32",
           {l, r, gs},
           [](const std::vector<Array>& in) { return ragged_dot(in[0], in[1], in[2]); },
           ref_rows(l, astype(r, DType::kF32), {2, 3})};
    tol(c, DType::kF32);
    s.cases.push_back(std::move(c));
  }
  return s;
}

}  // namespace graft::spec
