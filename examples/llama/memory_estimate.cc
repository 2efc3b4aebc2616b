#include "examples/llama/memory_estimate.h"

#include <sys/sysinfo.h>

#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/buffer.h"

namespace graft::llama_train {

// The same sums as nn::count_params (dense and MoE), in double (tested against them).
double estimate_params(const train::ModelConfig& m, int64_t vocab) {
  const double D = double(m.dim), L = double(m.n_layers), V = double(vocab);
  const double hd = m.n_heads > 0 ? double(m.dim / m.n_heads) : 0;
  const double attn = D * double(m.n_heads) * hd * 2 + D * double(m.n_kv_heads) * hd * 2;
  const double norms = L * 2 * D + D;
  const double embed = m.tied_embeddings ? 0 : V * D;
  const double output = D * V;
  if (m.n_routed_experts <= 0)
    return L * (attn + 3 * D * double(m.ffn_dim)) + output + embed + norms;
  const double G = m.moe_every > 0 ? double(m.n_layers / m.moe_every) : 0;
  const double E = double(m.n_routed_experts);
  const double moe = D * E + 3 * D * double(m.n_shared_experts) * double(m.expert_ffn_dim) +
                     E * 3 * D * double(m.expert_ffn_dim);
  return L * attn + (L - G) * 3 * D * double(m.ffn_dim) + G * moe + output + embed + norms;
}

MemoryEstimate estimate_memory(const train::TrainConfig& c, int64_t vocab) {
  MemoryEstimate e;
  e.params = estimate_params(c.model, vocab);
  const std::string& opt = c.optimizer.name;
  e.state_slots = (opt == "adam" || opt == "adamw") ? 2
                  : opt == "lion"                   ? 1
                                                    : (c.optimizer.momentum > 0 ? 1 : 0);
  e.bytes = e.params * 4.0 * (2 + e.state_slots);
  struct sysinfo info = {};
  if (sysinfo(&info) == 0) {
    e.machine_bytes = (double(info.totalram) + double(info.totalswap)) * double(info.mem_unit);
  }
  return e;
}

std::string describe(const MemoryEstimate& e, const train::TrainConfig& c) {
  std::ostringstream os;
  os.precision(15);
  os << "memory: " << e.params << " parameters; params + grads";
  if (e.state_slots > 0) {
    os << " + " << e.state_slots << " " << c.optimizer.name << " state array"
       << (e.state_slots > 1 ? "s" : "");
  }
  os << " (f32) = " << e.bytes << " bytes (" << bytes_str(e.bytes)
     << "), activations not included";
  return os.str();
}

}  // namespace graft::llama_train
