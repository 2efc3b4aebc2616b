// The cond primitive's builder and rules (cond and switch_case bind it).
//   jvp / vjp: a cond over the branches' jvp / vjp; the index gets no derivative.
//   vmap: an unbatched index stays a cond of the vmapped branches. A batched index runs every
//        branch on the whole batch and selects per example (like JAX: both sides execute, so
//        a branch that is expensive or fails on some inputs still runs on them).
//   prune (jit's DCE), as JAX's _cond_dce_rule: outputs nobody uses go from every branch,
//        each branch loses its dead code, and operands no branch reads any more go (the
//        index stays). A cond kept only for a branch's effect (debug_print) keeps one output,
//        so that it still defines a value (bind records an effect through its first output).
#include "core/error.h"
#include "core/interpreters/ad.h"
#include "core/interpreters/batching.h"
#include "core/lax/lax.h"
#include "core/primitives/control.h"
#include "core/primitives/control_util.h"

namespace graft::detail {
namespace {

class CondRule : public CondPrimitive {
 public:
  using CondPrimitive::CondPrimitive;

  std::shared_ptr<const Primitive> with_sub_programs(std::vector<ProgramPtr> b) const override {
    if (b.size() != num_branches()) fail(name(), "needs ", num_branches(), " branches");
    for (size_t k = 0; k < b.size(); ++k) check_same_signature(name(), *bodies()[k], *b[k]);
    return std::make_shared<const CondRule>(std::move(b), in_avals(), out_avals());
  }

  std::optional<Pruned> prune(const std::vector<bool>& used, ProgramPass dce) const override {
    const size_t n = in_avals().size() - 1;  // operands
    std::vector<bool> outs = used;
    bool any = false;
    for (bool o : outs) any = any || o;
    if (!any && !outs.empty()) outs[0] = true;  // kept for its effects
    std::vector<Program> branches;
    std::vector<bool> ins(1 + n, false);
    ins[0] = true;  // the index
    for (const ProgramPtr& b : bodies()) {
      branches.push_back(pruned_body(*b, outs, dce));
      std::vector<bool> read = values_read(branches.back());
      for (size_t i = 0; i < n; ++i) ins[1 + i] = ins[1 + i] || read[b->inputs[i]];
    }
    bool all = true;
    for (bool o : outs) all = all && o;
    for (bool i : ins) all = all && i;
    if (all) return std::nullopt;
    std::vector<bool> operands(ins.begin() + 1, ins.end());
    std::vector<Aval> in = kept(in_avals(), ins), out = kept(out_avals(), outs);
    std::vector<Aval> branch_in(in.begin() + 1, in.end());
    std::vector<ProgramPtr> programs;
    for (Program& q : branches) {
      q.inputs = kept(q.inputs, operands);
      check_body_fits(name(), q, branch_in, out);
      programs.push_back(std::make_shared<const Program>(std::move(q)));
    }
    return Pruned{
        std::make_shared<const CondRule>(std::move(programs), std::move(in), std::move(out)), ins,
        outs};
  }

  std::vector<Array> jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                         const std::vector<Array>& outputs) const override {
    std::vector<Array> ops = part(primals, 1, primals.size());
    std::vector<bool> mt, mo;
    std::vector<Array> ts;
    for (size_t i = 0; i < ops.size(); ++i) {
      mt.push_back(is_inexact(ops[i].dtype()) && tangents[i + 1].valid());
      if (mt.back()) ts.push_back(tangents[i + 1]);
    }
    for (const Array& o : outputs) mo.push_back(is_inexact(o.dtype()));
    const size_t n = ops.size();
    std::vector<FlatFn> bs;
    for (size_t k = 0; k < num_branches(); ++k) {
      ProgramPtr b = bodies()[k];
      bs.push_back([b, n, mt, mo](const std::vector<Array>& in) {
        std::vector<Array> p = part(in, 0, n), t(n);
        size_t j = n;
        for (size_t i = 0; i < n; ++i) {
          if (mt[i]) t[i] = in[j++];
        }
        auto [outs, touts] = jvp_program(*b, p, t);
        std::vector<Array> r = outs;
        for (size_t k = 0; k < outs.size(); ++k) {
          if (mo[k]) r.push_back(instantiate(touts[k], outs[k]));
        }
        return r;
      });
    }
    std::vector<Array> outs = bind_cond("cond", primals[0], bs, concat(ops, ts));
    std::vector<Array> result;
    size_t at = outputs.size();
    for (size_t k = 0; k < outputs.size(); ++k) result.push_back(mo[k] ? outs[at++] : Array());
    return result;
  }

  std::vector<Array> vjp(const std::vector<Array>& primals, const std::vector<Array>& outputs,
                         const std::vector<Array>& cts) const override {
    std::vector<Array> ops = part(primals, 1, primals.size()), cs;
    std::vector<bool> mi, mo;
    for (const Array& x : ops) mi.push_back(is_inexact(x.dtype()));
    // Under an index that differs between the members of a named axis, each member runs its
    // own branch: an operand's cotangent must not be summed over the members inside a branch
    // (members in other branches would not take part), so the branches see the operands as
    // varying and the sum happens outside, at the operand (ad.cc: match_vma).
    const AxisMask index_vma = primals[0].aval().vma;
    for (size_t i = 0; i < ops.size(); ++i) {
      const AxisMask missing = index_vma & ~ops[i].aval().vma;
      if (mi[i] && missing != 0) ops[i] = pvary(ops[i], axis_names_of(missing));
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      mo.push_back(is_inexact(outputs[k].dtype()));
      if (mo.back()) cs.push_back(instantiate(cts[k], outputs[k]));
    }
    const size_t n = ops.size(), no = outputs.size();
    std::vector<FlatFn> bs;
    for (size_t k = 0; k < num_branches(); ++k) {
      ProgramPtr b = bodies()[k];
      bs.push_back([b, n, no, mi, mo](const std::vector<Array>& in) {
        std::vector<Array> p = part(in, 0, n), c(no);
        size_t j = n;
        for (size_t k = 0; k < no; ++k) {
          if (mo[k]) c[k] = in[j++];
        }
        std::vector<Array> in_cts = vjp_program(b, p).pullback(c), r;
        for (size_t i = 0; i < n; ++i) {
          if (mi[i]) r.push_back(instantiate(in_cts[i], p[i]));
        }
        return r;
      });
    }
    std::vector<Array> got = bind_cond("cond", primals[0], bs, concat(ops, cs));
    std::vector<Array> result(primals.size());
    size_t at = 0;
    for (size_t i = 0; i < n; ++i) {
      if (mi[i]) result[i + 1] = got[at++];
    }
    return result;
  }

  Batched vmap(const std::vector<Array>& args, const std::vector<int>& dims) const override {
    const int64_t size = batch_size(args, dims);
    std::vector<Array> ops = part(args, 1, args.size());
    std::vector<int> od(dims.begin() + 1, dims.end());
    if (dims[0] < 0) {
      std::vector<FlatFn> bs;
      for (size_t k = 0; k < num_branches(); ++k) {
        ProgramPtr b = bodies()[k];
        bs.push_back(
            [b, od, size](const std::vector<Array>& in) { return run_batched(*b, in, od, size); });
      }
      std::vector<Array> outs = bind_cond("cond", args[0], bs, ops);
      return {outs, std::vector<int>(outs.size(), 0)};
    }
    // Batched index: every branch runs on the whole batch; select per example.
    const int64_t n = static_cast<int64_t>(num_branches());
    Array index = clip(moveaxis(args[0], dims[0], 0), 0, static_cast<int>(n - 1));
    std::vector<Array> outs = run_batched(*bodies()[0], ops, od, size);
    for (int64_t k = 1; k < n; ++k) {
      std::vector<Array> alt = run_batched(*bodies()[k], ops, od, size);
      for (size_t o = 0; o < outs.size(); ++o) {
        Shape s(outs[o].ndim(), 1);
        s[0] = size;
        outs[o] = where(reshape(index == static_cast<int>(k), s), alt[o], outs[o]);
      }
    }
    return {outs, std::vector<int>(outs.size(), 0)};
  }
};

}  // namespace

Array cond_index(const char* op, const Array& pred) {
  if (pred.ndim() != 0)
    fail(op, "the predicate must be a scalar, got shape ", shape_str(pred.shape()));
  return astype(pred.dtype() == DType::kBool ? pred : pred != 0, DType::kI32);
}

Array switch_index(const Array& index) {
  if (index.ndim() != 0) {
    fail("switch", "the index must be a scalar, got shape ", shape_str(index.shape()));
  }
  if (is_floating(index.dtype())) {
    fail("switch", "the index must be an integer, got ", dtype_name(index.dtype()));
  }
  return astype(index, DType::kI32);
}

std::vector<Array> bind_cond(const char* op, const Array& index,
                             const std::vector<FlatFn>& branches_in,
                             const std::vector<Array>& operands) {
  auto added = std::make_shared<bool>(false);  // branches that return nothing return 0.0f
  std::vector<FlatFn> branches;
  for (const FlatFn& b : branches_in) branches.push_back(with_an_output(b, added));
  std::vector<Closed> cls;
  std::vector<Array> ins = concat({index}, operands);
  for (size_t k = 0; k < branches.size(); ++k) {
    cls.push_back(close_over(branches[k], avals_of(operands)));
    const auto &a = cls[k].out_avals, &b = cls[0].out_avals;
    bool same = a.size() == b.size();
    for (size_t o = 0; same && o < a.size(); ++o) {
      same = a[o].shape == b[o].shape && a[o].dtype == b[o].dtype;
    }
    if (!same) {
      std::string which = std::string(op) == "cond" ? (k == 1 ? "true_fn" : "false_fn")
                                                    : "branch " + std::to_string(k);
      std::string first = std::string(op) == "cond" ? "false_fn" : "branch 0";
      fail(op, "branch outputs differ: ", which, " returns ", avals_str(a), " but ", first,
           " returns ", avals_str(b));
    }
    ins = concat(ins, cls[k].consts);
  }
  std::vector<Aval> out = cls[0].out_avals;
  for (size_t o = 0; o < out.size(); ++o) {
    for (const Closed& c : cls) out[o].weak = out[o].weak && c.out_avals[o].weak;
  }
  // Each branch takes [operands, every branch's consts] and uses its own: traced again into a
  // program of that common signature.
  std::vector<ProgramPtr> programs;
  std::vector<Aval> branch_avals = avals_of(part(ins, 1, ins.size()));
  size_t offset = 1 + operands.size();
  const size_t n = operands.size();
  for (const Closed& c : cls) {
    size_t nc = c.consts.size();
    FlatFn f = c.fn;
    FlatFn wrapped = [f, n, offset, nc](const std::vector<Array>& in) {
      // `in` excludes the index: operands at [0, n), consts at [offset - 1, ...).
      return f(concat(part(in, offset - 1, offset - 1 + nc), part(in, 0, n)));
    };
    programs.push_back(trace_closed(wrapped, branch_avals).program);
    offset += nc;
  }
  auto p = std::make_shared<const CondRule>(programs, avals_of(ins), out);
  std::vector<Array> outs = graft::bind(p, ins);
  if (*added) outs.pop_back();
  return outs;
}

}  // namespace graft::detail
