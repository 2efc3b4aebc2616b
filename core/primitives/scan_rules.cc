// The scan primitive's builder and rules.
//   jvp: a scan over (primal, tangent) carries whose body is the body's jvp.
//   vjp: a forward scan that also stacks the carry entering each iteration and the body's
//        residuals (what its pullback reads, ad.h VjpSaving), then a scan in the opposite
//        direction whose body is the body's pullback from them; constants' cotangents
//        accumulate in its carry.
//   vmap: the body vmapped; a carry that becomes batched after one step is batched from the
//        start (a fixpoint, as in JAX). xs carry their batch axis at 1, ys come out at 1.
//   prune (jit's DCE): unused ys and carries go, as in JAX's scan DCE rule: a carry stays if
//        its final value is used or the body reads it to compute something that stays (a
//        fixpoint); consts and xs the pruned body no longer reads go too.
//   loop consts (jit's hoisting): the consts, body inputs [0, num_consts).
//   merge_with (jit's CSE): two scans over the same inputs whose carries coincide (grad's
//        forward scan and the one the vjp rule runs to save carries) become one. The carries
//        are assumed equal (the same initial values) and the combined body simplified; if
//        each pair of carry outputs is then one value, the assumption holds by induction.
#include "core/interpreters/spmd.h"
#include <mutex>

#include "absl/strings/str_cat.h"
#include "core/error.h"
#include "core/interpreters/ad.h"
#include "core/interpreters/batching.h"
#include "core/lax/lax.h"
#include "core/primitives/control.h"
#include "core/primitives/control_util.h"

namespace graft::detail {
namespace {

// The body's avals must be [consts, carry, x] -> [carry, y] for the scan's in / out avals
// (shapes and dtypes: weak flags may differ).
void check_body_signature(const ScanPrimitive& p) {
  std::vector<Aval> in = p.in_avals(), out = p.out_avals();
  for (size_t i = p.num_consts() + p.num_carry(); i < in.size(); ++i) {
    in[i].shape.erase(in[i].shape.begin());
  }
  for (size_t j = p.num_carry(); j < out.size(); ++j) out[j].shape.erase(out[j].shape.begin());
  auto fits = [](const std::vector<Aval>& a, const std::vector<Aval>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].shape != b[i].shape || a[i].dtype != b[i].dtype) return false;
    }
    return true;
  };
  if (!fits(p.body().input_avals(), in) || !fits(p.body().output_avals(), out)) {
    fail(p.name(), "the body ", avals_str(p.body().input_avals()), " -> ",
         avals_str(p.body().output_avals()), " does not fit the scan's ", avals_str(in), " -> ",
         avals_str(out));
  }
}

class ScanRule : public ScanPrimitive {
 public:
  using ScanPrimitive::ScanPrimitive;

  std::vector<Array> jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                         const std::vector<Array>& outputs) const override;
  std::vector<Array> vjp(const std::vector<Array>& primals, const std::vector<Array>& outputs,
                         const std::vector<Array>& cts) const override;
  // The same scan whose ys are followed by the stacked carries each iteration starts from
  // and the body's residuals (Saving), so reverse mode runs the body's forward pass once.
  std::shared_ptr<const Primitive> vjp_forward() const override;
  Batched vmap(const std::vector<Array>& args, const std::vector<int>& dims) const override;
  GRAFT_SHARDING_RULE;
  std::shared_ptr<const Primitive> with_sub_programs(
      std::vector<ProgramPtr> bodies) const override {
    check_same_signature(name(), body(), *bodies.at(0));
    return std::make_shared<const ScanRule>(bodies[0], num_consts(), num_carry(), length(),
                                            reverse(), in_avals(), out_avals());
  }
  std::optional<Pruned> prune(const std::vector<bool>& used, ProgramPass dce) const override;
  std::optional<Merged> merge_with(const Primitive& other, ProgramPass cse) const override;
  std::vector<LoopConsts> loop_consts() const override {
    return {{0, 0, static_cast<size_t>(num_consts())}};
  }
  std::shared_ptr<const Primitive> with_loop_consts(size_t, ProgramPtr new_body,
                                                    const std::vector<Aval>& added) const override {
    std::vector<Aval> in = in_avals();
    in.insert(in.begin() + num_consts(), added.begin(), added.end());
    auto p = std::make_shared<const ScanRule>(new_body, num_consts() + int(added.size()),
                                              num_carry(), length(), reverse(), in, out_avals());
    check_body_signature(*p);
    return p;
  }

 private:
  // Reverse mode's forward body: [consts, carry, x] -> [carry, y, carry, residuals] (the
  // carry the iteration started from, then what the body's pullback reads). Planned once per
  // primitive, on first use.
  struct Saving {
    std::shared_ptr<const VjpSaving> plan;
    FlatFn body;
    ProgramPtr program;  // the traced body, or null if it closes over outer values
  };
  const Saving& saving() const;
  struct SavingOnce {
    std::once_flag flag;
    Saving value;
  };
  std::shared_ptr<SavingOnce> saving_ = std::make_shared<SavingOnce>();
};

const ScanRule::Saving& ScanRule::saving() const {
  std::call_once(saving_->flag, [this] {
    Saving& s = saving_->value;
    const size_t nc = num_consts(), nk = num_carry();
    auto plan = std::make_shared<const VjpSaving>(plan_vjp_saving(bodies()[0]));
    s.plan = plan;
    s.body = [plan, nc, nk](const std::vector<Array>& in) {
      std::vector<Array> out = vjp_forward_saving(*plan, in);
      const size_t nout = plan->p->outputs.size();
      return concat(concat(part(out, 0, nout), part(in, nc, nc + nk)),
                    part(out, nout, out.size()));
    };
    Closed cl = close_over(s.body, body().input_avals());
    if (cl.consts.empty()) s.program = cl.program;
  });
  return saving_->value;
}

std::shared_ptr<const Primitive> ScanRule::vjp_forward() const {
  const Saving& s = saving();
  if (!s.program) return nullptr;
  std::vector<Aval> out = out_avals();
  const std::vector<Aval> body_out = s.program->output_avals();
  for (size_t j = out.size(); j < body_out.size(); ++j) {
    Aval a = body_out[j];
    a.shape.insert(a.shape.begin(), length());
    out.push_back(a);
  }
  auto p = std::make_shared<const ScanRule>(s.program, num_consts(), num_carry(), length(),
                                            reverse(), in_avals(), std::move(out));
  check_body_signature(*p);
  return p;
}

std::optional<Merged> ScanRule::merge_with(const Primitive& other, ProgramPass cse) const {
  if (other.id() != id()) return std::nullopt;
  const auto& o = static_cast<const ScanPrimitive&>(other);
  const int nk = num_carry(), ny = num_ys();
  if (o.num_consts() != num_consts() || o.num_carry() != nk || o.length() != length() ||
      o.reverse() != reverse() || o.in_avals().size() != in_avals().size()) {
    return std::nullopt;
  }
  // One body: this one's, then other's on the same inputs; outputs [carry, y, other's carry,
  // other's y].
  const Program &a = body(), &b = o.body();
  Program m = a;
  std::vector<int> id(b.avals.size(), -1);
  for (size_t i = 0; i < b.inputs.size(); ++i) id[b.inputs[i]] = a.inputs[i];
  for (size_t i = 0; i < b.constants.size(); ++i) {
    id[b.constants[i]] = m.add_constant(b.constant_values[i]);
  }
  for (const Instr& instr : b.instrs) {
    Instr c = instr;
    for (int& v : c.in) v = id[v];
    for (int& v : c.out) v = id[v] = m.add_value(b.avals[v]);
    m.instrs.push_back(std::move(c));
  }
  for (int v : b.outputs) m.outputs.push_back(id[v]);
  m = cse(m);
  for (int k = 0; k < nk; ++k) {
    if (m.outputs[k] != m.outputs[nk + ny + k]) return std::nullopt;
  }
  m.outputs.erase(m.outputs.begin() + nk + ny, m.outputs.begin() + 2 * nk + ny);
  std::vector<Aval> out = out_avals();
  out.insert(out.end(), o.out_avals().begin() + nk, o.out_avals().end());
  auto p =
      std::make_shared<const ScanRule>(std::make_shared<const Program>(std::move(m)), num_consts(),
                                       nk, length(), reverse(), in_avals(), std::move(out));
  check_body_signature(*p);
  Merged r{p, {}};
  for (int k = 0; k < nk; ++k) r.other_outputs.push_back(k);
  for (int j = 0; j < o.num_ys(); ++j) r.other_outputs.push_back(nk + ny + j);
  return r;
}

std::optional<Pruned> ScanRule::prune(const std::vector<bool>& used, ProgramPass dce) const {
  const size_t nc = num_consts(), nk = num_carry(), nx = num_xs();
  const Program& b = body();
  std::vector<bool> outs = used;  // body outputs: [carry, y]
  Program q;
  std::vector<bool> read;
  for (bool changed = true; changed;) {
    q = b;
    q.outputs = kept(b.outputs, outs);
    q = dce(q);
    read = values_read(q);
    changed = false;
    for (size_t k = 0; k < nk; ++k) {
      if (!outs[k] && read[b.inputs[nc + k]]) outs[k] = changed = true;
    }
  }
  std::vector<bool> ins(nc + nk + nx);
  for (size_t i = 0; i < ins.size(); ++i) {
    bool carry = i >= nc && i < nc + nk;
    ins[i] = carry ? outs[i - nc] : bool(read[b.inputs[i]]);
  }
  bool all = true, none = true;
  for (bool o : outs) {
    all = all && o;
    none = none && !o;
  }
  for (bool i : ins) all = all && i;
  if (all || none) return std::nullopt;  // nothing to drop, or nothing left (DCE drops it)
  q.inputs = kept(b.inputs, ins);
  int new_nc = 0, new_nk = 0;
  for (size_t i = 0; i < nc; ++i) new_nc += ins[i];
  for (size_t k = 0; k < nk; ++k) new_nk += outs[k];
  auto p = std::make_shared<const ScanRule>(std::make_shared<const Program>(std::move(q)), new_nc,
                                            new_nk, length(), reverse(), kept(in_avals(), ins),
                                            kept(out_avals(), outs));
  check_body_signature(*p);
  return Pruned{p, ins, outs};
}

std::vector<bool> floating_mask(const std::vector<Array>& xs) {
  std::vector<bool> m;
  for (const Array& x : xs) m.push_back(is_inexact(x.dtype()));
  return m;
}

std::vector<Array> ScanRule::jvp(const std::vector<Array>& primals,
                                 const std::vector<Array>& tangents,
                                 const std::vector<Array>& outputs) const {
  const size_t nc = num_consts(), nk = num_carry(), nx = num_xs(), ny = num_ys();
  std::vector<bool> mc, mx, mk = floating_mask(part(primals, nc, nc + nk));
  for (size_t i = 0; i < nc; ++i)
    mc.push_back(is_inexact(primals[i].dtype()) && tangents[i].valid());
  for (size_t i = nc + nk; i < nc + nk + nx; ++i) {
    mx.push_back(is_inexact(primals[i].dtype()) && tangents[i].valid());
  }
  std::vector<bool> my = floating_mask(part(outputs, nk, nk + ny));
  std::vector<Array> tk;
  for (size_t k = 0; k < nk; ++k) {
    if (mk[k]) tk.push_back(instantiate(tangents[nc + k], primals[nc + k]));
  }
  std::vector<Array> tc = masked(part(tangents, 0, nc), mc);
  std::vector<Array> tx = masked(part(tangents, nc + nk, nc + nk + nx), mx);
  const size_t ntc = tc.size(), ntk = tk.size();
  ProgramPtr f = bodies()[0];
  // Inputs [consts, tconsts, carry, tcarry, x, tx] -> [carry, tcarry, y, ty].
  FlatFn body_jvp = [=](const std::vector<Array>& in) {
    std::vector<Array> p, t;
    size_t at = 0;
    auto take = [&](size_t n, const std::vector<bool>* mask, size_t nt) {
      std::vector<Array> prim = part(in, at, at + n), tan(n);
      at += n;
      size_t j = 0;
      for (size_t i = 0; i < n; ++i) {
        if (mask == nullptr || (*mask)[i]) tan[i] = in[at + j++];
      }
      at += nt;
      p.insert(p.end(), prim.begin(), prim.end());
      t.insert(t.end(), tan.begin(), tan.end());
    };
    take(nc, &mc, ntc);
    take(nk, &mk, ntk);
    take(nx, &mx, in.size() - at - nx);
    auto [outs, touts] = jvp_program(*f, p, t);
    std::vector<Array> r = part(outs, 0, nk);
    for (size_t k = 0; k < nk; ++k) {
      if (mk[k]) r.push_back(instantiate(touts[k], outs[k]));
    }
    for (size_t j = nk; j < nk + ny; ++j) r.push_back(outs[j]);
    for (size_t j = 0; j < ny; ++j) {
      if (my[j]) r.push_back(instantiate(touts[nk + j], outs[nk + j]));
    }
    return r;
  };
  std::vector<Array> outs =
      bind_scan(body_jvp, concat(part(primals, 0, nc), tc), concat(part(primals, nc, nc + nk), tk),
                concat(part(primals, nc + nk, nc + nk + nx), tx), length(), reverse());
  std::vector<Array> result;
  size_t at = nk;
  for (size_t k = 0; k < nk; ++k) result.push_back(mk[k] ? outs[at++] : Array());
  at = nk + ntk + ny;
  for (size_t j = 0; j < ny; ++j) result.push_back(my[j] ? outs[at++] : Array());
  return result;
}

std::vector<Array> ScanRule::vjp(const std::vector<Array>& primals,
                                 const std::vector<Array>& outputs,
                                 const std::vector<Array>& cts) const {
  const size_t nc = num_consts(), nk = num_carry(), nx = num_xs(), ny = num_ys();
  // The forward pass (vjp_forward's scan; bound here when the rule is applied without it)
  // gave, after the outputs, the carries each iteration started from and the body's
  // residuals, so the backward loop runs only the body's pullback.
  const Saving& saving_body = saving();
  std::shared_ptr<const VjpSaving> plan = saving_body.plan;
  const size_t ns = plan->saved.size();
  std::vector<Array> consts = part(primals, 0, nc), init = part(primals, nc, nc + nk),
                     xs = part(primals, nc + nk, nc + nk + nx);
  std::vector<Array> fwd = outputs;
  if (fwd.size() != nk + ny + nk + ns) {
    fwd = bind_scan(saving_body.body, consts, init, xs, length(), reverse());
  }
  std::vector<Array> saved = part(fwd, nk + ny, nk + ny + nk),
                     residuals = part(fwd, nk + ny + nk, nk + ny + nk + ns);
  std::vector<bool> mc = floating_mask(consts), mk = floating_mask(init), mx = floating_mask(xs),
                    my = floating_mask(part(outputs, nk, nk + ny));
  std::vector<Array> ct_carry, acc, ct_ys;
  for (size_t k = 0; k < nk; ++k) {
    if (mk[k]) ct_carry.push_back(instantiate(cts[k], outputs[k]));
  }
  for (size_t i = 0; i < nc; ++i) {
    if (mc[i]) acc.push_back(zeros(consts[i].shape(), consts[i].dtype()));
  }
  for (size_t j = 0; j < ny; ++j) {
    if (my[j]) ct_ys.push_back(instantiate(cts[nk + j], outputs[nk + j]));
  }
  const size_t nck = ct_carry.size(), nacc = acc.size();
  // Backward body: [consts, ct carry, acc, saved carry, x, residuals, ct y]
  //   -> [ct carry, acc, ct x].
  FlatFn back = [=](const std::vector<Array>& in) {
    std::vector<Array> c = part(in, 0, nc);
    size_t at = nc;
    std::vector<Array> ctk = part(in, at, at + nck);
    at += nck;
    std::vector<Array> a = part(in, at, at + nacc);
    at += nacc;
    std::vector<Array> carry = part(in, at, at + nk);
    at += nk;
    std::vector<Array> x = part(in, at, at + nx);
    at += nx;
    std::vector<Array> res = part(in, at, at + ns);
    at += ns;
    std::vector<Array> cty = part(in, at, in.size());
    std::vector<Array> out_cts(nk + ny);
    size_t j = 0;
    for (size_t k = 0; k < nk; ++k) {
      if (mk[k]) out_cts[k] = ctk[j++];
    }
    j = 0;
    for (size_t i = 0; i < ny; ++i) {
      if (my[i]) out_cts[nk + i] = cty[j++];
    }
    std::vector<Array> in_cts =
        vjp_pullback_saved(*plan, concat(concat(c, carry), x), res, out_cts);
    std::vector<Array> r;
    for (size_t k = 0; k < nk; ++k) {
      if (mk[k]) r.push_back(instantiate(in_cts[nc + k], carry[k]));
    }
    j = 0;
    for (size_t i = 0; i < nc; ++i) {
      if (mc[i]) {
        r.push_back(a[j] + instantiate(in_cts[i], c[i]));
        ++j;
      }
    }
    for (size_t i = 0; i < nx; ++i) {
      if (mx[i]) r.push_back(instantiate(in_cts[nc + nk + i], x[i]));
    }
    return r;
  };
  std::vector<Array> bwd = bind_scan(back, consts, concat(ct_carry, acc),
                                     concat(concat(concat(saved, xs), residuals), ct_ys), length(),
                                     !reverse());
  std::vector<Array> result(primals.size());
  size_t at = 0;
  for (size_t k = 0; k < nk; ++k) {
    if (mk[k]) result[nc + k] = bwd[at++];
  }
  for (size_t i = 0; i < nc; ++i) {
    if (mc[i]) result[i] = bwd[at++];
  }
  for (size_t i = 0; i < nx; ++i) {
    if (mx[i]) result[nc + nk + i] = bwd[at++];
  }
  return result;
}

Batched ScanRule::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  const size_t nc = num_consts(), nk = num_carry(), nx = num_xs(), ny = num_ys();
  const int64_t size = batch_size(args, dims);
  std::vector<Array> a(args.size());
  std::vector<int> d(args.size(), -1);
  for (size_t i = 0; i < args.size(); ++i) {
    bool xs = i >= nc + nk;
    if (dims[i] < 0) {
      a[i] = args[i];
    } else {
      a[i] = move_batch_axis(args[i], dims[i], xs ? 1 : 0, size);
      d[i] = 0;  // in the body, every batched value has its batch axis at 0
    }
  }
  ProgramPtr f = bodies()[0];
  // Fixpoint: a carry batched at the output must be batched at the input.
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<Array> slice_args = part(a, 0, nc + nk);
    for (size_t i = nc + nk; i < a.size(); ++i) {
      slice_args.push_back(Array::placeholder(
          Aval{Shape(a[i].shape().begin() + 1, a[i].shape().end()), a[i].dtype()}));
    }
    VmapResult r = vmap_program(*f, slice_args, d, size);
    for (size_t k = 0; k < nk; ++k) {
      if (r.dims[k] >= 0 && d[nc + k] < 0) {
        a[nc + k] = move_batch_axis(a[nc + k], -1, 0, size);
        d[nc + k] = 0;
        changed = true;
      }
    }
  }
  FlatFn body_b = [f, d, size, nk, nc](const std::vector<Array>& in) {
    VmapResult r = vmap_program(*f, in, d, size);
    std::vector<Array> out;
    for (size_t i = 0; i < r.outputs.size(); ++i) {
      bool keep_unbatched = i < nk && d[nc + i] < 0;
      out.push_back(keep_unbatched ? r.outputs[i]
                                   : move_batch_axis(r.outputs[i], r.dims[i], 0, size));
    }
    return out;
  };
  std::vector<Array> outs = bind_scan(body_b, part(a, 0, nc), part(a, nc, nc + nk),
                                      part(a, nc + nk, nc + nk + nx), length(), reverse());
  std::vector<int> od;
  for (size_t k = 0; k < nk; ++k) od.push_back(d[nc + k]);
  for (size_t j = 0; j < ny; ++j) od.push_back(1);
  return {outs, od};
}

}  // namespace

int64_t scan_length(const std::vector<Array>& xs, std::optional<int64_t> length) {
  for (const Array& x : xs) {
    if (x.ndim() == 0) fail("scan", "xs must have a leading axis, got a scalar");
    if (!length) length = x.shape()[0];
    if (x.shape()[0] != *length) {
      fail("scan", "xs leading axes differ: ", x.shape()[0], " vs length ", *length);
    }
  }
  if (!length) fail("scan", "length is required when xs has no arrays");
  if (*length < 0) fail("scan", "length must be >= 0, got ", *length);
  return *length;
}

std::vector<Array> bind_scan(const FlatFn& body_in, const std::vector<Array>& consts,
                             const std::vector<Array>& init_in, const std::vector<Array>& xs,
                             int64_t length, bool reverse) {
  auto added = std::make_shared<bool>(false);  // a body that returns nothing returns a y
  FlatFn body = with_an_output(body_in, added);
  std::vector<Array> init = init_in;
  std::vector<Aval> x_avals;
  for (const Array& x : xs) {
    Aval a = x.aval();
    a.shape.erase(a.shape.begin());
    x_avals.push_back(a);
  }
  const size_t nk = init.size();
  Closed cl;
  // A weakly typed initial carry takes the dtype the body gives it (scan(f, 0.0, xs_f32)).
  // A carry that starts the same on every member of a named axis but comes out of the body
  // varying over it is varying from the start (pvary), so the body is typed as it runs; the
  // body is traced again with it. Bits only grow, so this ends.
  for (int attempt = 0; attempt < 2 + kMaxAxisNames; ++attempt) {
    std::vector<Aval> avals = avals_of(consts);
    for (const Array& c : init) avals.push_back(c.aval());
    avals.insert(avals.end(), x_avals.begin(), x_avals.end());
    cl = close_over(body, avals);
    if (cl.out_avals.size() < nk) {
      fail("scan", "the body returned ", cl.out_avals.size(), " arrays, fewer than the carry's ",
           nk);
    }
    bool retry = false;
    for (size_t k = 0; k < nk; ++k) {
      const Aval &in = init[k].aval(), &out = cl.out_avals[k];
      if (in.shape == out.shape && in.dtype == out.dtype) {
        if (out.vma & ~in.vma) {
          init[k] = pvary(init[k], axis_names_of(out.vma & ~in.vma));
          retry = true;
        }
        continue;
      }
      if (attempt == 0 && in.weak && in.shape == out.shape) {
        init[k] = astype(init[k], out.dtype);
        retry = true;
        continue;
      }
      fail("scan", "the body's carry output ", k, " is ", out.str(), " but the carry input is ",
           in.str(), " (carry shapes and dtypes must not change)");
    }
    if (!retry) break;
  }
  std::vector<Array> ins = concat(concat(concat(cl.consts, consts), init), xs);
  std::vector<Aval> out_avals = avals_of(init);
  for (size_t j = nk; j < cl.out_avals.size(); ++j) {
    Aval a = cl.out_avals[j];
    a.shape.insert(a.shape.begin(), length);
    out_avals.push_back(a);
  }
  auto p = std::make_shared<const ScanRule>(
      cl.program, static_cast<int>(cl.consts.size() + consts.size()), static_cast<int>(nk), length,
      reverse, avals_of(ins), out_avals);
  std::vector<Array> outs = graft::bind(p, ins);
  if (*added) outs.pop_back();
  return outs;
}


// Sharding: the body is partitioned for the layouts of the consts, the carries and the xs
// (less their scanned leading dimension, which must be whole); a carry comes out of the body
// in the layout it went in with, so every iteration sees the same layouts; ys are stacked
// blocks. FSDP's scan over layers: weights split over `data` enter as xs and are gathered per
// layer inside the body, by the matmuls' rule.
std::optional<spmd::Plan> ScanRule::sharding_rule(const spmd::RuleArgs& a) const {
  const size_t nc = num_consts(), nk = num_carry();
  spmd::Plan p;
  std::vector<DimAxes> body_in;
  std::vector<std::optional<DimAxes>> want;
  for (size_t i = 0; i < a.in.size(); ++i) {
    DimAxes d = a.in_dims[i];
    if (i >= nc + nk) {
      d[0].clear();
      p.inputs.push_back(d);
      d.erase(d.begin());
    } else {
      p.inputs.push_back(d);
    }
    if (i >= nc && i < nc + nk) want.push_back(d);
    body_in.push_back(std::move(d));
  }
  // A ys that is still a partial sum at the end of the body finishes in the layout of an xs
  // of its shape and dtype, if one is split: in the transposed scan over stacked layers that
  // ys is the xs weight's gradient, so FSDP's gradients are psum_scatter'd in the body.
  std::vector<std::optional<DimAxes>> prefer(nk);
  const Program& bp = body();
  for (size_t o = nk; o < bp.outputs.size(); ++o) {
    std::optional<DimAxes> like;
    const Aval& y = bp.avals[bp.outputs[o]];
    for (size_t i = nc + nk; i < bp.inputs.size() && !like; ++i) {
      const Aval& x = bp.avals[bp.inputs[i]];
      if (x.shape == y.shape && x.dtype == y.dtype && spmd::blocks(a.mesh, body_in[i]) > 1) {
        like = body_in[i];
      }
    }
    prefer.push_back(like);
  }
  spmd::PartitionedBody b = spmd::partition_body(a.mesh, body(), body_in, want, prefer);
  std::vector<Aval> in, out;
  for (size_t i = 0; i < a.in.size(); ++i) in.push_back(spmd::local_aval(a.mesh, a.in[i], p.inputs[i]));
  for (size_t o = 0; o < a.out.size(); ++o) {
    DimAxes d = b.out[o];
    if (o >= nk) d.insert(d.begin(), std::vector<int>{});
    p.outputs.push_back(d);
    out.push_back(spmd::local_aval(a.mesh, a.out[o], d));
  }
  p.local = std::make_shared<const ScanRule>(b.program, num_consts(), num_carry(), length(),
                                             reverse(), in, out);
  return p;
}

}  // namespace graft::detail
