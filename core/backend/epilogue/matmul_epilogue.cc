#include "core/backend/epilogue/matmul_epilogue.h"

#include <algorithm>

#include "core/primitives/fusion.h"
#include "core/primitives/linalg.h"
#include "core/primitives/shape.h"

namespace graft {
namespace {

struct Uses {
  const Program& p;
  std::vector<int> producer;            // value -> instruction, or -1
  std::vector<std::vector<int>> users;  // value -> instructions reading it
  std::vector<bool> is_output;

  explicit Uses(const Program& prog)
      : p(prog),
        producer(prog.avals.size(), -1),
        users(prog.avals.size()),
        is_output(prog.avals.size(), false) {
    for (size_t i = 0; i < p.instrs.size(); ++i) {
      for (int v : p.instrs[i].out) producer[v] = static_cast<int>(i);
      for (int v : p.instrs[i].in) {
        std::vector<int>& u = users[v];
        if (u.empty() || u.back() != static_cast<int>(i)) u.push_back(static_cast<int>(i));
      }
    }
    for (int v : p.outputs) is_output[v] = true;
  }

  // The one instruction reading v (which is no program output), or -1.
  int sole_user(int v) const { return users[v].size() == 1 && !is_output[v] ? users[v][0] : -1; }
  PrimitiveId id(int instr) const { return p.instrs[instr].prim->id(); }

  // Whether v is a constant zero: a constant of zeros, or a broadcast or conversion of one.
  bool zero(int v) const {
    const int i = producer[v];
    if (i >= 0 &&
        (id(i) == PrimitiveId::kBroadcastInDim || id(i) == PrimitiveId::kConvertElementType))
      return zero(p.instrs[i].in[0]);
    const Array* c = p.constant(v);
    if (c == nullptr) return false;
    for (double x : c->to_vector<double>()) {
      if (x != 0) return false;
    }
    return true;
  }

  // The bias vector b when v is broadcast_in_dim(b [N] -> shape [M, N], dims (1)) of dtype
  // `dtype` read only by instruction `reader`; else -1.
  int bias_of(int v, const Shape& shape, DType dtype, int reader) const {
    const int i = producer[v];
    if (i < 0 || id(i) != PrimitiveId::kBroadcastInDim || sole_user(v) != reader) return -1;
    const auto& b = static_cast<const BroadcastInDim&>(*p.instrs[i].prim);
    const int x = p.instrs[i].in[0];
    const Aval& a = p.avals[x];
    const bool row = a.shape == Shape{shape[1]} && b.dims() == std::vector<int>{1};
    return row && a.dtype == dtype && p.avals[v].shape == shape ? x : -1;
  }
};

// A dot_general the epilogue's GEMM can compute: [M, K] x [K, N] -> [M, N], all of one
// floating dtype.
bool plain_dot(const Program& p, const Instr& instr) {
  if (instr.prim->id() != PrimitiveId::kDotGeneral || instr.out.size() != 1) return false;
  const DotDims& d = static_cast<const DotGeneral&>(*instr.prim).dims();
  const Aval& out = p.avals[instr.out[0]];
  return d.lhs_batch.empty() && d.rhs_batch.empty() && d.lhs_contract.size() == 1 &&
         p.avals[instr.in[0]].shape.size() == 2 && p.avals[instr.in[1]].shape.size() == 2 &&
         out.shape.size() == 2 && is_floating(out.dtype) &&
         p.avals[instr.in[0]].dtype == out.dtype && p.avals[instr.in[1]].dtype == out.dtype;
}

// Whether instruction i is max(v, 0) of dtype `dtype` (either operand order).
bool relu_of(const Uses& g, int i, int v, DType dtype) {
  if (i < 0 || g.id(i) != PrimitiveId::kMax) return false;
  const Instr& r = g.p.instrs[i];
  if (r.in[0] == r.in[1] || (r.in[0] != v && r.in[1] != v)) return false;
  return g.zero(r.in[0] == v ? r.in[1] : r.in[0]) && g.p.avals[r.out[0]].dtype == dtype;
}

// Unfused: add(d, bias) [-> max(., 0)], or max(d, 0).
bool match_unfused(const Uses& g, int user, int d, MatmulEpilogue& m) {
  const Program& p = g.p;
  const Instr& u = p.instrs[user];
  const Aval& av = p.avals[d];
  if (relu_of(g, user, d, av.dtype)) {
    m.relu = true;
    m.result = user;
    m.absorbed = {user};
    return true;
  }
  if (g.id(user) != PrimitiveId::kAdd || u.in[0] == u.in[1]) return false;
  const int other = u.in[0] == d ? u.in[1] : u.in[0];
  m.bias = g.bias_of(other, av.shape, av.dtype, user);
  if (m.bias < 0) return false;
  m.absorbed = {g.producer[other], user};
  m.result = user;
  const int next = g.sole_user(u.out[0]);
  if (relu_of(g, next, u.out[0], av.dtype)) {
    m.relu = true;
    m.result = next;
    m.absorbed.push_back(next);
  }
  return true;
}

// Fused: a fused_elementwise with one output whose steps are exactly add(d, bias)
// [, max(that, 0)] or max(d, 0) (operands as slots: group inputs, then earlier steps).
bool match_fused(const Uses& g, int user, int d, MatmulEpilogue& m) {
  const Program& p = g.p;
  const Instr& u = p.instrs[user];
  if (g.id(user) != PrimitiveId::kFusedElementwise || u.out.size() != 1) return false;
  const auto& f = static_cast<const FusedElementwise&>(*u.prim);
  const std::vector<FusedStep>& steps = f.steps();
  const int inputs = static_cast<int>(u.in.size());
  if (steps.empty() || steps.size() > 2) return false;
  if (f.outputs() != std::vector<int>{inputs + static_cast<int>(steps.size()) - 1}) return false;
  const Aval& av = p.avals[d];
  auto input = [&](int slot) { return slot < inputs ? u.in[slot] : -1; };
  auto other_arg = [&](const FusedStep& s, int slot_value, bool is_step) {
    // The operand of a binary step that is not `slot_value`'s slot, as a group input value.
    if (s.args.size() != 2) return -2;
    const bool first = is_step ? s.args[0] == slot_value : input(s.args[0]) == slot_value;
    const bool second = is_step ? s.args[1] == slot_value : input(s.args[1]) == slot_value;
    if (first == second) return -2;
    return input(first ? s.args[1] : s.args[0]);
  };
  const FusedStep& s0 = steps[0];
  if (s0.aval.dtype != av.dtype) return false;
  if (s0.prim->id() == PrimitiveId::kAdd) {
    const int b = other_arg(s0, d, false);
    if (b < 0) return false;
    m.bias = g.bias_of(b, av.shape, av.dtype, user);
    if (m.bias < 0) return false;
    m.absorbed.push_back(g.producer[b]);
    if (steps.size() == 2) {
      const FusedStep& s1 = steps[1];
      const int z = other_arg(s1, inputs, true);
      if (s1.prim->id() != PrimitiveId::kMax || z < 0 || !g.zero(z)) return false;
      m.relu = true;
    }
  } else if (s0.prim->id() == PrimitiveId::kMax && steps.size() == 1) {
    const int z = other_arg(s0, d, false);
    if (z < 0 || !g.zero(z)) return false;
    m.relu = true;
  } else {
    return false;
  }
  m.absorbed.push_back(user);
  m.result = user;
  return true;
}

}  // namespace

std::vector<MatmulEpilogue> match_matmul_epilogues(const Program& p) {
  Uses g(p);
  std::vector<MatmulEpilogue> out;
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    if (!plain_dot(p, p.instrs[i])) continue;
    const int d = p.instrs[i].out[0];
    const int user = g.sole_user(d);
    if (user < 0) continue;
    MatmulEpilogue m;
    m.dot = static_cast<int>(i);
    if (!match_unfused(g, user, d, m)) {
      m = MatmulEpilogue{};
      m.dot = static_cast<int>(i);
      if (!match_fused(g, user, d, m)) continue;
    }
    std::sort(m.absorbed.begin(), m.absorbed.end());
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace graft
