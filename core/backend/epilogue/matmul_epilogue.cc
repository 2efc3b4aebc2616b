#include "core/backend/epilogue/matmul_epilogue.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>

#include "core/primitives/call.h"
#include "core/primitives/fusion.h"
#include "core/primitives/linalg.h"
#include "core/primitives/shape.h"

namespace graft {
namespace {

using Activation = MatmulEpilogue::Activation;

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

  // v's value when it is a constant whose elements are all one value, or a broadcast or
  // conversion of one.
  std::optional<double> scalar(int v) const {
    const int i = producer[v];
    if (i >= 0 &&
        (id(i) == PrimitiveId::kBroadcastInDim || id(i) == PrimitiveId::kConvertElementType))
      return scalar(p.instrs[i].in[0]);
    const Array* c = p.constant(v);
    if (c == nullptr) return std::nullopt;
    const std::vector<double> xs = c->to_vector<double>();
    if (xs.empty() || std::any_of(xs.begin(), xs.end(), [&](double x) { return x != xs[0]; }))
      return std::nullopt;
    return xs[0];
  }
  bool zero(int v) const { return scalar(v) == 0.0; }

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
// floating dtype (not fp8: the GEMM computes in it).
bool plain_dot(const Program& p, const Instr& instr) {
  if (instr.prim->id() != PrimitiveId::kDotGeneral || instr.out.size() != 1) return false;
  const DotDims& d = static_cast<const DotGeneral&>(*instr.prim).dims();
  const Aval& out = p.avals[instr.out[0]];
  return d.lhs_batch.empty() && d.rhs_batch.empty() && d.lhs_contract.size() == 1 &&
         p.avals[instr.in[0]].shape.size() == 2 && p.avals[instr.in[1]].shape.size() == 2 &&
         out.shape.size() == 2 && is_floating(out.dtype) && !is_float8(out.dtype) &&
         p.avals[instr.in[0]].dtype == out.dtype && p.avals[instr.in[1]].dtype == out.dtype;
}

// Whether instruction i is nn::relu's custom_jvp_call of value h: its fun is max(x, 0).
bool relu_call(const Program& p, int i, int h) {
  const Instr& c = p.instrs[i];
  if (c.prim->id() != PrimitiveId::kCustomJvpCall || c.in != std::vector<int>{h} ||
      c.out.size() != 1)
    return false;
  const Program& fun = *static_cast<const CustomJvpCall&>(*c.prim).bodies()[0];
  if (fun.inputs.size() != 1 || fun.outputs.size() != 1 || fun.instrs.size() != 1) return false;
  const Instr& m = fun.instrs[0];
  if (m.prim->id() != PrimitiveId::kMax || m.out[0] != fun.outputs[0]) return false;
  const int x = fun.inputs[0];
  if ((m.in[0] == x) == (m.in[1] == x)) return false;
  return Uses(fun).zero(m.in[0] == x ? m.in[1] : m.in[0]);
}

// The steps after the dot, alike in both forms jit produces: nodes are program values
// (unfused) or a fused group's slots (its inputs, then its steps).
class View {
 public:
  virtual ~View() = default;
  // The step computing node n (its primitive and operand nodes); false for a leaf.
  virtual bool step(int n, PrimitiveId* id, const std::vector<int>** args) const = 0;
  // n's value when it is a constant of one value.
  virtual std::optional<double> scalar(int n) const = 0;
  // Whether n is nn::relu's call of h.
  virtual bool relu_call(int n, int h) const = 0;
};

class Unfused : public View {
 public:
  explicit Unfused(const Uses& g) : g_(g) {}
  bool step(int v, PrimitiveId* id, const std::vector<int>** args) const override {
    const int i = g_.producer[v];
    if (i < 0 || g_.p.instrs[i].out.size() != 1) return false;
    *id = g_.id(i);
    *args = &g_.p.instrs[i].in;
    return true;
  }
  std::optional<double> scalar(int v) const override { return g_.scalar(v); }
  bool relu_call(int v, int h) const override {
    const int i = g_.producer[v];
    return i >= 0 && graft::relu_call(g_.p, i, h);
  }

 private:
  const Uses& g_;
};

class Fused : public View {
 public:
  Fused(const Uses& g, const Instr& group)
      : g_(g), in_(group.in), steps_(static_cast<const FusedElementwise&>(*group.prim).steps()) {}
  bool step(int slot, PrimitiveId* id, const std::vector<int>** args) const override {
    const int s = slot - static_cast<int>(in_.size());
    if (s < 0) return false;
    *id = steps_[s].prim->id();
    *args = &steps_[s].args;
    return true;
  }
  std::optional<double> scalar(int slot) const override {
    return slot < static_cast<int>(in_.size()) ? g_.scalar(in_[slot]) : std::nullopt;
  }
  bool relu_call(int, int) const override { return false; }  // calls are never fused

 private:
  const Uses& g_;
  const std::vector<int>& in_;
  const std::vector<FusedStep>& steps_;
};

// Whether node `out` is an activation of node h, and which steps (nodes) it spans.
class ActivationMatcher {
 public:
  ActivationMatcher(const View& v, int h, DType dtype)
      : v_(v),
        h_(h),
        tol_(dtype == DType::kF64   ? 1e-12
             : dtype == DType::kF32 ? 1e-6
             : dtype == DType::kF16 ? 1e-3
                                    : 8e-3) {}

  const std::vector<int>& spanned() const { return seen_; }

  bool relu(int out) {
    seen_.clear();
    if (v_.relu_call(out, h_)) {
      seen_.push_back(out);
      return true;
    }
    return binary(out, PrimitiveId::kMax, is_h(), constant(0.0));
  }

  // nn::gelu(h, approximate = true), as nn/activations.cc writes it.
  bool gelu_tanh(int out) {
    seen_.clear();
    auto cube = [&](int n) {
      auto h2 = [&](int a) { return binary(a, PrimitiveId::kMul, constant(0.044715), is_h()); };
      auto h3 = [&](int a) { return binary(a, PrimitiveId::kMul, h2, is_h()); };
      return binary(n, PrimitiveId::kMul, h3, is_h());
    };
    auto inner = [&](int n) { return binary(n, PrimitiveId::kAdd, is_h(), cube); };
    auto scaled = [&](int n) {
      return binary(n, PrimitiveId::kMul, constant(std::sqrt(2.0 / M_PI)), inner);
    };
    auto one_plus_tanh = [&](int n) {
      return binary(n, PrimitiveId::kAdd, constant(1.0),
                    [&](int t) { return unary(t, PrimitiveId::kTanh, scaled); });
    };
    auto half_h = [&](int n) { return binary(n, PrimitiveId::kMul, constant(0.5), is_h()); };
    return binary(out, PrimitiveId::kMul, half_h, one_plus_tanh);
  }

 private:
  std::function<bool(int)> is_h() const {
    return [h = h_](int n) { return n == h; };
  }
  std::function<bool(int)> constant(double want) const {
    return [this, want](int n) {
      const std::optional<double> c = v_.scalar(n);
      return c.has_value() && std::abs(*c - want) <= tol_ * std::abs(want);
    };
  }
  template <class F>
  bool unary(int n, PrimitiveId want, const F& f) {
    PrimitiveId id;
    const std::vector<int>* args;
    if (!v_.step(n, &id, &args) || id != want || args->size() != 1) return false;
    seen_.push_back(n);
    if (f((*args)[0])) return true;
    seen_.pop_back();
    return false;
  }
  // n = want(a, b) with fa(a) and fb(b), in either operand order.
  template <class A, class B>
  bool binary(int n, PrimitiveId want, const A& fa, const B& fb) {
    PrimitiveId id;
    const std::vector<int>* args;
    if (!v_.step(n, &id, &args) || id != want || args->size() != 2) return false;
    const size_t mark = seen_.size();
    seen_.push_back(n);
    for (int s = 0; s < 2; ++s) {
      if (fa((*args)[s]) && fb((*args)[1 - s])) return true;
      seen_.resize(mark + 1);
    }
    seen_.resize(mark);
    return false;
  }

  const View& v_;
  const int h_;
  const double tol_;
  std::vector<int> seen_;
};

// Tries each activation on node `out`; on a match, its kind and spanned nodes.
Activation match_activation(ActivationMatcher& a, int out, std::vector<int>* spanned) {
  const Activation kind = a.relu(out)        ? Activation::kRelu
                          : a.gelu_tanh(out) ? Activation::kGelu
                                             : Activation::kNone;
  *spanned = a.spanned();
  return kind;
}

// Unfused: an activation of value h (d or the bias add's value) whose last instruction is a
// reader of h or the sole reader of one, and whose values (h included) only its own
// instructions read.
bool unfused_activation(const Uses& g, int h, DType dtype, MatmulEpilogue& m) {
  if (g.is_output[h]) return false;
  std::vector<int> candidates;
  for (int u : g.users[h]) {
    candidates.push_back(u);
    if (g.p.instrs[u].out.size() == 1) {
      const int next = g.sole_user(g.p.instrs[u].out[0]);
      if (next >= 0) candidates.push_back(next);
    }
  }
  Unfused view(g);
  ActivationMatcher matcher(view, h, dtype);
  for (int c : candidates) {
    const Instr& last = g.p.instrs[c];
    if (last.out.size() != 1 || g.p.avals[last.out[0]].dtype != dtype) continue;
    std::vector<int> values;
    const Activation kind = match_activation(matcher, last.out[0], &values);
    if (kind == Activation::kNone) continue;
    std::set<int> instrs;
    for (int v : values) instrs.insert(g.producer[v]);
    auto closed = [&](int v) {
      if (g.is_output[v]) return false;
      for (int u : g.users[v])
        if (instrs.count(u) == 0) return false;
      return true;
    };
    bool ok = closed(h);
    for (int v : values) ok = ok && (v == last.out[0] || closed(v));
    if (!ok) continue;
    m.activation = kind;
    m.result = c;
    m.absorbed.insert(m.absorbed.end(), instrs.begin(), instrs.end());
    return true;
  }
  return false;
}

// Unfused: add(d, bias) [-> activation], or an activation of d.
bool match_unfused(const Uses& g, int d, MatmulEpilogue& m) {
  const Program& p = g.p;
  const Aval& av = p.avals[d];
  int h = d;
  const int user = g.sole_user(d);
  if (user >= 0 && g.id(user) == PrimitiveId::kAdd && p.instrs[user].in[0] != p.instrs[user].in[1]) {
    const Instr& u = p.instrs[user];
    const int other = u.in[0] == d ? u.in[1] : u.in[0];
    const int bias = g.bias_of(other, av.shape, av.dtype, user);
    if (bias >= 0) {
      m.bias = bias;
      m.absorbed = {g.producer[other], user};
      m.result = user;
      h = u.out[0];
    }
  }
  return unfused_activation(g, h, av.dtype, m) || m.bias >= 0;
}

// Fused: a fused_elementwise with one output whose steps are exactly add(d, bias) and / or an
// activation of d (or of that sum), the activation ending at the output; or exactly add(d,
// bias) followed by an unfused activation.
bool match_fused(const Uses& g, int d, MatmulEpilogue& m) {
  const Program& p = g.p;
  const int user = g.sole_user(d);
  if (user < 0 || g.id(user) != PrimitiveId::kFusedElementwise) return false;
  const Instr& u = p.instrs[user];
  const auto& f = static_cast<const FusedElementwise&>(*u.prim);
  const std::vector<FusedStep>& steps = f.steps();
  const int inputs = static_cast<int>(u.in.size());
  const int last = inputs + static_cast<int>(steps.size()) - 1;
  if (u.out.size() != 1 || steps.empty() || f.outputs() != std::vector<int>{last}) return false;
  const Aval& av = p.avals[d];
  if (steps.back().aval.dtype != av.dtype) return false;
  int h = -1;  // d's slot: the group reads d once
  for (int s = 0; s < inputs; ++s) {
    if (u.in[s] != d) continue;
    if (h >= 0) return false;
    h = s;
  }
  int covered = 0;  // steps done by the bias
  const FusedStep& s0 = steps[0];
  if (s0.prim->id() == PrimitiveId::kAdd && s0.args.size() == 2 && s0.aval.dtype == av.dtype &&
      (s0.args[0] == h) != (s0.args[1] == h)) {
    const int b = s0.args[0] == h ? s0.args[1] : s0.args[0];
    if (b < inputs && f.reads()[b].div == 1 && p.avals[u.in[b]].shape == Shape{av.shape[1]} &&
        p.avals[u.in[b]].dtype == av.dtype) {
      m.bias = u.in[b];  // the group spreads the [N] vector along the rows itself
    } else if (b < inputs) {
      m.bias = g.bias_of(u.in[b], av.shape, av.dtype, user);
      if (m.bias >= 0) m.absorbed.push_back(g.producer[u.in[b]]);
    }
    if (m.bias >= 0) {
      h = inputs;
      covered = 1;
    }
  }
  if (last != h) {
    Fused view(g, u);
    ActivationMatcher matcher(view, h, av.dtype);
    std::vector<int> spanned;
    m.activation = match_activation(matcher, last, &spanned);
    const std::set<int> distinct(spanned.begin(), spanned.end());
    if (m.activation == Activation::kNone ||
        static_cast<int>(distinct.size()) + covered != static_cast<int>(steps.size()))
      return false;
  } else if (m.bias < 0) {
    return false;
  }
  m.absorbed.push_back(user);
  m.result = user;
  // A group of the bias add alone (jit's fusion makes one op reading a broadcast a group) may
  // be followed by an activation it could not fuse (nn::relu's call).
  if (last == h) unfused_activation(g, u.out[0], av.dtype, m);
  return true;
}

}  // namespace

std::vector<MatmulEpilogue> match_matmul_epilogues(const Program& p) {
  Uses g(p);
  std::vector<MatmulEpilogue> out;
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    if (!plain_dot(p, p.instrs[i])) continue;
    const int d = p.instrs[i].out[0];
    MatmulEpilogue m;
    m.dot = static_cast<int>(i);
    if (!match_unfused(g, d, m)) {
      m = MatmulEpilogue{};
      m.dot = static_cast<int>(i);
      if (!match_fused(g, d, m)) continue;
    }
    std::sort(m.absorbed.begin(), m.absorbed.end());
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace graft
