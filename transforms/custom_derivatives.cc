#include "transforms/custom_derivatives.h"

#include "core/error.h"
#include "core/ops.h"
#include "core/primitives/call.h"
#include "core/ir/ad.h"
#include "core/ir/batching.h"

namespace graft {
namespace detail {
namespace {

std::vector<Aval> avals_of(const std::vector<Array>& xs) {
  std::vector<Aval> a;
  for (const Array& x : xs) a.push_back(x.aval());
  return a;
}

std::vector<Array> zeros_for(const std::vector<Array>& primals, const std::vector<Array>& ts) {
  std::vector<Array> out(ts);
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].valid()) out[i] = zeros(primals[i].shape(), primals[i].dtype());
  }
  return out;
}

int64_t batch_size(const std::vector<Array>& args, const std::vector<int>& dims) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (dims[i] >= 0) return args[i].shape()[dims[i]];
  }
  return 0;
}

// fn vmapped over fixed in_dims; every output comes back batched along axis 0.
std::vector<Array> run_batched(const FlatFn& fn, const std::vector<Array>& xs,
                               const std::vector<int>& dims, int64_t size) {
  VmapResult r = vmap_flat(fn, xs, dims, size);
  std::vector<Array> out;
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    out.push_back(move_batch_axis(r.outputs[i], r.dims[i], 0, size));
  }
  return out;
}

std::vector<Aval> batched_avals(const std::vector<Aval>& avals, int64_t size) {
  std::vector<Aval> out = avals;
  for (Aval& a : out) a.shape.insert(a.shape.begin(), size);
  return out;
}

class CustomJvpCall : public CallPrimitive {
 public:
  CustomJvpCall(std::string name, FlatFn fn, JvpRuleFn rule, std::vector<Aval> in,
                std::vector<Aval> out)
      : CallPrimitive(PrimitiveId::kCustomJvpCall, std::move(name), std::move(fn), std::move(in),
                      std::move(out)),
        rule_(std::move(rule)) {}

  std::vector<Array> jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                         const std::vector<Array>&) const override {
    return rule_(primals, zeros_for(primals, tangents)).second;
  }

  // The rule is linear in the tangents: its transpose (a vjp w.r.t. the tangents) is the
  // pullback.
  std::vector<Array> vjp(const std::vector<Array>& primals, const std::vector<Array>&,
                         const std::vector<Array>& cts) const override {
    JvpRuleFn rule = rule_;
    FlatFn tangent_map = [rule, primals](const std::vector<Array>& ts) {
      return rule(primals, ts).second;
    };
    std::vector<Array> t0 = zeros_for(primals, std::vector<Array>(primals.size()));
    VjpResult v = vjp_flat(tangent_map, t0);
    std::vector<Array> out = v.pullback(cts);
    for (size_t i = 0; i < out.size(); ++i) {
      if (!is_floating(primals[i].dtype())) out[i] = Array();
    }
    return out;
  }

  Batched vmap(const std::vector<Array>& args, const std::vector<int>& dims) const override {
    int64_t size = batch_size(args, dims);
    FlatFn f = fn();
    JvpRuleFn rule = rule_;
    FlatFn fn_b = [f, dims, size](const std::vector<Array>& xs) {
      return run_batched(f, xs, dims, size);
    };
    JvpRuleFn rule_b = [rule, dims, size](const std::vector<Array>& ps,
                                          const std::vector<Array>& ts) {
      size_t n = ps.size();
      FlatFn both = [rule, n](const std::vector<Array>& xs) {
        std::vector<Array> p(xs.begin(), xs.begin() + n), t(xs.begin() + n, xs.end());
        auto [o, to] = rule(p, t);
        std::vector<Array> all = o;
        all.insert(all.end(), to.begin(), to.end());
        return all;
      };
      std::vector<Array> xs = ps;
      xs.insert(xs.end(), ts.begin(), ts.end());
      std::vector<int> d = dims;
      d.insert(d.end(), dims.begin(), dims.end());
      std::vector<Array> r = run_batched(both, xs, d, size);
      size_t half = r.size() / 2;
      return std::pair{std::vector<Array>(r.begin(), r.begin() + half),
                       std::vector<Array>(r.begin() + half, r.end())};
    };
    auto p = std::make_shared<const CustomJvpCall>(fn_name(), fn_b, rule_b, avals_of(args),
                                                   batched_avals(out_avals(), size));
    std::vector<Array> outs = graft::bind(p, args);
    return {outs, std::vector<int>(outs.size(), 0)};
  }

 private:
  JvpRuleFn rule_;
};

class CustomVjpCall : public CallPrimitive {
 public:
  CustomVjpCall(std::string name, FlatFn fn, FwdFn fwd, BwdFn bwd, std::vector<Aval> in,
                std::vector<Aval> out)
      : CallPrimitive(PrimitiveId::kCustomVjpCall, std::move(name), std::move(fn), std::move(in),
                      std::move(out)),
        fwd_(std::move(fwd)),
        bwd_(std::move(bwd)) {}

  std::vector<Array> jvp(const std::vector<Array>&, const std::vector<Array>&,
                         const std::vector<Array>&) const override {
    fail("custom_vjp", fn_name(),
         ": forward-mode differentiation (jvp) of a custom_vjp function is not supported; "
         "define it with custom_jvp to use jvp, jacfwd or hessian");
  }

  std::vector<Array> vjp(const std::vector<Array>& primals, const std::vector<Array>& outputs,
                         const std::vector<Array>& cts) const override {
    auto [outs, res] = fwd_(primals);
    std::vector<Array> in_cts = bwd_(res, zeros_for(outputs, cts));
    if (in_cts.size() != primals.size()) {
      fail("custom_vjp", fn_name(), ": bwd returned ", in_cts.size(), " cotangents for ",
           primals.size(), " arguments");
    }
    for (size_t i = 0; i < in_cts.size(); ++i) {
      if (!is_floating(primals[i].dtype())) in_cts[i] = Array();
    }
    return in_cts;
  }

  Batched vmap(const std::vector<Array>& args, const std::vector<int>& dims) const override {
    int64_t size = batch_size(args, dims);
    FlatFn f = fn();
    FwdFn fwd = fwd_;
    BwdFn bwd = bwd_;
    auto num_res = std::make_shared<size_t>(0);
    FlatFn fn_b = [f, dims, size](const std::vector<Array>& xs) {
      return run_batched(f, xs, dims, size);
    };
    size_t num_out = out_avals().size();
    FwdFn fwd_b = [fwd, dims, size, num_out](const std::vector<Array>& xs) {
      FlatFn both = [fwd](const std::vector<Array>& ys) {
        auto [o, r] = fwd(ys);
        o.insert(o.end(), r.begin(), r.end());
        return o;
      };
      std::vector<Array> all = run_batched(both, xs, dims, size);
      return std::pair{std::vector<Array>(all.begin(), all.begin() + num_out),
                       std::vector<Array>(all.begin() + num_out, all.end())};
    };
    BwdFn bwd_b = [bwd, dims, size](const std::vector<Array>& res, const std::vector<Array>& cts) {
      size_t nr = res.size();
      FlatFn both = [bwd, nr](const std::vector<Array>& ys) {
        return bwd(std::vector<Array>(ys.begin(), ys.begin() + nr),
                   std::vector<Array>(ys.begin() + nr, ys.end()));
      };
      std::vector<Array> xs = res;
      xs.insert(xs.end(), cts.begin(), cts.end());
      std::vector<Array> in_cts = run_batched(both, xs, std::vector<int>(xs.size(), 0), size);
      // An unbatched argument's cotangent sums the per-example ones.
      for (size_t i = 0; i < in_cts.size() && i < dims.size(); ++i) {
        in_cts[i] = dims[i] < 0 ? sum(in_cts[i], {0}) : moveaxis(in_cts[i], 0, dims[i]);
      }
      return in_cts;
    };
    (void)num_res;
    auto p = std::make_shared<const CustomVjpCall>(fn_name(), fn_b, fwd_b, bwd_b, avals_of(args),
                                                   batched_avals(out_avals(), size));
    std::vector<Array> outs = graft::bind(p, args);
    return {outs, std::vector<int>(outs.size(), 0)};
  }

 private:
  FwdFn fwd_;
  BwdFn bwd_;
};

}  // namespace

std::vector<Array> bind_custom_jvp(const std::string& name, FlatFn fn, JvpRuleFn rule,
                                   const std::vector<Array>& args) {
  Graph g = trace(fn, args);  // for the output avals
  auto p = std::make_shared<const CustomJvpCall>(name, std::move(fn), std::move(rule),
                                                 avals_of(args), avals_of(g.outputs));
  return graft::bind(p, args);
}

std::vector<Array> bind_custom_vjp(const std::string& name, FlatFn fn, FwdFn fwd, BwdFn bwd,
                                   const std::vector<Array>& args) {
  Graph g = trace(fn, args);
  auto p = std::make_shared<const CustomVjpCall>(
      name, std::move(fn), std::move(fwd), std::move(bwd), avals_of(args), avals_of(g.outputs));
  return graft::bind(p, args);
}

}  // namespace detail
}  // namespace graft
