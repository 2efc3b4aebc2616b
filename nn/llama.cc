#include "nn/llama.h"

#include <cmath>
#include <tuple>

#include "core/error.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "nn/attention.h"
#include "nn/cross_entropy.h"
#include "nn/init.h"
#include "nn/linear.h"
#include "nn/norm.h"
#include "transforms/control_flow.h"
#include "transforms/remat.h"

namespace graft::nn {

void LlamaConfig::validate() const {
  auto bad = [](const auto&... parts) { fail("LlamaConfig", parts...); };
  if (vocab_size <= 0) bad("vocab_size must be positive, got ", vocab_size);
  if (dim <= 0) bad("dim must be positive, got ", dim);
  if (n_layers <= 0) bad("n_layers must be positive, got ", n_layers);
  if (n_heads <= 0) bad("n_heads must be positive, got ", n_heads);
  if (n_kv_heads <= 0) bad("n_kv_heads must be positive, got ", n_kv_heads);
  if (ffn_dim <= 0) bad("ffn_dim must be positive, got ", ffn_dim);
  if (dim % n_heads != 0) bad("dim (", dim, ") must be divisible by n_heads (", n_heads, ")");
  if (n_heads % n_kv_heads != 0) {
    bad("n_heads (", n_heads, ") must be a multiple of n_kv_heads (", n_kv_heads, ")");
  }
  if (head_dim() % 2 != 0) bad("head_dim (", head_dim(), ") must be even for rotary embeddings");
  if (!(rope_theta > 0)) bad("rope_theta must be positive, got ", rope_theta);
  if (!(norm_eps > 0)) bad("norm_eps must be positive, got ", norm_eps);
  if (!(init_std >= 0)) bad("init_std must be >= 0, got ", init_std);
  if (compute_dtype != DType::kF32 && compute_dtype != DType::kBF16) {
    bad("compute_dtype must be f32 or bf16, got ", dtype_name(compute_dtype));
  }
  if (loss_chunk_tokens <= 0) bad("loss_chunk_tokens must be positive, got ", loss_chunk_tokens);
  if (rope_scaling) rope_inv_freq(head_dim(), rope_theta, rope_scaling);  // checks scaling
}

LlamaConfig LlamaConfig::tiny() { return LlamaConfig{}; }

LlamaConfig LlamaConfig::small() {
  LlamaConfig c;
  c.vocab_size = 8192;
  c.dim = 512;
  c.n_layers = 8;
  c.n_heads = 8;
  c.n_kv_heads = 4;
  c.ffn_dim = 1536;
  return c;
}

std::ostream& operator<<(std::ostream& os, const LlamaConfig& c) {
  static const char* kRemat[] = {"none", "dots_saveable", "nothing_saveable"};
  os << "LlamaConfig(vocab=" << c.vocab_size << ", dim=" << c.dim << ", layers=" << c.n_layers
     << ", heads=" << c.n_heads << ", kv_heads=" << c.n_kv_heads << ", ffn=" << c.ffn_dim
     << ", theta=" << c.rope_theta << ", scaling=";
  if (c.rope_scaling) {
    os << *c.rope_scaling;
  } else {
    os << "none";
  }
  return os << ", eps=" << c.norm_eps << ", tied=" << c.tied_output
            << ", remat=" << kRemat[int(c.remat)] << ", compute=" << dtype_name(c.compute_dtype)
            << ", init_std=" << c.init_std << ", scan=" << c.scan_layers
            << ", loss_chunk=" << c.loss_chunk_tokens << ")";
}

LlamaParams llama_init(const LlamaConfig& c, const Array& key) {
  c.validate();
  const int64_t L = c.n_layers, D = c.dim, hd = c.head_dim();
  const int64_t q_dim = c.n_heads * hd, kv_dim = c.n_kv_heads * hd;
  const double s = c.init_std, out_s = c.init_std / std::sqrt(2.0 * double(L));
  Array k = random::split(key, 9);
  auto w = [&](int i, const Shape& shape, double stddev) {
    return normal_init(key_at(k, i), shape, stddev);
  };
  LlamaParams p;
  p.embed = w(0, {c.vocab_size, D}, s);
  if (!c.tied_output) p.output = w(1, {D, c.vocab_size}, s);
  p.final_norm = ones({D});
  LlamaLayer& l = p.layers;
  l.attn_norm = ones({L, D});
  l.wq = w(2, {L, D, q_dim}, s);
  l.wk = w(3, {L, D, kv_dim}, s);
  l.wv = w(4, {L, D, kv_dim}, s);
  l.wo = w(5, {L, q_dim, D}, out_s);
  l.ffn_norm = ones({L, D});
  l.ffn.w1 = w(6, {L, D, c.ffn_dim}, s);
  l.ffn.w2 = w(7, {L, c.ffn_dim, D}, out_s);
  l.ffn.w3 = w(8, {L, D, c.ffn_dim}, s);
  return p;
}

Array llama_attention_block(const LlamaLayer& layer, const Array& x, const RopeTables& rope,
                            const LlamaConfig& c) {
  const int64_t B = x.shape()[0], T = x.shape()[1], hd = c.head_dim();
  Array h = astype(rms_norm(x, layer.attn_norm, c.norm_eps), c.compute_dtype);
  Array q = reshape(dense(h, layer.wq), {B, T, c.n_heads, hd});
  Array k = reshape(dense(h, layer.wk), {B, T, c.n_kv_heads, hd});
  Array v = reshape(dense(h, layer.wv), {B, T, c.n_kv_heads, hd});
  Array o = causal_attention(apply_rope(q, rope), apply_rope(k, rope), v);
  o = dense(reshape(o, {B, T, c.n_heads * hd}), layer.wo);
  return x + astype(o, x.dtype());
}

Array llama_ffn_block(const LlamaLayer& layer, const Array& x, const LlamaConfig& c) {
  Array h = astype(rms_norm(x, layer.ffn_norm, c.norm_eps), c.compute_dtype);
  return x + astype(layer.ffn(h), x.dtype());
}

Array llama_layer(const LlamaLayer& layer, const Array& x, const RopeTables& rope,
                  const LlamaConfig& c) {
  return llama_ffn_block(layer, llama_attention_block(layer, x, rope, c), c);
}

namespace {

void check_tokens(const char* op, const Array& tokens) {
  if (tokens.ndim() != 2 || !is_integral(tokens.dtype())) {
    fail(op, "tokens must be integer [batch, seq], got ", dtype_name(tokens.dtype()),
         shape_str(tokens.shape()));
  }
  if (tokens.shape()[1] == 0) fail(op, "empty sequence");
}

RematPolicy policy_of(Remat r) {
  return r == Remat::kDotsSaveable ? dots_saveable() : nothing_saveable();
}

}  // namespace

Array llama_hidden(const LlamaParams& params, const Array& tokens, const LlamaConfig& c) {
  c.validate();
  check_tokens("llama_hidden", tokens);
  if (params.layers.wq.ndim() != 3 || params.layers.wq.shape()[0] != c.n_layers) {
    fail("llama_hidden", "params.layers must be stacked [n_layers = ", c.n_layers, ", ...], wq is ",
         shape_str(params.layers.wq.shape()));
  }
  const int64_t T = tokens.shape()[1];
  Array x = take(params.embed, tokens, 0);  // the residual stream stays f32
  // Mixed precision: the stacked matmul weights are cast once, before the scan, not per
  // layer inside it (where the backward pass would cast them again).
  LlamaLayer layers = params.layers;
  if (c.compute_dtype != layers.wq.dtype()) {
    for (Array* w : {&layers.wq, &layers.wk, &layers.wv, &layers.wo, &layers.ffn.w1,
                     &layers.ffn.w2, &layers.ffn.w3}) {
      *w = astype(*w, c.compute_dtype);
    }
  }
  RopeTables rope = rope_tables(T, c.head_dim(), c.rope_theta, c.rope_scaling);

  // The tables are explicit arguments so a checkpointed body recomputes from its inputs.
  auto layer_fn = [c](const Array& h, const LlamaLayer& l, const Array& cos, const Array& sin) {
    return llama_layer(l, h, RopeTables{cos, sin}, c);
  };
  auto run = [&](const Array& h, const LlamaLayer& l) {
    if (c.remat == Remat::kNone) return layer_fn(h, l, rope.cos, rope.sin);
    return checkpoint(layer_fn, policy_of(c.remat), "llama_layer")(h, l, rope.cos, rope.sin);
  };
  if (c.scan_layers) {
    x = scan(
            [&](const Array& h, const LlamaLayer& l) {
              return std::pair{run(h, l), std::tuple<>{}};
            },
            x, layers)
            .first;
  } else {
    for (int64_t i = 0; i < c.n_layers; ++i) {
      LlamaLayer li = tree_map(
          [i](const Array& a) { return squeeze(slice_axis(a, 0, i, i + 1), {0}); }, layers);
      x = run(x, li);
    }
  }
  return astype(rms_norm(x, params.final_norm, c.norm_eps), c.compute_dtype);
}

Array llama_output_weight(const LlamaParams& params, const LlamaConfig& c) {
  if (c.tied_output) return transpose(params.embed);
  if (!params.output) fail("llama", "config is untied but params have no output weight");
  return *params.output;
}

Array llama_logits(const LlamaParams& params, const Array& tokens, const LlamaConfig& c) {
  Array h = llama_hidden(params, tokens, c);
  Array w = astype(llama_output_weight(params, c), h.dtype());
  return dot_general(h, w, {{2}, {0}, {}, {}}, DType::kF32);
}

Array llama_loss(const LlamaParams& params, const Array& inputs, const Array& targets,
                 const LlamaConfig& c, const std::optional<Array>& mask) {
  if (targets.shape() != inputs.shape()) {
    fail("llama_loss", "targets ", shape_str(targets.shape()), " must match inputs ",
         shape_str(inputs.shape()));
  }
  Array h = llama_hidden(params, inputs, c);
  return chunked_cross_entropy(h, llama_output_weight(params, c), targets, mask,
                               {.chunk_tokens = c.loss_chunk_tokens});
}

int64_t count_matmul_params(const LlamaConfig& c) {
  const int64_t D = c.dim, hd = c.head_dim();
  const int64_t attn = D * c.n_heads * hd * 2 + D * c.n_kv_heads * hd * 2;
  const int64_t mlp = 3 * D * c.ffn_dim;
  return c.n_layers * (attn + mlp) + D * c.vocab_size;
}

int64_t count_params(const LlamaConfig& c) {
  const int64_t norms = c.n_layers * 2 * c.dim + c.dim;
  // The embedding table; untied models add a separate output matrix (counted in matmuls).
  const int64_t embed = c.tied_output ? 0 : c.vocab_size * c.dim;
  return count_matmul_params(c) + embed + norms;
}

double flops_per_token(const LlamaConfig& c, int64_t seq_len) {
  return 6.0 * double(count_matmul_params(c)) +
         12.0 * double(c.n_layers) * double(c.n_heads) * double(c.head_dim()) * double(seq_len);
}

}  // namespace graft::nn
