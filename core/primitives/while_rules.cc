// The while_loop primitive's builder and rules.
//   jvp: a while loop over (primal, tangent) carries; the predicate ignores the tangents.
//   vjp: not supported (the trip count is dynamic): a graft::Error pointing to fori_loop/scan.
//   vmap: with an unbatched predicate, a while loop of the vmapped body. With a batched one
//        (it depends on batched values), the loop runs while any element's predicate holds
//        and every carry is batched; elements whose predicate is false keep their carry
//        (a select), so each ends with the value its own loop would give.
//   loop consts (jit's hoisting): each body's consts, cond inputs [0, num_cond_consts) and
//        body inputs [0, num_body_consts).
//   prune (jit's DCE), as JAX's while DCE: a carry stays if its final value is used, the
//        cond reads it, or the body reads it to compute a carry that stays (a fixpoint);
//        the others go from both bodies' inputs and the body's outputs, and so do consts
//        their body no longer reads. A loop kept only for its effects keeps one carry.
#include "core/error.h"
#include "core/interpreters/ad.h"
#include "core/interpreters/batching.h"
#include "core/lax/lax.h"
#include "core/primitives/control.h"
#include "core/primitives/control_util.h"

namespace graft::detail {
namespace {

class WhileRule : public WhilePrimitive {
 public:
  using WhilePrimitive::WhilePrimitive;

  std::shared_ptr<const Primitive> with_sub_programs(std::vector<ProgramPtr> b) const override {
    check_same_signature(name(), *bodies()[0], *b.at(0));
    check_same_signature(name(), *bodies()[1], *b.at(1));
    return std::make_shared<const WhileRule>(b[0], b[1], num_cond_consts(), num_body_consts(),
                                             in_avals(), out_avals());
  }
  std::vector<LoopConsts> loop_consts() const override {
    const size_t ncc = num_cond_consts(), nbc = num_body_consts();
    return {{0, 0, ncc}, {1, ncc, nbc}};
  }
  std::shared_ptr<const Primitive> with_loop_consts(size_t i, ProgramPtr new_body,
                                                    const std::vector<Aval>& added) const override {
    const int n = static_cast<int>(added.size());
    const int ncc = num_cond_consts() + (i == 0 ? n : 0),
              nbc = num_body_consts() + (i == 1 ? n : 0);
    std::vector<Aval> in = in_avals();
    in.insert(in.begin() + num_cond_consts() + (i == 0 ? 0 : num_body_consts()), added.begin(),
              added.end());
    // Body i must take [its consts, carry] and return what it returned.
    std::vector<Aval> want(in.begin() + (i == 0 ? 0 : ncc),
                           in.begin() + (i == 0 ? ncc : ncc + nbc));
    want.insert(want.end(), in.begin() + ncc + nbc, in.end());
    std::vector<Aval> got = new_body->input_avals();
    bool fits = got.size() == want.size() &&
                new_body->output_avals().size() == bodies()[i]->output_avals().size();
    for (size_t k = 0; fits && k < got.size(); ++k) {
      fits = got[k].shape == want[k].shape && got[k].dtype == want[k].dtype;
    }
    if (!fits) {
      fail(name(), "a body with hoisted consts must take ", avals_str(want), ", got ",
           avals_str(got));
    }
    std::vector<ProgramPtr> b = bodies();
    b.at(i) = std::move(new_body);
    return std::make_shared<const WhileRule>(b[0], b[1], ncc, nbc, std::move(in), out_avals());
  }

  std::optional<Pruned> prune(const std::vector<bool>& used, ProgramPass dce) const override {
    const size_t ncc = num_cond_consts(), nbc = num_body_consts(), nk = num_carry();
    const Program &c = *bodies()[0], &b = *bodies()[1];
    Program cq = dce(c);
    std::vector<bool> read_c = values_read(cq), outs = used;
    bool any = false;
    for (size_t k = 0; k < nk; ++k) {
      outs[k] = outs[k] || read_c[c.inputs[ncc + k]];
      any = any || outs[k];
    }
    if (!any && nk > 0) outs[0] = true;  // kept for its effects
    Program bq;
    std::vector<bool> read_b;
    for (bool changed = true; changed;) {
      bq = pruned_body(b, outs, dce);
      read_b = values_read(bq);
      changed = false;
      for (size_t k = 0; k < nk; ++k) {
        if (!outs[k] && read_b[b.inputs[nbc + k]]) outs[k] = changed = true;
      }
    }
    std::vector<bool> cond_in, body_in, ins;
    for (size_t i = 0; i < ncc; ++i) cond_in.push_back(read_c[c.inputs[i]]);
    for (size_t i = 0; i < nbc; ++i) body_in.push_back(read_b[b.inputs[i]]);
    ins = concat_masks(concat_masks(cond_in, body_in), outs);
    bool all = true;
    for (bool i : ins) all = all && i;
    if (all) return std::nullopt;  // every output is a carry: all outputs kept too
    cq.inputs = kept(c.inputs, concat_masks(cond_in, outs));
    bq.inputs = kept(b.inputs, concat_masks(body_in, outs));
    int new_ncc = 0, new_nbc = 0;
    for (bool i : cond_in) new_ncc += i;
    for (bool i : body_in) new_nbc += i;
    std::vector<Aval> in = kept(in_avals(), ins), out = kept(out_avals(), outs);
    auto avals = [&](size_t begin, size_t end) {  // [in[begin, end), carry]
      std::vector<Aval> a(in.begin() + begin, in.begin() + end);
      a.insert(a.end(), in.begin() + new_ncc + new_nbc, in.end());
      return a;
    };
    check_body_fits(name(), cq, avals(0, new_ncc), c.output_avals());
    check_body_fits(name(), bq, avals(new_ncc, new_ncc + new_nbc), out);
    auto p = std::make_shared<const WhileRule>(std::make_shared<const Program>(std::move(cq)),
                                               std::make_shared<const Program>(std::move(bq)),
                                               new_ncc, new_nbc, std::move(in), std::move(out));
    return Pruned{p, ins, outs};
  }

  std::vector<Array> jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                         const std::vector<Array>&) const override {
    const size_t ncc = num_cond_consts(), nbc = num_body_consts(), nk = num_carry();
    std::vector<Array> cc = part(primals, 0, ncc), bc = part(primals, ncc, ncc + nbc),
                       init = part(primals, ncc + nbc, primals.size());
    std::vector<bool> mb, mk;
    std::vector<Array> tb, tk;
    for (size_t i = 0; i < nbc; ++i) {
      mb.push_back(is_inexact(bc[i].dtype()) && tangents[ncc + i].valid());
      if (mb.back()) tb.push_back(tangents[ncc + i]);
    }
    for (size_t k = 0; k < nk; ++k) {
      mk.push_back(is_inexact(init[k].dtype()));
      if (mk.back()) tk.push_back(instantiate(tangents[ncc + nbc + k], init[k]));
    }
    const size_t ntb = tb.size();
    ProgramPtr c = bodies()[0], b = bodies()[1];
    FlatFn cond_j = [c, ncc, nk](const std::vector<Array>& in) {
      return run_program(*c, part(in, 0, ncc + nk));  // [cond consts, carry, tangents]
    };
    // [body consts, their tangents, carry, carry tangents] -> [carry, carry tangents]
    FlatFn body_j = [=](const std::vector<Array>& in) {
      std::vector<Array> p = part(in, 0, nbc), t(nbc);
      size_t j = nbc;
      for (size_t i = 0; i < nbc; ++i) {
        if (mb[i]) t[i] = in[j++];
      }
      size_t at = nbc + ntb;
      p = concat(p, part(in, at, at + nk));
      std::vector<Array> tc(nk);
      j = at + nk;
      for (size_t k = 0; k < nk; ++k) {
        if (mk[k]) tc[k] = in[j++];
      }
      t = concat(t, tc);
      auto [outs, touts] = jvp_program(*b, p, t);
      std::vector<Array> r = outs;
      for (size_t k = 0; k < nk; ++k) {
        if (mk[k]) r.push_back(instantiate(touts[k], outs[k]));
      }
      return r;
    };
    std::vector<Array> outs = bind_while(cond_j, body_j, cc, concat(bc, tb), concat(init, tk));
    std::vector<Array> result;
    size_t at = nk;
    for (size_t k = 0; k < nk; ++k) result.push_back(mk[k] ? outs[at++] : Array());
    return result;
  }

  std::vector<Array> vjp(const std::vector<Array>&, const std::vector<Array>&,
                         const std::vector<Array>&) const override {
    fail("while_loop",
         "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop "
         "with dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
         "start/stop.");
  }

  Batched vmap(const std::vector<Array>& args, const std::vector<int>& dims) const override {
    const size_t ncc = num_cond_consts(), nbc = num_body_consts(), nk = num_carry();
    const int64_t size = batch_size(args, dims);
    std::vector<Array> a(args.size());
    std::vector<int> d(args.size(), -1);
    for (size_t i = 0; i < args.size(); ++i) {
      a[i] = dims[i] < 0 ? args[i] : move_batch_axis(args[i], dims[i], 0, size);
      if (dims[i] >= 0) d[i] = 0;
    }
    ProgramPtr c = bodies()[0], b = bodies()[1];
    auto cond_dims = [&] {
      std::vector<int> cd = part_dims(d, 0, ncc);
      std::vector<int> kd = part_dims(d, ncc + nbc, d.size());
      cd.insert(cd.end(), kd.begin(), kd.end());
      return cd;
    };
    auto body_dims = [&] { return part_dims(d, ncc, d.size()); };
    auto batch_carry = [&](size_t k) {
      if (d[ncc + nbc + k] >= 0) return false;
      a[ncc + nbc + k] = move_batch_axis(a[ncc + nbc + k], -1, 0, size);
      d[ncc + nbc + k] = 0;
      return true;
    };
    bool pred_batched = false;
    for (bool changed = true; changed;) {
      changed = false;
      VmapResult rb = vmap_program(*b, part(a, ncc, a.size()), body_dims(), size);
      for (size_t k = 0; k < nk; ++k) {
        if (rb.dims[k] >= 0) changed = batch_carry(k) || changed;
      }
      std::vector<Array> ca = concat(part(a, 0, ncc), part(a, ncc + nbc, a.size()));
      VmapResult rc = vmap_program(*c, ca, cond_dims(), size);
      pred_batched = rc.dims[0] >= 0;
      if (pred_batched) {
        for (size_t k = 0; k < nk; ++k) changed = batch_carry(k) || changed;
      }
    }
    std::vector<int> cd = cond_dims(), bd = body_dims(), kd = part_dims(d, ncc + nbc, d.size());
    std::vector<Array> cc = part(a, 0, ncc), bc = part(a, ncc, ncc + nbc),
                       init = part(a, ncc + nbc, a.size());
    auto body_outs = [b, bd, kd, size](const std::vector<Array>& in) {
      VmapResult r = vmap_program(*b, in, bd, size);
      std::vector<Array> out;
      for (size_t k = 0; k < r.outputs.size(); ++k) {
        out.push_back(kd[k] < 0 ? r.outputs[k] : move_batch_axis(r.outputs[k], r.dims[k], 0, size));
      }
      return out;
    };
    std::vector<Array> outs;
    if (!pred_batched) {
      FlatFn cond_b = [c, cd, size](const std::vector<Array>& in) {
        return vmap_program(*c, in, cd, size).outputs;
      };
      outs = bind_while(cond_b, body_outs, cc, bc, init);
    } else {
      auto preds = [c, cd, size](const std::vector<Array>& in) {
        VmapResult r = vmap_program(*c, in, cd, size);
        return move_batch_axis(r.outputs[0], r.dims[0], 0, size);
      };
      FlatFn cond_b = [preds](const std::vector<Array>& in) {
        return std::vector<Array>{any(preds(in))};
      };
      // [cond consts, body consts, carry]: finished elements keep their carry.
      FlatFn body_b = [=](const std::vector<Array>& in) {
        std::vector<Array> carry = part(in, ncc + nbc, in.size());
        Array p = preds(concat(part(in, 0, ncc), carry));
        std::vector<Array> next = body_outs(part(in, ncc, in.size()));
        for (size_t k = 0; k < nk; ++k) {
          Shape s(carry[k].ndim(), 1);
          s[0] = size;
          next[k] = where(reshape(p, s), next[k], carry[k]);
        }
        return next;
      };
      outs = bind_while(cond_b, body_b, cc, concat(cc, bc), init);
    }
    return {outs, kd};
  }

 private:
  static std::vector<bool> concat_masks(std::vector<bool> a, const std::vector<bool>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
  static std::vector<int> part_dims(const std::vector<int>& d, size_t b, size_t e) {
    return std::vector<int>(d.begin() + b, d.begin() + e);
  }
};

}  // namespace

std::vector<Array> bind_while(const FlatFn& cond, const FlatFn& body,
                              const std::vector<Array>& cond_consts,
                              const std::vector<Array>& body_consts,
                              const std::vector<Array>& init_in) {
  std::vector<Array> init = init_in;
  Closed cc, bc;
  // A carry that starts the same on every member of a named axis but comes out of the body
  // varying over it is varying from the start (pvary), so the body is typed as it runs; the
  // body is traced again with it. Bits only grow, so this ends.
  for (int attempt = 0; attempt < 2 + kMaxAxisNames; ++attempt) {
    bc = close_over(body, concat_avals(avals_of(body_consts), avals_of(init)));
    if (bc.out_avals.size() != init.size()) {
      fail("while_loop", "body_fun returned ", bc.out_avals.size(), " arrays for a carry of ",
           init.size());
    }
    bool retry = false;
    for (size_t k = 0; k < init.size(); ++k) {
      const Aval &in = init[k].aval(), &out = bc.out_avals[k];
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
      fail("while_loop", "body_fun's carry output ", k, " is ", out.str(),
           " but the carry input is ", in.str(), " (carry shapes and dtypes must not change)");
    }
    if (!retry) break;
  }
  cc = close_over(cond, concat_avals(avals_of(cond_consts), avals_of(init)));
  if (cc.out_avals.size() != 1 || cc.out_avals[0].dtype != DType::kBool ||
      !cc.out_avals[0].shape.empty()) {
    fail("while_loop", "cond_fun must return a bool scalar, got ", avals_str(cc.out_avals));
  }
  std::vector<Array> c_all = concat(cc.consts, cond_consts), b_all = concat(bc.consts, body_consts);
  std::vector<Array> ins = concat(concat(c_all, b_all), init);
  auto p = std::make_shared<const WhileRule>(cc.program, bc.program, static_cast<int>(c_all.size()),
                                             static_cast<int>(b_all.size()), avals_of(ins),
                                             avals_of(init));
  return graft::bind(p, ins);
}

}  // namespace graft::detail
