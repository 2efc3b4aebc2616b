// Transform rules of dot_general. It is bilinear: the jvp is the sum of one dot_general per
// differentiated operand, and each vjp is the cotangent contracted with the other operand,
// then transposed into the operand's dim order (JAX's _dot_general_transpose_lhs/rhs).
// Batching adds a batch dim (both operands batched) or a free dim (one batched), in place.
// Integer operands have no derivative.
#include <algorithm>
#include <numeric>

#include "core/interpreters/spmd.h"
#include "core/lax/lax.h"
#include "core/primitives/linalg.h"

namespace graft {

namespace {

Array dot(const Array& a, const Array& b, const DotDims& dims, std::optional<DType> preferred) {
  return apply<DotGeneral>({a, b}, dims, preferred);
}

// Dims of a rank-`rank` operand that are neither contracted nor batch dims, in order.
std::vector<int> kept(int rank, const std::vector<int>& contract, const std::vector<int>& batch) {
  std::vector<int> out;
  for (int d = 0; d < rank; ++d) {
    if (std::find(contract.begin(), contract.end(), d) == contract.end() &&
        std::find(batch.begin(), batch.end(), d) == batch.end()) {
      out.push_back(d);
    }
  }
  return out;
}

std::vector<int> range(int start, size_t n) {
  std::vector<int> r(n);
  std::iota(r.begin(), r.end(), start);
  return r;
}

std::vector<int> argsort(const std::vector<int>& v) {
  std::vector<int> idx = range(0, v.size());
  std::sort(idx.begin(), idx.end(), [&](int a, int b) { return v[a] < v[b]; });
  return idx;
}

// The cotangent of x in dot_general(x, y) (x the lhs, or the rhs when `x_is_rhs`), from the
// output cotangent g: g contracted with y over y's free dims, batch dims matched, then
// transposed to x's dim order (JAX's _dot_general_transpose_lhs with swap_ans).
Array transpose_operand(const Array& g, const Array& x, const Array& y,
                        const std::vector<int>& x_contract, const std::vector<int>& y_contract,
                        const std::vector<int>& x_batch, const std::vector<int>& y_batch,
                        bool x_is_rhs) {
  std::vector<int> x_kept = kept(x.ndim(), x_contract, x_batch);
  std::vector<int> y_kept = kept(y.ndim(), y_contract, y_batch);
  // g's dims: batch, lhs free, rhs free.
  const int nb = static_cast<int>(x_batch.size());
  int y_start = x_is_rhs ? nb : nb + static_cast<int>(x_kept.size());
  DotDims dims{range(y_start, y_kept.size()), y_kept, range(0, nb), y_batch};
  // Computed in the wider of the two dtypes (g has the preferred dtype, y x's), written
  // in x's dtype; except that a product of two half-precision operands (a bf16 matmul with
  // an f32 result, as the loss's logits) stays a half-precision product backwards too, its
  // f32 cotangent rounded to the operands' dtype (as PyTorch's autocast does): otherwise the
  // backward matmuls of a bf16 model run at f32 speed.
  const bool half =
      (y.dtype() == DType::kBF16 || y.dtype() == DType::kF16) && x.dtype() == y.dtype();
  DType c = g.dtype() == y.dtype() || half                         ? y.dtype()
            : g.dtype() == DType::kF64 || y.dtype() == DType::kF64 ? DType::kF64
                                                                   : DType::kF32;
  std::optional<DType> out = c == x.dtype() ? std::nullopt : std::optional<DType>(x.dtype());
  // The result's dims: batch, x's kept dims, then y's contracted dims in increasing order,
  // which pair with x's contracted dims sorted by their y partner.
  Array r = dot(astype(g, c), astype(y, c), dims, out);
  std::vector<int> order = x_batch;
  order.insert(order.end(), x_kept.begin(), x_kept.end());
  for (int i : argsort(y_contract)) order.push_back(x_contract[i]);
  return transpose(r, argsort(order));
}

// dims with every dim >= d shifted up by one (a batch axis inserted at d; none if d < 0).
std::vector<int> shifted(std::vector<int> dims, int d) {
  if (d >= 0) {
    for (int& a : dims) a += a >= d ? 1 : 0;
  }
  return dims;
}

// How many of the first d dims of an operand are free (neither contracted nor batch).
int free_before(int d, const std::vector<int>& contract, const std::vector<int>& batch) {
  int n = d;
  for (const auto* list : {&contract, &batch}) {
    for (int a : *list) n -= a < d ? 1 : 0;
  }
  return n;
}

}  // namespace

std::vector<Array> DotGeneral::jvp(const std::vector<Array>& primals, const std::vector<Array>& t,
                                   const std::vector<Array>&) const {
  if (!is_floating(primals[0].dtype())) return {Array()};  // integer operands: no derivative
  Array out;
  if (t[0].valid()) out = dot(t[0], primals[1], dims_, preferred_);
  if (t[1].valid()) {
    Array r = dot(primals[0], t[1], dims_, preferred_);
    out = out.valid() ? add(out, r) : r;
  }
  return {out};
}

std::vector<Array> DotGeneral::vjp(const std::vector<Array>& primals, const std::vector<Array>&,
                                   const std::vector<Array>& ct) const {
  if (!ct[0].valid() || !is_floating(primals[0].dtype())) return {Array(), Array()};
  const Array &x = primals[0], &y = primals[1];
  const DotDims& d = dims_;
  return {transpose_operand(ct[0], x, y, d.lhs_contract, d.rhs_contract, d.lhs_batch, d.rhs_batch,
                            false),
          transpose_operand(ct[0], y, x, d.rhs_contract, d.lhs_contract, d.rhs_batch, d.lhs_batch,
                            true)};
}

Batched DotGeneral::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  const int dl = dims[0], dr = dims[1];
  DotDims nd{shifted(dims_.lhs_contract, dl), shifted(dims_.rhs_contract, dr),
             shifted(dims_.lhs_batch, dl), shifted(dims_.rhs_batch, dr)};
  const int nb = static_cast<int>(dims_.lhs_batch.size());
  int out_dim;
  if (dl >= 0 && dr >= 0) {
    // A new leading batch dim pair: the output's batch axis comes first.
    nd.lhs_batch.insert(nd.lhs_batch.begin(), dl);
    nd.rhs_batch.insert(nd.rhs_batch.begin(), dr);
    out_dim = 0;
  } else if (dl >= 0) {
    // A free lhs dim: it lands among the lhs free dims of the output.
    out_dim = nb + free_before(dl, nd.lhs_contract, nd.lhs_batch);
  } else {
    int lhs_free = args[0].ndim() - nb - static_cast<int>(dims_.lhs_contract.size());
    out_dim = nb + lhs_free + free_before(dr, nd.rhs_contract, nd.rhs_batch);
  }
  return {{dot(args[0], args[1], nd, preferred_)}, {out_dim}};
}


// ---- sharding (core/interpreters/spmd.h) ----
// Each mesh axis is used once, in this order of preference: batch dimensions (split alike on
// both sides), contracting dimensions both sides already split alike (a partial sum, psum'd),
// lhs free, rhs free dimensions, then contracting dimensions split on one side only (the
// other side is cut to match: a local slice). A dimension whose split lost out is gathered:
// FSDP's weights (split on a contracting dimension over the axis the batch already uses) are
// all_gathered, Megatron's second matmul (contracting dimension split over `model` on both
// sides) gives a partial sum over `model`.
std::optional<spmd::Plan> DotGeneral::sharding_rule(const spmd::RuleArgs& a) const {
  const DotDims& dn = dims_;
  const DimAxes& L = a.in_dims[0];
  const DimAxes& R = a.in_dims[1];
  DimAxes lhs = spmd::replicated(L.size()), rhs = spmd::replicated(R.size());
  AxisMask used = 0;
  auto mask_of = [](const std::vector<int>& axes) {
    AxisMask m = 0;
    for (int x : axes) m |= AxisMask{1} << x;
    return m;
  };
  auto take = [&](const std::vector<int>& axes) {
    if (axes.empty() || (mask_of(axes) & used) != 0) return false;
    used |= mask_of(axes);
    return true;
  };
  for (size_t k = 0; k < dn.lhs_batch.size(); ++k) {
    const auto& axes = !L[dn.lhs_batch[k]].empty() ? L[dn.lhs_batch[k]] : R[dn.rhs_batch[k]];
    if (take(axes)) lhs[dn.lhs_batch[k]] = rhs[dn.rhs_batch[k]] = axes;
  }
  spmd::Plan p;
  std::vector<bool> done(dn.lhs_contract.size(), false);
  for (size_t k = 0; k < dn.lhs_contract.size(); ++k) {
    const auto& l = L[dn.lhs_contract[k]];
    if (l == R[dn.rhs_contract[k]] && take(l)) {
      lhs[dn.lhs_contract[k]] = rhs[dn.rhs_contract[k]] = l;
      p.partial_axes.insert(p.partial_axes.end(), l.begin(), l.end());
      done[k] = true;
    }
  }
  auto is_free = [](const std::vector<int>& contract, const std::vector<int>& batch, int d) {
    return std::find(contract.begin(), contract.end(), d) == contract.end() &&
           std::find(batch.begin(), batch.end(), d) == batch.end();
  };
  for (size_t d = 0; d < L.size(); ++d) {
    if (is_free(dn.lhs_contract, dn.lhs_batch, int(d)) && take(L[d])) lhs[d] = L[d];
  }
  for (size_t d = 0; d < R.size(); ++d) {
    if (is_free(dn.rhs_contract, dn.rhs_batch, int(d)) && take(R[d])) rhs[d] = R[d];
  }
  for (size_t k = 0; k < dn.lhs_contract.size(); ++k) {
    if (done[k]) continue;
    const int ld = dn.lhs_contract[k], rd = dn.rhs_contract[k];
    const auto& axes = !L[ld].empty() ? L[ld] : R[rd];
    if (spmd::divides(a.mesh, axes, a.in[0].shape[ld]) && take(axes)) {
      lhs[ld] = rhs[rd] = axes;
      p.partial_axes.insert(p.partial_axes.end(), axes.begin(), axes.end());
    }
  }
  DimAxes out;
  for (int d : dn.lhs_batch) out.push_back(lhs[d]);
  for (size_t d = 0; d < L.size(); ++d) {
    if (is_free(dn.lhs_contract, dn.lhs_batch, int(d))) out.push_back(lhs[d]);
  }
  for (size_t d = 0; d < R.size(); ++d) {
    if (is_free(dn.rhs_contract, dn.rhs_batch, int(d))) out.push_back(rhs[d]);
  }
  if (!p.partial_axes.empty()) p.partial = spmd::Partial::kSum;
  p.inputs = {lhs, rhs};
  p.outputs = {out};
  return p;
}

}  // namespace graft
