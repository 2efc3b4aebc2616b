// Tile choice and the graft-level wrappers of the kernels' launchers (flash_forward.cu,
// flash_backward.cu).
#include "core/backend/cuda/attention/flash_attention.h"

#include <string>

#include "core/backend/cuda/runtime/check.h"
#include "core/error.h"

namespace graft::cuda::attention {
namespace {

size_t acc_bytes(Elem e) { return e == Elem::kF64 ? 8 : 4; }

// Shared memory of one block of `pass` (the layouts of flash_forward.cu's and flash_backward.cu's
// kernels).
size_t smem_bytes(FlashPass pass, Elem e, int64_t D, int bq, int bk) {
  const size_t dp = static_cast<size_t>(D) + 1, q = bq, k = bk;
  size_t n = 0;
  switch (pass) {
    case FlashPass::kForward:
      n = 2 * q * dp + 2 * k * dp + q * k + 3 * q;
      break;
    case FlashPass::kBackwardKV:
      n = 4 * k * dp + 2 * q * dp + 2 * q * k + 2 * q;
      break;
    case FlashPass::kBackwardQ:
      n = 3 * q * dp + 2 * k * dp + q * k + 2 * q;
      break;
  }
  return n * acc_bytes(e);
}

size_t smem_limit(int device) {
  int bytes = 0;
  check(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
        "cudaDeviceGetAttribute(shared memory per block)");
  return static_cast<size_t>(bytes);
}

FlashTiles tiles_or_throw(FlashPass pass, Elem e, const FlashGeometry& g, size_t limit) {
  FlashTiles t = flash_tiles(pass, e, g.D, limit);
  if (t.bq == 0) {
    throw Error("[cuda] flash_attention: head_dim " + std::to_string(g.D) +
                " needs more shared memory than the device's " + std::to_string(limit) +
                " bytes per block");
  }
  return t;
}

}  // namespace

FlashTiles flash_tiles(FlashPass pass, Elem e, int64_t D, size_t limit) {
  // Largest first: fewer passes over k / v (forward, dq) or q / do (dk, dv).
  static constexpr int kCandidates[][2] = {{64, 64}, {32, 64}, {32, 32}, {16, 32},
                                           {16, 16}, {8, 16},  {8, 8}};
  for (const auto& c : kCandidates) {
    const size_t bytes = smem_bytes(pass, e, D, c[0], c[1]);
    if (bytes <= limit) return {c[0], c[1], bytes};
  }
  return {};
}

size_t flash_backward_scratch(Elem e, const FlashGeometry& g) {
  return static_cast<size_t>(g.B * g.T * g.H) * acc_bytes(e);
}

void flash_forward(int device, cudaStream_t stream, Elem e, const FlashGeometry& g, const void* q,
                   const void* k, const void* v, void* o, void* lse) {
  if (g.B * g.T * g.H == 0) return;
  const FlashTiles t = tiles_or_throw(FlashPass::kForward, e, g, smem_limit(device));
  check(launch_flash_forward(e, g, t, q, k, v, o, lse, stream), "flash_attention forward kernel");
}

void flash_backward(int device, cudaStream_t stream, Elem e, const FlashGeometry& g,
                    const FlashGradPointers& p) {
  if (g.B * g.T * g.H == 0) {
    // No query: no key gets a gradient (as the CPU kernel).
    const size_t bytes = static_cast<size_t>(g.B * g.S * g.KV * g.D) * (e == Elem::kF64   ? 8
                                                                        : e == Elem::kF32 ? 4
                                                                                          : 2);
    if (bytes > 0) {
      check(cudaMemsetAsync(p.dk, 0, bytes, stream), "cudaMemsetAsync(dk)");
      check(cudaMemsetAsync(p.dv, 0, bytes, stream), "cudaMemsetAsync(dv)");
    }
    return;
  }
  const size_t limit = smem_limit(device);
  const FlashTiles kv = tiles_or_throw(FlashPass::kBackwardKV, e, g, limit);
  const FlashTiles q = tiles_or_throw(FlashPass::kBackwardQ, e, g, limit);
  check(launch_flash_backward(e, g, kv, q, p, stream), "flash_attention_grad kernels");
}

}  // namespace graft::cuda::attention
