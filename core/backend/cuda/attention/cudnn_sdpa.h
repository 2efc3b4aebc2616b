// cuDNN 9's fused flash attention (forward with softmax statistics, backward) for graft's
// flash_attention / flash_attention_grad on f16 / bf16 tensors, through the backend graph
// API (graphs: cudnn_sdpa_graph.h). The statistics are f32 [B, H, T] (cuDNN's layout), equal
// to graft's lse; stats_layout.h converts them from / to graft's [B, T, H].
//
// Plans: one per (device, stream, direction, shape), built on first use (heuristics mode A,
// the first engine configuration that finalizes) on that (device, stream)'s own cuDNN
// handle, and kept for the life of the process (handles and plans are never destroyed: doing
// so during static destruction would race the CUDA runtime's teardown). A case cuDNN does not
// support (a host-side pre-check, NOT_SUPPORTED from the graph or the heuristics, or no engine
// configuration that finalizes: cudnn-frontend skips those too) is remembered as well:
// sdpa_plan returns nullptr and the caller runs its own kernel.
//
// Threading: safe from any thread; a plan's executions are serialized on its handle.
// Errors: graft::Error "[cuda] ..." for anything but "not supported" (no device, no driver,
// an invalid graph, a failed launch). Built only with --config=cuda.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace graft::cuda::attention {

enum class SdpaType { kF16, kBF16 };

struct SdpaShape {
  int64_t B, T, H, S, KV, D;  // q [B, T, H, D], k / v [B, S, KV, D]
  SdpaType type;
};

// Why cuDNN's fused attention cannot take `s` on a device of compute capability `sm`
// (90 = 9.0), judged on the host from the documented limits; "" when it may.
std::string sdpa_unsupported_reason(const SdpaShape& s, bool backward, int sm);

class SdpaPlan;

// The plan for `s` on (device, stream); nullptr when cuDNN does not support the case (`why`,
// when given, then says why). Throws graft::Error on any other failure.
const SdpaPlan* sdpa_plan(int device, cudaStream_t stream, const SdpaShape& s, bool backward,
                          std::string* why = nullptr);

// Device scratch a run of `plan` needs (cuDNN's workspace and, backward, the graph's f32
// intermediates), 256-byte aligned.
size_t sdpa_workspace_bytes(const SdpaPlan& plan);

struct SdpaForwardArgs {
  const void *q, *k, *v;  // graft layouts, the plan's type
  void* o;
  float* stats;  // [B, H, T]
  void* workspace;
  float scale;
};
// Enqueues the forward pass on the plan's stream.
void sdpa_forward(const SdpaPlan& plan, const SdpaForwardArgs& a);

struct SdpaBackwardArgs {
  const void *q, *k, *v, *o, *d_o;
  const float *stats, *dlse;  // [B, H, T]
  void *dq, *dk, *dv;
  void* workspace;
  float scale;
};
void sdpa_backward(const SdpaPlan& plan, const SdpaBackwardArgs& a);

// What cuDNN says of s's graph on the device described by `device_json` (cuDNN's
// device-property JSON, compute capability `sm`), asked without a GPU: heuristics, then each
// engine configuration until one gets through cuDNN's support checks and kernel generation.
// Without a driver, loading the generated kernels is the step that fails
// (CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER when a libcuda stub is loaded,
// NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING when there is no libcuda at all). `dlse` false
// builds cudnn-frontend's unmodified backward graph (for comparison).
struct SdpaOfflineCheck {
  int64_t engine_configs = 0;  // heuristics results
  bool compiled = false;       // a configuration passed the checks, failed only to load
  bool planned = false;        // a plan finalized (a driver is present)
  std::string why;             // the last failure
};
SdpaOfflineCheck sdpa_check_offline(const SdpaShape& s, bool backward,
                                    const std::string& device_json, int sm, bool dlse = true);

}  // namespace graft::cuda::attention
