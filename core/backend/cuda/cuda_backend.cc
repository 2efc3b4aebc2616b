// The CUDA backend: programs run instruction by instruction through the CPU backend's
// executor and buffer plan (core/backend/cpu/executable.h), each instruction by the CUDA
// kernel table (kernel.h) on its device's compute stream; memory from the device's caching
// allocator. Linking //core/backend/cuda in a --config=cuda build registers it as the device
// backend (core/backend/backend.h): arrays device_put on a GPU are computed there.
//
// A run's device is that of its first argument in device memory (device 0 when none is);
// operands in host memory are copied there (execute.h).
#include <utility>

#include "core/backend/backend.h"
#include "core/backend/cuda/device.h"
#include "core/backend/cuda/execute.h"
#include "core/backend/cuda/runtime/allocator.h"
#include "core/backend/cuda/runtime/stream.h"
#include "core/error.h"

namespace graft::cuda {
namespace {

class CudaExecutable : public Executable {
 public:
  CudaExecutable(std::shared_ptr<const Program> p, std::vector<bool> donate)
      : Executable(std::move(p), std::move(donate)),
        plan_(plan_buffers(program(), donated())),
        epilogues_(plan_epilogues(program())) {}

  Buffers run_buffers(Buffers& args) const override {
    int device = 0;
    for (const auto& a : args) {
      if (a && !a->on_host()) {
        device = a->device();
        break;
      }
    }
    // Host arguments go to the device once here, not once per instruction that reads them;
    // a failed run gives the caller its host buffers back.
    Buffers host(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i] && args[i]->on_host()) {
        host[i] = args[i];
        args[i] = upload(device, *host[i]);
      }
    }
    try {
      return execute_on(device, program(), plan_, args, &epilogues_);
    } catch (...) {
      for (size_t i = 0; i < args.size(); ++i) {
        if (host[i]) args[i] = std::move(host[i]);
      }
      throw;
    }
  }
  int64_t peak_bytes() const override { return plan_.peak_bytes; }
  int64_t total_bytes() const override { return plan_.total_bytes; }

 private:
  BufferPlan plan_;
  EpiloguePlan epilogues_;  // jit's dot + bias + relu / gelu chains, each one cuBLASLt GEMM
};

class CudaBackend : public Backend {
 public:
  std::string_view name() const override { return "cuda"; }
  std::shared_ptr<const Executable> compile(std::shared_ptr<const Program> p,
                                            std::vector<bool> donated) const override {
    return std::make_shared<const CudaExecutable>(std::move(p), std::move(donated));
  }
  std::shared_ptr<Buffer> allocate(size_t bytes, int device = 0) const override {
    return allocate_buffer(device, bytes);
  }
  // Waits for the device's compute stream: the bytes are the values the enqueued work wrote.
  void copy_to_host(const Buffer& src, void* dst, size_t bytes) const override {
    if (bytes == 0) return;
    DeviceGuard guard(src.device());
    copy_to_host_sync(src.device(), dst, src.data(), bytes, compute_stream(src.device()));
  }
  std::shared_ptr<Buffer> copy_from_host(const void* src, size_t bytes,
                                         int device = 0) const override {
    std::shared_ptr<Buffer> b = allocate_buffer(device, bytes, "device_put");
    if (bytes) copy_to_device_sync(device, b->data(), src, bytes, compute_stream(device));
    return b;
  }
  int device_count() const override { return cuda::device_count(); }
};

const bool registered = register_backend(std::make_unique<CudaBackend>());

}  // namespace
}  // namespace graft::cuda
