#include "transforms/remat.h"

#include <sstream>
#include <unordered_map>

#include "core/error.h"
#include "core/ops.h"
#include "core/primitives/call.h"
#include "core/ir/ad.h"
#include "core/primitives/control_util.h"

namespace graft {
namespace detail {
namespace {

// f's traced graph and the values the policy saves: the remat primitive's outputs are
// g.outputs followed by the saved node outputs.
struct RematBody {
  Graph g;
  std::vector<OutKey> saved;
  // For each saved node, the index in the primitive's outputs of each of its outputs.
  std::unordered_map<const Node*, std::vector<size_t>> slots;

  std::vector<Array> run(const std::vector<Array>& xs) const {
    Env env = replay(g, xs);
    std::vector<Array> outs = env.lookup(g.outputs);
    for (const auto& [n, o] : saved) outs.push_back(env.get(n)[o]);
    return outs;
  }
};

std::shared_ptr<const RematBody> make_body(const FlatFn& fn, const std::vector<Aval>& avals,
                                           const RematPolicy& policy) {
  auto b = std::make_shared<RematBody>();
  b->g = trace_avals(fn, avals);
  for (const Node* n : b->g.nodes) {
    if (!policy.saveable(*n->primitive)) continue;
    std::vector<size_t>& slot = b->slots[n];
    for (uint32_t o = 0; o < n->avals.size(); ++o) {
      // A saved value that is also an output of f is not stored twice.
      size_t at = b->g.outputs.size() + b->saved.size();
      for (size_t j = 0; j < b->g.outputs.size(); ++j) {
        const Array& out = b->g.outputs[j];
        if (out.node().get() == n && out.output_index() == o) {
          at = j;
          break;
        }
      }
      if (at == b->g.outputs.size() + b->saved.size()) b->saved.push_back({n, o});
      slot.push_back(at);
    }
  }
  return b;
}

std::vector<Array> bind_remat(const std::string& name, const FlatFn& fn, const RematPolicy& policy,
                              const std::vector<Array>& args);

class Remat : public CallPrimitive {
 public:
  Remat(std::string name, std::shared_ptr<const RematBody> body, RematPolicy policy,
        std::vector<Aval> in, std::vector<Aval> out)
      : CallPrimitive(
            PrimitiveId::kRemat, std::move(name),
            [body](const std::vector<Array>& xs) { return body->run(xs); }, std::move(in),
            std::move(out)),
        body_(std::move(body)),
        policy_(std::move(policy)) {}

  std::string params() const override {
    return CallPrimitive::params() + " policy=" + policy_.name +
           " saved=" + std::to_string(body_->saved.size());
  }
  size_t num_main() const { return body_->g.outputs.size(); }
  // The primitive that computed output `o` inside the body.
  std::string source(size_t o) const {
    if (o < num_main()) return "remat";
    return "remat/" + std::string(body_->saved[o - num_main()].first->primitive->name());
  }

  std::vector<Array> jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                         const std::vector<Array>&) const override {
    FlatFn full = fn();
    size_t n = primals.size();
    FlatFn tangent_fn = [full, n](const std::vector<Array>& xs) {
      return jvp_flat(full, part(xs, 0, n), part(xs, n, 2 * n)).second;
    };
    std::vector<Array> ts(n);
    for (size_t i = 0; i < n; ++i) ts[i] = instantiate(tangents[i], primals[i]);
    std::vector<Array> outs = bind_remat(fn_name(), tangent_fn, policy_, concat(primals, ts));
    return part(outs, 0, out_avals().size());
  }

  // Replays the body on the primals with the saved nodes' values taken from this
  // application's outputs (the rest is recomputed), then runs the body's backward pass.
  std::vector<Array> vjp(const std::vector<Array>& primals, const std::vector<Array>& outputs,
                         const std::vector<Array>& cts) const override {
    const RematBody& b = *body_;
    Env env;
    for (size_t i = 0; i < primals.size(); ++i) env.set(b.g.inputs[i].node().get(), {primals[i]});
    for (const Node* n : b.g.nodes) {
      auto s = b.slots.find(n);
      if (s == b.slots.end()) {
        env.set(n, graft::bind(n->primitive, env.lookup(n->inputs)));
      } else {
        std::vector<Array> vals;
        for (size_t at : s->second) vals.push_back(outputs[at]);
        env.set(n, std::move(vals));
      }
    }
    std::vector<OutKey> targets;
    for (const Array& o : b.g.outputs) targets.push_back({o.node().get(), o.output_index()});
    targets.insert(targets.end(), b.saved.begin(), b.saved.end());
    std::vector<Array> in_cts = backprop(b.g, env, targets, cts);
    for (size_t i = 0; i < in_cts.size(); ++i) {
      if (!is_floating(primals[i].dtype())) in_cts[i] = Array();
    }
    return in_cts;
  }

  Batched vmap(const std::vector<Array>& args, const std::vector<int>& dims) const override {
    int64_t size = batch_size(args, dims);
    FlatFn full = fn();
    FlatFn batched = [full, dims, size](const std::vector<Array>& xs) {
      return run_batched(full, xs, dims, size);
    };
    std::vector<Array> outs = bind_remat(fn_name(), batched, policy_, args);
    outs.resize(out_avals().size());
    return {outs, std::vector<int>(outs.size(), 0)};
  }

 private:
  std::shared_ptr<const RematBody> body_;
  RematPolicy policy_;
};

std::vector<Array> bind_remat(const std::string& name, const FlatFn& fn, const RematPolicy& policy,
                              const std::vector<Array>& args) {
  std::shared_ptr<const RematBody> body = make_body(fn, avals_of(args), policy);
  std::vector<Aval> out = avals_of(body->g.outputs);
  for (const auto& [n, o] : body->saved) out.push_back(n->avals[o]);
  auto p = std::make_shared<const Remat>(name, body, policy, avals_of(args), out);
  return graft::bind(p, args);
}

class CheckpointName : public CallPrimitive {
 public:
  CheckpointName(std::string name, Aval aval)
      : CallPrimitive(PrimitiveId::kCheckpointName, std::move(name),
                      [](const std::vector<Array>& xs) { return xs; }, {aval}, {aval}) {}

  bool same_params(const Primitive& o) const override {
    auto* c = dynamic_cast<const CheckpointName*>(&o);
    return c != nullptr && c->fn_name() == fn_name() && c->in_avals() == in_avals();
  }
  std::vector<Array> jvp(const std::vector<Array>&, const std::vector<Array>& tangents,
                         const std::vector<Array>&) const override {
    return tangents;
  }
  std::vector<Array> vjp(const std::vector<Array>&, const std::vector<Array>&,
                         const std::vector<Array>& cts) const override {
    return cts;
  }
  Batched vmap(const std::vector<Array>& args, const std::vector<int>& dims) const override {
    return {{checkpoint_name(args[0], fn_name())}, dims};
  }
};

}  // namespace

std::vector<Array> bind_checkpoint(const std::string& name, FlatFn fn, RematPolicy policy,
                                   const std::vector<Array>& args) {
  // Arrays of outer traces that f closes over become inputs, so grad reaches them.
  Closed c = close_over(fn, avals_of(args));
  std::vector<Array> outs = bind_remat(name, c.fn, policy, concat(c.consts, args));
  return part(outs, 0, c.out_avals.size());
}

std::vector<SavedResidual> saved_residuals_flat(const FlatFn& fn, const std::vector<Array>& args) {
  std::vector<Array> kept = vjp_residuals(fn, args);
  std::vector<SavedResidual> out;
  for (const Array& a : kept) {
    SavedResidual r;
    r.aval = a.aval();
    r.bytes = a.nbytes();
    for (size_t i = 0; i < args.size() && r.source.empty(); ++i) {
      if (args[i].node() == a.node()) r.source = "argument " + std::to_string(i);
    }
    if (r.source.empty()) {
      const Primitive* p = a.node()->primitive.get();
      auto* rm = dynamic_cast<const Remat*>(p);
      r.source = rm ? rm->source(a.output_index()) : p ? std::string(p->name()) : "constant";
    }
    out.push_back(r);
  }
  return out;
}

std::string format_residuals(const std::vector<SavedResidual>& res) {
  std::ostringstream os;
  int64_t total = 0;
  for (const SavedResidual& r : res) {
    os << r.aval.str() << "  " << r.bytes << " bytes  from " << r.source << "\n";
    total += r.bytes;
  }
  os << "total: " << res.size() << " residuals, " << total << " bytes\n";
  return os.str();
}

}  // namespace detail

RematPolicy nothing_saveable() {
  return {"nothing_saveable", [](const Primitive&) { return false; }};
}
RematPolicy everything_saveable() {
  return {"everything_saveable", [](const Primitive&) { return true; }};
}
RematPolicy dots_saveable() {
  return {"dots_saveable", [](const Primitive& p) { return p.id() == PrimitiveId::kDotGeneral; }};
}
RematPolicy save_only_these_names(std::set<std::string> names) {
  std::string label = "save_only_these_names(";
  for (const std::string& n : names) label += (label.back() == '(' ? "" : ", ") + n;
  return {label + ")", [names](const Primitive& p) {
            auto* c = dynamic_cast<const CallPrimitive*>(&p);
            return p.id() == PrimitiveId::kCheckpointName && c && names.count(c->fn_name()) > 0;
          }};
}

Array checkpoint_name(const Array& x, const std::string& name) {
  if (!x.valid()) fail("checkpoint_name", "got an empty Array");
  return bind1(std::make_shared<const detail::CheckpointName>(name, x.aval()), {x});
}

}  // namespace graft
