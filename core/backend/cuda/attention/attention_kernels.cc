// The CUDA kernels of flash_attention / flash_attention_grad (core/primitives/attention.h):
// cuDNN's fused attention (cudnn_sdpa.h) for f16 / bf16 cases it supports, graft's own
// kernels (flash_attention.h) for everything else: f32 and f64, and half-precision shapes
// cuDNN refuses. GRAFT_CUDNN_ATTENTION=0 in the environment
// (read once) sends every case to graft's own kernels.
//
// Both paths produce the same outputs as the CPU kernel up to rounding: o, lse in graft's
// layouts (cuDNN's [B, H, T] f32 statistics are transposed to lse's [B, T, H], f32 for the
// half-precision cases cuDNN takes), and
// dlse enters the backward pass as delta = rowsum(do * o) - dlse on both.
#include <cstdlib>
#include <cstring>

#include "core/backend/cuda/attention/cudnn_sdpa.h"
#include "core/backend/cuda/attention/flash_attention.h"
#include "core/backend/cuda/attention/stats_layout.h"
#include "core/backend/cuda/kernel.h"
#include "core/backend/cuda/runtime/check.h"
#include "core/error.h"
#include "core/primitives/attention.h"

namespace graft::cuda {
namespace {

using namespace attention;

Elem elem_of(DType d) {
  switch (d) {
    case DType::kF16:
      return Elem::kF16;
    case DType::kBF16:
      return Elem::kBF16;
    case DType::kF32:
      return Elem::kF32;
    case DType::kF64:
      return Elem::kF64;
    default:
      break;
  }
  throw Error(std::string("[cuda] flash_attention: unsupported dtype ") + dtype_name(d));
}

bool cudnn_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("GRAFT_CUDNN_ATTENTION");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return enabled;
}

FlashGeometry geometry(const Call& call, const FlashParams& p) {
  const Shape &q = call.in_aval(0).shape, &k = call.in_aval(1).shape;
  return {q[0], q[1], q[2], k[1], k[2], q[3], p.scale};
}

// cuDNN's plan for a half-precision case, or nullptr (graft's own kernel runs).
const SdpaPlan* cudnn_plan(const Call& call, Elem e, const FlashGeometry& g, bool backward) {
  if ((e != Elem::kF16 && e != Elem::kBF16) || !cudnn_enabled()) return nullptr;
  const SdpaShape s{
      g.B, g.T, g.H, g.S, g.KV, g.D, e == Elem::kF16 ? SdpaType::kF16 : SdpaType::kBF16};
  return sdpa_plan(call.device(), call.stream(), s, backward);
}

constexpr size_t kAlign = 256;
size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

void flash_attention_kernel(Call& call) {
  const FlashParams& p = call.params<FlashAttention>().flash();
  const Elem e = elem_of(call.in_aval(0).dtype);
  const FlashGeometry g = geometry(call, p);
  void* o = call.out_raw(0);
  void* lse = call.out_raw(1);
  if (g.B * g.T * g.H == 0) return;
  if (const SdpaPlan* plan = cudnn_plan(call, e, g, false)) {
    const size_t ws = align_up(sdpa_workspace_bytes(*plan));
    char* scratch = static_cast<char*>(call.scratch(ws + g.B * g.H * g.T * sizeof(float)));
    float* stats = reinterpret_cast<float*>(scratch + ws);
    sdpa_forward(*plan, {call.in_raw(0), call.in_raw(1), call.in_raw(2), o, stats, scratch,
                         static_cast<float>(p.scale)});
    check(stats_to_lse(Elem::kF32, g.B, g.T, g.H, stats, lse, call.stream()), "stats_to_lse kernel");
    return;
  }
  flash_forward(call.device(), call.stream(), e, g, call.in_raw(0), call.in_raw(1), call.in_raw(2),
                o, lse);
}

void flash_attention_grad_kernel(Call& call) {
  const FlashParams& p = call.params<FlashAttentionGrad>().flash();
  const Elem e = elem_of(call.in_aval(0).dtype);
  const FlashGeometry g = geometry(call, p);
  FlashGradPointers ptr{call.in_raw(0),  call.in_raw(1),  call.in_raw(2), call.in_raw(3),
                        call.in_raw(4),  call.in_raw(5),  call.in_raw(6), call.out_raw(0),
                        call.out_raw(1), call.out_raw(2), nullptr};
  if (g.B * g.T * g.H > 0) {
    if (const SdpaPlan* plan = cudnn_plan(call, e, g, true)) {
      const size_t ws = align_up(sdpa_workspace_bytes(*plan));
      const size_t rows = align_up(g.B * g.H * g.T * sizeof(float));
      char* scratch = static_cast<char*>(call.scratch(ws + 2 * rows));
      float* stats = reinterpret_cast<float*>(scratch + ws);
      float* dlse = reinterpret_cast<float*>(scratch + ws + rows);
      check(lse_to_stats(Elem::kF32, g.B, g.T, g.H, ptr.lse, stats, call.stream()), "lse_to_stats kernel");
      check(lse_to_stats(Elem::kF32, g.B, g.T, g.H, ptr.d_lse, dlse, call.stream()), "lse_to_stats kernel");
      sdpa_backward(*plan, {ptr.q, ptr.k, ptr.v, ptr.o, ptr.d_o, stats, dlse, ptr.dq, ptr.dk,
                            ptr.dv, scratch, static_cast<float>(p.scale)});
      return;
    }
    ptr.scratch = call.scratch(flash_backward_scratch(e, g));
  }
  flash_backward(call.device(), call.stream(), e, g, ptr);
}

}  // namespace

void register_attention_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kFlashAttention)] = &flash_attention_kernel;
  table[static_cast<int>(PrimitiveId::kFlashAttentionGrad)] = &flash_attention_grad_kernel;
}

}  // namespace graft::cuda
