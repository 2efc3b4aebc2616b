// Why this file looks the way it does:
// - A plan is tied to the handle it was finalized with, and a handle to one device and (via
//   cudnnSetStream) one stream, so handles and plans are cached per (device, stream).
// - Unsupported cases are cached as nullptr so that a shape cuDNN refuses costs one graph
//   build per process, not one per call.
// - Plans are built under one global lock (rare, milliseconds to seconds with runtime
//   compilation); runs lock only their context.
#include "core/backend/cuda/attention/cudnn_sdpa.h"

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

#include "core/backend/cuda/attention/cudnn_backend.h"
#include "core/backend/cuda/attention/cudnn_sdpa_graph.h"
#include "core/backend/cuda/runtime/check.h"

namespace graft::cuda::attention {

using cudnn::Descriptor;
using cudnn::GraphBuilder;
namespace u = cudnn::sdpa_uid;

namespace {

constexpr size_t kAlign = 256;
size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// Makes `device` current for the scope (cuDNN binds a handle to the current device).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) : device_(device) {
    check(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device_) check(cudaSetDevice(device_), "cudaSetDevice");
  }
  ~DeviceGuard() {
    if (previous_ != device_) cudaSetDevice(previous_);
  }

 private:
  int device_, previous_ = 0;
};

// One cuDNN handle bound to a device and a stream; runs on it are serialized.
struct Context {
  explicit Context(int d) : device(d) {}
  int device;
  cudnn::Handle handle;  // created with `device` current
  std::mutex mu;
};

cudnn::SdpaDims dims_of(const SdpaShape& s, bool dlse) {
  return {s.B,
          s.T,
          s.H,
          s.S,
          s.KV,
          s.D,
          s.type == SdpaType::kF16 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16,
          dlse};
}

// Either a handle or a device-property descriptor (offline checks) targets the plan.
struct Target {
  cudnnHandle_t handle = nullptr;
  const Descriptor* device = nullptr;
};

struct Built {
  std::unique_ptr<GraphBuilder> graph;  // the plan refers to its operations
  std::optional<Descriptor> plan;
  int64_t workspace = 0;
  int64_t configs = 0;          // heuristics results
  bool reached_driver = false;  // a configuration failed only to load its kernels
  std::string why;              // when no plan
};

// Graph, heuristics (mode A), then the first engine configuration that finalizes.
Built build(const SdpaShape& s, bool backward, bool dlse, const Target& target) {
  Built b;
  b.graph = std::make_unique<GraphBuilder>();
  if (backward) {
    cudnn::build_sdpa_backward(*b.graph, dims_of(s, dlse));
  } else {
    cudnn::build_sdpa_forward(*b.graph, dims_of(s, dlse));
  }
  cudnnStatus_t status = b.graph->finalize();
  if (status != CUDNN_STATUS_SUCCESS) {
    b.why = "operation graph: " + cudnn::describe(status);
    return b;
  }
  Descriptor heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
  heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, b.graph->graph())
      .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  if (target.device != nullptr) heur.set_desc(CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, *target.device);
  status = heur.try_finalize();
  if (status != CUDNN_STATUS_SUCCESS) {
    if (!cudnn::not_supported(status)) check(status, "cudnnBackendFinalize(heuristics)");
    b.why = "heuristics: " + cudnn::describe(status);
    return b;
  }
  int64_t count = 0;
  check(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
        "cudnnBackendGetAttribute(heuristics results count)");
  std::vector<Descriptor> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    raw.push_back(configs.back().get());
  }
  int64_t returned = 0;
  if (count > 0) {
    check(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned, raw.data()),
          "cudnnBackendGetAttribute(heuristics results)");
  }
  b.configs = returned;
  b.why = "heuristics found no engine";
  for (int64_t i = 0; i < returned; ++i) {
    Descriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    if (target.handle != nullptr) {
      plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &target.handle);
    } else {
      plan.set_desc(CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP, *target.device);
    }
    plan.set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, configs[i]);
    // As cudnn-frontend: a configuration that does not finalize (not supported, a failed
    // runtime compilation) is skipped for the next one.
    status = plan.try_finalize();
    if (status != CUDNN_STATUS_SUCCESS) {
      b.why = "engine config " + std::to_string(i) + " of " + std::to_string(returned) + ": " +
              cudnn::describe(status);
      if (target.device != nullptr && status == CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER) {
        b.reached_driver = true;  // offline: as far as a machine without a driver gets
        break;
      }
      continue;
    }
    int64_t n = 0;
    check(cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                   CUDNN_TYPE_INT64, 1, &n, &b.workspace),
          "cudnnBackendGetAttribute(plan workspace size)");
    b.plan.emplace(std::move(plan));
    b.why.clear();
    break;
  }
  return b;
}

int compute_capability(int device) {
  int major = 0, minor = 0;
  check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
        "cudaDeviceGetAttribute(compute capability)");
  check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device),
        "cudaDeviceGetAttribute(compute capability)");
  return major * 10 + minor;
}

}  // namespace

class SdpaPlan {
 public:
  Context* context;
  Built built;
  SdpaShape shape;
  bool backward;
  size_t cudnn_workspace;  // aligned
};

namespace {

using ShapeKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int>;
using PlanKey = std::tuple<int, cudaStream_t, bool, ShapeKey>;

struct Registry {
  std::mutex mu;
  std::map<std::pair<int, cudaStream_t>, std::unique_ptr<Context>> contexts;
  std::map<PlanKey, std::unique_ptr<SdpaPlan>> plans;  // nullptr: not supported
  std::map<PlanKey, std::string> why;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed (see the header)
  return *r;
}

ShapeKey key_of(const SdpaShape& s) {
  return {s.B, s.T, s.H, s.S, s.KV, s.D, static_cast<int>(s.type)};
}

}  // namespace

std::string sdpa_unsupported_reason(const SdpaShape& s, bool backward, int sm) {
  if (sm < 80) return "cuDNN's fused attention needs compute capability 8.0 or newer";
  if (s.B < 1 || s.T < 1 || s.H < 1 || s.S < 1 || s.KV < 1 || s.D < 1) return "empty tensors";
  if (s.H % s.KV != 0 || s.T > s.S) return "invalid shape";
  if (s.S > std::numeric_limits<int32_t>::max()) return "more than 2^31 keys";
  if (s.D % 8 != 0) return "head_dim " + std::to_string(s.D) + " is not a multiple of 8";
  const int64_t max_d = (backward ? sm == 90 : sm >= 90) ? 256 : 128;
  if (s.D > max_d) {
    return "head_dim " + std::to_string(s.D) + " exceeds " + std::to_string(max_d) +
           " on compute capability " + std::to_string(sm);
  }
  if (backward && s.T == 1 && s.S == 1) return "backward with one query and one key";
  return "";
}

const SdpaPlan* sdpa_plan(int device, cudaStream_t stream, const SdpaShape& s, bool backward,
                          std::string* why) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const PlanKey key{device, stream, backward, key_of(s)};
  if (auto it = r.plans.find(key); it != r.plans.end()) {
    if (it->second == nullptr && why != nullptr) *why = r.why[key];
    return it->second.get();
  }
  std::string reason = sdpa_unsupported_reason(s, backward, compute_capability(device));
  // 9.6 brought bottom-right causal masks for any length and dq accumulators that need no
  // zeroing (this file relies on both).
  if (reason.empty() && cudnnGetVersion() < 90600) {
    reason = "cuDNN " + std::to_string(cudnnGetVersion()) + " is older than 9.6";
  }
  std::unique_ptr<SdpaPlan> plan;
  if (reason.empty()) {
    DeviceGuard guard(device);
    std::unique_ptr<Context>& ctx = r.contexts[{device, stream}];
    if (ctx == nullptr) {
      auto fresh = std::make_unique<Context>(device);
      check(cudnnSetStream(fresh->handle.get(), stream), "cudnnSetStream");
      ctx = std::move(fresh);
    }
    Built b = build(s, backward, /*dlse=*/true, Target{ctx->handle.get(), nullptr});
    if (b.plan) {
      const size_t ws = align_up(static_cast<size_t>(b.workspace));
      plan.reset(new SdpaPlan{ctx.get(), std::move(b), s, backward, ws});
    } else {
      reason = b.why;
    }
  }
  if (plan == nullptr) {
    r.why[key] = reason;
    if (why != nullptr) *why = reason;
  }
  return (r.plans[key] = std::move(plan)).get();
}

size_t sdpa_workspace_bytes(const SdpaPlan& p) {
  if (!p.backward) return p.cudnn_workspace;
  const SdpaShape& s = p.shape;
  const size_t rows = static_cast<size_t>(s.B * s.H * s.T);
  return p.cudnn_workspace + align_up(rows * sizeof(float)) +
         align_up(rows * static_cast<size_t>(s.D) * sizeof(float));
}

namespace {

void execute(const SdpaPlan& p, const std::vector<int64_t>& uids, std::vector<void*> ptrs,
             void* workspace, const char* what) {
  Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<int64_t>(uids.size()),
           uids.data())
      .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
           static_cast<int64_t>(ptrs.size()), ptrs.data())
      .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  pack.finalize("variant pack");
  DeviceGuard guard(p.context->device);
  std::lock_guard<std::mutex> lock(p.context->mu);
  check(cudnnBackendExecute(p.context->handle.get(), p.built.plan->get(), pack.get()), what);
}

}  // namespace

void sdpa_forward(const SdpaPlan& p, const SdpaForwardArgs& a) {
  // By-value scalars: cuDNN reads them from host memory when it launches.
  float scale = a.scale, neg_inf = -std::numeric_limits<float>::infinity();
  int32_t s_q = static_cast<int32_t>(p.shape.T), s_kv = static_cast<int32_t>(p.shape.S);
  execute(p, {u::kQ, u::kK, u::kV, u::kO, u::kStats, u::kScale, u::kNegInf, u::kSeqQ, u::kSeqKV},
          {const_cast<void*>(a.q), const_cast<void*>(a.k), const_cast<void*>(a.v), a.o, a.stats,
           &scale, &neg_inf, &s_q, &s_kv},
          a.workspace, "cudnnBackendExecute(flash attention forward)");
}

void sdpa_backward(const SdpaPlan& p, const SdpaBackwardArgs& a) {
  float scale = a.scale, neg_inf = -std::numeric_limits<float>::infinity();
  int32_t s_q = static_cast<int32_t>(p.shape.T), s_kv = static_cast<int32_t>(p.shape.S);
  const SdpaShape& s = p.shape;
  char* ws = static_cast<char*>(a.workspace);
  void* delta = ws + p.cudnn_workspace;
  void* dq_acc = ws + p.cudnn_workspace + align_up(static_cast<size_t>(s.B * s.H * s.T) * 4);
  execute(
      p,
      {u::kQ, u::kK, u::kV, u::kO, u::kDO, u::kStats, u::kDlse, u::kDQ, u::kDK, u::kDV, u::kDelta,
       u::kDqAccum, u::kScale, u::kNegInf, u::kSeqQ, u::kSeqKV},
      {const_cast<void*>(a.q), const_cast<void*>(a.k), const_cast<void*>(a.v),
       const_cast<void*>(a.o), const_cast<void*>(a.d_o), const_cast<float*>(a.stats),
       const_cast<float*>(a.dlse), a.dq, a.dk, a.dv, delta, dq_acc, &scale, &neg_inf, &s_q, &s_kv},
      a.workspace, "cudnnBackendExecute(flash attention backward)");
}

SdpaOfflineCheck sdpa_check_offline(const SdpaShape& s, bool backward,
                                    const std::string& device_json, int sm, bool dlse) {
  SdpaOfflineCheck out;
  out.why = sdpa_unsupported_reason(s, backward, sm);
  if (!out.why.empty()) {
    out.why = "pre-check: " + out.why;
    return out;
  }
  Descriptor device(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR);
  device.set(CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR,
             static_cast<int64_t>(device_json.size()), device_json.data());
  device.finalize("device properties");
  Built b = build(s, backward, dlse, Target{nullptr, &device});
  out.engine_configs = b.configs;
  out.compiled = b.reached_driver;
  out.planned = b.plan.has_value();
  out.why = b.why;
  return out;
}

}  // namespace graft::cuda::attention
