// Public linalg ops: dot_general, matmul, dot, outer, ragged_dot (jax.lax / jax.numpy
// semantics).
#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "core/lax/lax.h"
#include "core/lax/util.h"
#include "core/primitives/linalg.h"

namespace graft {

namespace {

// Normalizes possibly negative dims against `rank`, naming `op` when one is out of range.
std::vector<int> normalize_dims(std::string_view op, const char* side, std::vector<int> dims,
                                const Shape& shape) {
  const int rank = static_cast<int>(shape.size());
  for (int& d : dims) {
    if (d < -rank || d >= rank) {
      fail(op, side, " dim ", d, " is out of range for an operand of shape ", shape_str(shape));
    }
    if (d < 0) d += rank;
  }
  return dims;
}

// The output's shape is checked first, so a product beyond int64 (an outer product of two
// 2^32-vectors) names the public op rather than dot_general.
Array bind_dot(std::string_view op, const Array& a, const Array& b, DotDims dims,
               std::optional<DType> preferred) {
  if (is_complex(a.dtype())) {
    // (ar + i ai)(br + i bi) through four real products (dot_general takes real values).
    std::optional<DType> part;
    if (preferred) part = complex_part_dtype(*preferred);
    auto dot = [&](const Array& x, const Array& y) { return bind_dot(op, x, y, dims, part); };
    const Array ar = real(a), ai = imag(a), br = real(b), bi = imag(b);
    return complex(dot(ar, br) - dot(ai, bi), dot(ar, bi) + dot(ai, br));
  }
  auto p = std::make_shared<const DotGeneral>(std::move(dims), preferred);
  for (const Aval& out : p->infer({a.aval(), b.aval()})) check_shape(op, out.shape, out.dtype);
  return bind1(std::move(p), {a, b});
}

// Promotes both operands to their common dtype, rejecting bool with `op`'s name.
std::pair<Array, Array> promote(std::string_view op, const Array& a, const Array& b) {
  detail::check_valid(op, a);
  detail::check_valid(op, b);
  TypeInfo t = promote_types({a.dtype(), a.weak_type()}, {b.dtype(), b.weak_type()}, op);
  if (t.dtype == DType::kBool) {
    fail(op, "bool operands are not supported (cast them to a numeric dtype first), got ",
         a.aval().str(), " and ", b.aval().str());
  }
  return {detail::convert(a, t.dtype, t.weak), detail::convert(b, t.dtype, t.weak)};
}

Shape without(const Shape& s, const std::vector<int>& drop) {
  Shape out;
  for (int i = 0; i < static_cast<int>(s.size()); ++i) {
    if (std::find(drop.begin(), drop.end(), i) == drop.end()) out.push_back(s[i]);
  }
  return out;
}

}  // namespace

Array dot_general(const Array& lhs, const Array& rhs, const DotDims& dims,
                  std::optional<DType> preferred) {
  constexpr std::string_view op = "dot_general";
  // Operands of the two fp8 types meet unpromoted when the output dtype is given (lax's rule).
  const bool mixed_float8 = lhs.valid() && rhs.valid() && is_float8(lhs.dtype()) &&
                            is_float8(rhs.dtype()) && preferred;
  auto [a, b] = mixed_float8 ? std::pair{lhs, rhs} : promote(op, lhs, rhs);
  DotDims nd{normalize_dims(op, "lhs", dims.lhs_contract, a.shape()),
             normalize_dims(op, "rhs", dims.rhs_contract, b.shape()),
             normalize_dims(op, "lhs", dims.lhs_batch, a.shape()),
             normalize_dims(op, "rhs", dims.rhs_batch, b.shape())};
  check_dot_general(op, a.aval(), b.aval(), nd, preferred);
  return bind_dot(op, a, b, std::move(nd), preferred);
}

// jnp.matmul, following jax.numpy's own lowering: batch dims that both operands have (with
// equal sizes) become dot_general batch dims; a batch dim only one operand has (or where the
// other has size 1) becomes a free dim of that operand, so nothing is broadcast in memory; a
// final transpose puts the dims in matmul's order.
Array matmul(const Array& a_in, const Array& b_in) {
  constexpr std::string_view op = "matmul";
  auto [a, b] = promote(op, a_in, b_in);
  const int ra = a.ndim(), rb = b.ndim();
  if (ra == 0 || rb == 0) {
    fail(op, "operands must have rank >= 1 (use multiply for scalars), got ", shape_str(a.shape()),
         " @ ", shape_str(b.shape()));
  }
  const int64_t ka = a.shape()[ra - 1];
  const int64_t kb = rb == 1 ? b.shape()[0] : b.shape()[rb - 2];
  if (ka != kb) {
    fail(op, "contracting dims differ: ", shape_str(a.shape()), " @ ", shape_str(b.shape()));
  }
  const bool a_mat = ra > 1, b_mat = rb > 1;
  const int na = a_mat ? ra - 2 : 0, nb = b_mat ? rb - 2 : 0;
  const int nbatch = std::max(na, nb);
  std::vector<int> a_squeeze, b_squeeze, a_batch, b_batch, idx_batch, idx_a, idx_b;
  for (int i = 0; i < nbatch; ++i) {
    const int ia = i - (nbatch - na), ib = i - (nbatch - nb);  // < 0: operand lacks the dim
    const int64_t da = ia >= 0 ? a.shape()[ia] : -1, db = ib >= 0 ? b.shape()[ib] : -1;
    const int pos = static_cast<int>(idx_batch.size());
    if (ia < 0) {
      idx_b.push_back(i);
    } else if (ib < 0) {
      idx_a.push_back(i);
    } else if (da == 1) {
      idx_b.push_back(i);
      a_squeeze.push_back(ia);
    } else if (db == 1) {
      idx_a.push_back(i);
      b_squeeze.push_back(ib);
    } else if (da == db) {
      a_batch.push_back(pos + static_cast<int>(idx_a.size()));
      b_batch.push_back(pos + static_cast<int>(idx_b.size()));
      idx_batch.push_back(i);
    } else {
      fail(op, "batch dims do not broadcast: ", shape_str(a.shape()), " @ ", shape_str(b.shape()));
    }
  }
  if (a_mat) idx_a.push_back(nbatch);
  if (b_mat) idx_b.push_back(nbatch + (a_mat ? 1 : 0));
  if (!a_squeeze.empty()) a = reshape(a, without(a.shape(), a_squeeze));
  if (!b_squeeze.empty()) b = reshape(b, without(b.shape(), b_squeeze));
  DotDims dims{{a.ndim() - 1}, {b.ndim() - 1 - (b_mat ? 1 : 0)}, a_batch, b_batch};
  Array out = bind_dot(op, a, b, std::move(dims), std::nullopt);
  // dot_general's output dim j is matmul's output dim order[j].
  std::vector<int> order = idx_batch;
  order.insert(order.end(), idx_a.begin(), idx_a.end());
  order.insert(order.end(), idx_b.begin(), idx_b.end());
  std::vector<int> perm(order.size());
  for (int j = 0; j < static_cast<int>(order.size()); ++j) perm[order[j]] = j;
  bool identity = true;
  for (int j = 0; j < static_cast<int>(perm.size()); ++j) identity = identity && perm[j] == j;
  return identity ? out : transpose(out, perm);
}

// jnp.dot: scalars multiply; otherwise contract a's last dim with b's second-to-last (or
// only) dim: out = a's other dims, then b's other dims.
Array dot(const Array& a_in, const Array& b_in) {
  constexpr std::string_view op = "dot";
  detail::check_valid(op, a_in);
  detail::check_valid(op, b_in);
  if (a_in.ndim() == 0 || b_in.ndim() == 0) return multiply(a_in, b_in);
  auto [a, b] = promote(op, a_in, b_in);
  const int ca = a.ndim() - 1, cb = std::max(b.ndim() - 2, 0);
  if (a.shape()[ca] != b.shape()[cb]) {
    fail(op, "contracting dims differ: ", shape_str(a.shape()), " @ ", shape_str(b.shape()));
  }
  return bind_dot(op, a, b, DotDims{{ca}, {cb}, {}, {}}, std::nullopt);
}

// jnp.outer: the flattened operands' outer product, a dot_general with nothing contracted
// (bool operands multiply, which is logical and, as in jnp).
Array outer(const Array& a, const Array& b) {
  constexpr std::string_view op = "outer";
  detail::check_valid(op, a);
  detail::check_valid(op, b);
  Array fa = a.ndim() == 1 ? a : reshape(a, {a.size()});
  Array fb = b.ndim() == 1 ? b : reshape(b, {b.size()});
  if (detail::result_type({a, b}).dtype == DType::kBool) {
    return multiply(reshape(fa, {fa.size(), 1}), reshape(fb, {1, fb.size()}));
  }
  auto [pa, pb] = promote(op, fa, fb);
  return bind_dot(op, pa, pb, DotDims{}, std::nullopt);
}

namespace {

Array bind_ragged(std::string_view op, const Array& lhs, const Array& rhs, const Array& sizes,
                  RaggedMode mode) {
  detail::check_valid(op, sizes);
  auto [a, b] = promote(op, lhs, rhs);
  check_ragged_dot(op, a.aval(), b.aval(), sizes.aval(), mode);
  return apply<RaggedDot>({a, b, sizes}, mode);
}

}  // namespace

Array ragged_dot(const Array& lhs, const Array& rhs, const Array& group_sizes) {
  return bind_ragged("ragged_dot", lhs, rhs, group_sizes, RaggedMode::kRaggedRows);
}

Array ragged_dot_transposed(const Array& lhs, const Array& rhs, const Array& group_sizes) {
  return bind_ragged("ragged_dot_transposed", lhs, rhs, group_sizes, RaggedMode::kRaggedContract);
}

}  // namespace graft
