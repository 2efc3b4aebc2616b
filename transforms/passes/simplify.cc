// Algebraic simplification: the one pass that knows what some primitives mean, so it matches
// them by id (and reads the parameters of transpose, reshape and dot_general).
#include <memory>
#include <numeric>
#include <vector>

#include "core/primitives/linalg.h"
#include "core/primitives/shape.h"
#include "transforms/passes/passes.h"

namespace graft {

namespace {

// Constants up to this many elements are inspected for being all zeros / all ones.
constexpr int64_t kInspectElements = 4096;

bool all_equal_to(const Array* c, double value) {
  if (c == nullptr || c->dtype() == DType::kBool || c->size() > kInspectElements) return false;
  for (double x : c->to_vector<double>()) {
    if (x != value) return false;
  }
  return true;
}

struct Rewriter {
  const Program& p;
  Program out;
  std::vector<int> rename;
  std::vector<int> producer;  // value id -> index in out.instrs, or -1

  std::vector<int> uses;  // value id -> how many instruction operands and outputs read it in p

  explicit Rewriter(const Program& prog)
      : p(prog), producer(prog.avals.size(), -1), uses(prog.avals.size(), 0) {
    for (const Instr& i : p.instrs) {
      for (int v : i.in) ++uses[v];
    }
    for (int v : p.outputs) ++uses[v];
    rename.resize(p.avals.size());
    std::iota(rename.begin(), rename.end(), 0);
    out.avals = p.avals;
    out.inputs = p.inputs;
    out.constants = p.constants;
    out.constant_values = p.constant_values;
  }

  // x may stand for the output when it has exactly the output's aval.
  bool forward(const Instr& instr, int x) {
    if (!(p.avals[x] == p.avals[instr.out[0]])) return false;
    rename[instr.out[0]] = x;
    return true;
  }

  // The constant v is, or the constant v is a broadcast of (large broadcasts are not folded).
  const Array* constant_like(int v) const {
    if (const Array* c = p.constant(v)) return c;
    const Instr* b = produced_by(v, PrimitiveId::kBroadcastInDim);
    return b == nullptr ? nullptr : p.constant(b->in[0]);
  }

  const Instr* produced_by(int v, PrimitiveId id) const {
    int i = producer[v];
    return i >= 0 && out.instrs[i].prim->id() == id ? &out.instrs[i] : nullptr;
  }

  // transpose(dot_general(a, b)) that puts b's free dims before a's -> dot_general(b, a),
  // when the transpose is the product's only reader: reverse mode's cotangent of a matmul's
  // right operand (dW = x^T dy) is computed as (dy^T x)^T, and the GEMM writes either
  // layout at the same cost, so the transpose's pass over memory goes.
  void swap_dot_operands(Instr& instr, const std::vector<int>& perm) {
    const int x = instr.in[0];
    const Instr* dot = produced_by(x, PrimitiveId::kDotGeneral);
    if (dot == nullptr || uses[x] != 1) return;
    const auto& prim = static_cast<const DotGeneral&>(*dot->prim);
    const DotDims& d = prim.dims();
    const int nb = static_cast<int>(d.lhs_batch.size());
    const int nl = static_cast<int>(p.avals[dot->in[0]].shape.size()) - nb -
                   static_cast<int>(d.lhs_contract.size());
    const int nr = static_cast<int>(perm.size()) - nb - nl;
    std::vector<int> swapped;  // batch dims, then b's free dims, then a's
    for (int i = 0; i < nb; ++i) swapped.push_back(i);
    for (int i = 0; i < nr; ++i) swapped.push_back(nb + nl + i);
    for (int i = 0; i < nl; ++i) swapped.push_back(nb + i);
    if (nl <= 0 || nr <= 0 || perm != swapped) return;
    instr.prim = std::make_shared<const DotGeneral>(
        DotDims{d.rhs_contract, d.lhs_contract, d.rhs_batch, d.lhs_batch}, prim.preferred());
    instr.in = {dot->in[1], dot->in[0]};
  }

  bool rewrite(Instr& instr) {
    const std::vector<int>& in = instr.in;
    switch (instr.prim->id()) {
      case PrimitiveId::kMul:
        return (all_equal_to(constant_like(in[1]), 1) && forward(instr, in[0])) ||
               (all_equal_to(constant_like(in[0]), 1) && forward(instr, in[1]));
      case PrimitiveId::kAdd:
        return (all_equal_to(constant_like(in[1]), 0) && forward(instr, in[0])) ||
               (all_equal_to(constant_like(in[0]), 0) && forward(instr, in[1]));
      case PrimitiveId::kSub:
        return all_equal_to(constant_like(in[1]), 0) && forward(instr, in[0]);
      case PrimitiveId::kConvertElementType:
        return forward(instr, in[0]);
      case PrimitiveId::kTranspose: {
        std::vector<int> perm = static_cast<const Transpose&>(*instr.prim).perm();
        if (const Instr* inner = produced_by(in[0], PrimitiveId::kTranspose)) {
          const std::vector<int>& first = static_cast<const Transpose&>(*inner->prim).perm();
          for (int& d : perm) d = first[d];
          instr.in = inner->in;
          instr.prim = std::make_shared<const Transpose>(perm);
        }
        bool identity = true;
        for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == int(i);
        if (identity) return forward(instr, instr.in[0]);
        swap_dot_operands(instr, perm);
        return false;
      }
      case PrimitiveId::kReshape:
        if (const Instr* inner = produced_by(in[0], PrimitiveId::kReshape)) {
          instr.in = inner->in;
        }
        return forward(instr, instr.in[0]);
      default:
        return false;
    }
  }
};

}  // namespace

Program simplify_algebra(const Program& p) {
  Rewriter r(p);
  for (const Instr& orig : p.instrs) {
    Instr instr = orig;
    for (int& v : instr.in) v = r.rename[v];
    if (r.rewrite(instr)) continue;
    for (int v : instr.out) r.producer[v] = static_cast<int>(r.out.instrs.size());
    r.out.instrs.push_back(std::move(instr));
  }
  for (int v : p.outputs) r.out.outputs.push_back(r.rename[v]);
  return r.out;
}

}  // namespace graft
