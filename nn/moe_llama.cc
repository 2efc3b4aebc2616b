#include "nn/moe_llama.h"

#include <cmath>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "nn/cross_entropy.h"
#include "nn/norm.h"
#include "nn/rope.h"
#include "transforms/control_flow.h"
#include "transforms/remat.h"

namespace graft::nn {

void MoELlamaConfig::validate() const {
  base.validate();
  if (moe_every < 1 || base.n_layers % moe_every != 0) {
    fail("MoELlamaConfig", "n_layers (", base.n_layers, ") must be a multiple of moe_every (",
         moe_every, ")");
  }
  if (moe.dim != base.dim) {
    fail("MoELlamaConfig", "moe.dim (", moe.dim, ") must equal the model dim (", base.dim, ")");
  }
  if (absl::Status s = moe.validate(); !s.ok()) fail("MoELlamaConfig", s.message());
}

MoELlamaConfig MoELlamaConfig::small() {
  MoELlamaConfig c;
  c.base = LlamaConfig::small();
  c.moe.dim = c.base.dim;
  c.moe.n_experts = 8;
  c.moe.top_k = 2;
  c.moe.expert_ffn_dim = 512;
  c.moe.n_shared_experts = 1;
  c.moe.shared_ffn_dim = 512;
  c.moe.router = RouterScore::kSoftmax;
  c.moe.normalize_topk = true;
  c.moe.aux_loss_weight = 0.01;
  c.moe.z_loss_weight = 0.001;
  return c;
}

MoELlamaConfig MoELlamaConfig::tiny() {
  MoELlamaConfig c;
  c.base = LlamaConfig::tiny();
  c.moe.dim = c.base.dim;
  c.moe.n_experts = 4;
  c.moe.top_k = 2;
  c.moe.expert_ffn_dim = 64;
  c.moe.n_shared_experts = 1;
  c.moe.shared_ffn_dim = 64;
  c.moe.aux_loss_weight = 0.01;
  c.moe.z_loss_weight = 0.001;
  return c;
}

namespace {

// [L, ...] -> [groups, moe_every, ...] -> the dense slots [groups, moe_every - 1, ...] or the
// MoE slot [groups, ...].
Array grouped(const Array& a, int64_t groups, int64_t every) {
  Shape s = a.shape();
  s[0] = every;
  s.insert(s.begin(), groups);
  return reshape(a, s);
}
Array dense_slots(const Array& a, int64_t groups, int64_t every) {
  return slice_axis(grouped(a, groups, every), 1, 0, every - 1);
}
Array moe_slot(const Array& a, int64_t groups, int64_t every) {
  return squeeze(slice_axis(grouped(a, groups, every), 1, every - 1, every), {1});
}
Array index0(const Array& a, int64_t i) { return squeeze(slice_axis(a, 0, i, i + 1), {0}); }

RematPolicy policy_of(Remat r) {
  return r == Remat::kDotsSaveable ? dots_saveable() : nothing_saveable();
}

}  // namespace

MoELlamaParams moe_llama_init(const MoELlamaConfig& c, const Array& key) {
  c.validate();
  const int64_t G = c.groups(), n = c.moe_every;
  Array keys = random::split(key, 2);
  // Attention weights, norms, embedding and output exactly as a dense Llama of the same depth
  // (output projections scaled by 1 / sqrt(2 n_layers)); the MoE layers' dense FFNs are dropped.
  LlamaParams dense = llama_init(c.base, index0(keys, 0));
  MoELlamaParams p;
  p.embed = dense.embed;
  p.output = dense.output;
  p.final_norm = dense.final_norm;
  if (n > 1) {
    p.dense = tree_map([&](const Array& a) { return dense_slots(a, G, n); }, dense.layers);
  }
  const LlamaLayer& l = dense.layers;
  MoELlamaLayer& m = p.moe_layers;
  m.attn_norm = moe_slot(l.attn_norm, G, n);
  m.wq = moe_slot(l.wq, G, n);
  m.wk = moe_slot(l.wk, G, n);
  m.wv = moe_slot(l.wv, G, n);
  m.wo = moe_slot(l.wo, G, n);
  m.ffn_norm = moe_slot(l.ffn_norm, G, n);
  MoEConfig mc = c.moe;
  mc.init_std = c.base.init_std;
  mc.out_init_scale = 1.0 / std::sqrt(2.0 * double(c.base.n_layers));
  Array moe_keys = random::split(index0(keys, 1), G);
  std::vector<std::vector<Array>> per_leaf;  // [leaf][group]
  TreeDef def;
  for (int64_t g = 0; g < G; ++g) {
    auto [leaves, d] = tree_flatten(moe_init(mc, index0(moe_keys, g)));
    per_leaf.resize(leaves.size());
    for (size_t i = 0; i < leaves.size(); ++i) per_leaf[i].push_back(leaves[i]);
    def = d;
  }
  std::vector<Array> stacked;
  for (const std::vector<Array>& groups : per_leaf) stacked.push_back(stack(groups));
  m.moe = tree_unflatten<MoEParams>(def, stacked);
  return p;
}

LlamaLayer attention_weights(const MoELlamaLayer& m) {
  LlamaLayer l;
  l.attn_norm = m.attn_norm;
  l.wq = m.wq;
  l.wk = m.wk;
  l.wv = m.wv;
  l.wo = m.wo;
  return l;
}

MoELlamaHidden moe_llama_hidden(const MoELlamaParams& params, const Array& tokens,
                                const MoELlamaConfig& c) {
  c.validate();
  if (tokens.ndim() != 2 || !is_integral(tokens.dtype())) {
    fail("moe_llama_hidden", "tokens must be integer [batch, seq], got ",
         dtype_name(tokens.dtype()), shape_str(tokens.shape()));
  }
  if (params.moe_layers.wq.ndim() != 3 || params.moe_layers.wq.shape()[0] != c.groups()) {
    fail("moe_llama_hidden", "params.moe_layers must be stacked [groups = ", c.groups(),
         ", ...], wq is ", shape_str(params.moe_layers.wq.shape()));
  }
  const int64_t B = tokens.shape()[0], T = tokens.shape()[1], D = c.base.dim;
  const LlamaConfig& base = c.base;
  Array x = take(params.embed, tokens, 0);
  RopeTables rope = rope_tables(T, base.head_dim(), base.rope_theta, base.rope_scaling);

  using Dense = std::optional<LlamaLayer>;
  auto group_fn = [c, B, T, D](const Array& h, const Dense& dense, const MoELlamaLayer& m,
                               const Array& cos, const Array& sin) {
    const LlamaConfig& base = c.base;
    RopeTables r{cos, sin};
    Array x = h;
    for (int64_t j = 0; j + 1 < c.moe_every; ++j) {
      x = llama_layer(tree_map([j](const Array& a) { return index0(a, j); }, *dense), x, r, base);
    }
    x = llama_attention_block(attention_weights(m), x, r, base);
    Array f = astype(rms_norm(x, m.ffn_norm, base.norm_eps), base.compute_dtype);
    MoEOutput out = moe_apply(m.moe, reshape(f, {B * T, D}), c.moe);
    x = x + astype(reshape(out.y, {B, T, D}), x.dtype());
    return std::pair{x, out.stats};
  };
  auto [x_out, per_layer] = scan(
      [&](const Array& h, const std::pair<Dense, MoELlamaLayer>& layer) {
        if (base.remat == Remat::kNone) {
          return group_fn(h, layer.first, layer.second, rope.cos, rope.sin);
        }
        return checkpoint(group_fn, policy_of(base.remat), "moe_llama_group")(
            h, layer.first, layer.second, rope.cos, rope.sin);
      },
      x, std::pair<Dense, MoELlamaLayer>{params.dense, params.moe_layers});
  MoELlamaHidden out;
  out.hidden = astype(rms_norm(x_out, params.final_norm, base.norm_eps), base.compute_dtype);
  out.stats.aux_loss = mean(per_layer.aux_loss);
  out.stats.z_loss = mean(per_layer.z_loss);
  out.stats.moe_loss = sum(per_layer.loss);
  out.stats.expert_load = mean(per_layer.expert_load, {0});
  return out;
}

Array moe_llama_output_weight(const MoELlamaParams& params, const MoELlamaConfig& c) {
  if (c.base.tied_output) return transpose(params.embed);
  if (!params.output) fail("moe_llama", "config is untied but params have no output weight");
  return *params.output;
}

MoELlamaLoss moe_llama_loss(const MoELlamaParams& params, const Array& inputs, const Array& targets,
                            const MoELlamaConfig& c) {
  if (targets.shape() != inputs.shape()) {
    fail("moe_llama_loss", "targets ", shape_str(targets.shape()), " must match inputs ",
         shape_str(inputs.shape()));
  }
  MoELlamaHidden h = moe_llama_hidden(params, inputs, c);
  Array ce = chunked_cross_entropy(h.hidden, moe_llama_output_weight(params, c), targets,
                                   std::nullopt, {.chunk_tokens = c.base.loss_chunk_tokens});
  return {ce + h.stats.moe_loss, ce, h.stats};
}

namespace {
int64_t attention_params(const LlamaConfig& b) {
  const int64_t hd = b.head_dim();
  return b.dim * b.n_heads * hd * 2 + b.dim * b.n_kv_heads * hd * 2;
}
int64_t routed_expert_params(const MoEConfig& m) { return 3 * m.dim * m.expert_ffn_dim; }
int64_t router_and_shared_params(const MoEConfig& m) {
  return m.dim * m.n_experts + 3 * m.dim * m.n_shared_experts * m.shared_ffn_dim;
}
}  // namespace

int64_t count_active_matmul_params(const MoELlamaConfig& c) {
  const LlamaConfig& b = c.base;
  const int64_t G = c.groups(), dense_layers = b.n_layers - G;
  return b.n_layers * attention_params(b) + dense_layers * 3 * b.dim * b.ffn_dim +
         G * (router_and_shared_params(c.moe) + c.moe.top_k * routed_expert_params(c.moe)) +
         b.dim * b.vocab_size;
}

int64_t count_params(const MoELlamaConfig& c) {
  const LlamaConfig& b = c.base;
  const int64_t G = c.groups();
  const int64_t all_experts = c.moe.n_experts * routed_expert_params(c.moe);
  const int64_t active_experts = c.moe.top_k * routed_expert_params(c.moe);
  const int64_t norms = b.n_layers * 2 * b.dim + b.dim;
  const int64_t embed = b.tied_output ? 0 : b.vocab_size * b.dim;
  return count_active_matmul_params(c) + G * (all_experts - active_experts) + embed + norms;
}

double flops_per_token(const MoELlamaConfig& c, int64_t seq_len) {
  const LlamaConfig& b = c.base;
  return 6.0 * double(count_active_matmul_params(c)) +
         12.0 * double(b.n_layers) * double(b.n_heads) * double(b.head_dim()) * double(seq_len);
}

}  // namespace graft::nn
