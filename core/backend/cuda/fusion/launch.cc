// Loading and launching fused_elementwise kernels (see the header).
#include "core/backend/cuda/fusion/launch.h"

#include <absl/container/inlined_vector.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "core/backend/cuda/fusion/cuda_source.h"
#include "core/backend/cuda/fusion/nvrtc_compile.h"
#include "core/backend/cuda/runtime/check.h"

namespace graft::cuda::fusion {
namespace {

// A loaded library, unloaded with its scope (here: only when getting its kernel fails, since
// loaded kernels are kept for the process).
class Library {
 public:
  explicit Library(const DeviceCode& code) {
    check(cudaLibraryLoadData(&lib_, code.image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
          "cudaLibraryLoadData(fused_elementwise)");
  }
  ~Library() {
    if (lib_ != nullptr) cudaLibraryUnload(lib_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  cudaKernel_t kernel(const char* name) const {
    cudaKernel_t k = nullptr;
    check(cudaLibraryGetKernel(&k, lib_, name), "cudaLibraryGetKernel(fused_elementwise)");
    return k;
  }

 private:
  cudaLibrary_t lib_ = nullptr;
};

struct Loaded {
  std::unique_ptr<Library> library;
  LoadedKernel kernel;
};

struct Slot {
  std::once_flag once;
  Loaded loaded;
};

// Per-device facts, asked once.
struct DeviceFacts {
  int arch = 0;
  int sms = 0;
};

const DeviceFacts& facts(int device) {
  static std::mutex mu;
  static auto* known = new std::map<int, DeviceFacts>;  // never destroyed (used until exit)
  std::lock_guard<std::mutex> lock(mu);
  auto it = known->find(device);
  if (it != known->end()) return it->second;
  int major = 0, minor = 0, sms = 0;
  check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
        "cudaDeviceGetAttribute(compute capability)");
  check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device),
        "cudaDeviceGetAttribute(compute capability)");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
        "cudaDeviceGetAttribute(multiprocessors)");
  return known->emplace(device, DeviceFacts{major * 10 + minor, std::max(sms, 1)}).first->second;
}

}  // namespace

int device_arch(int device) { return facts(device).arch; }

const LoadedKernel& kernel_for(const GroupSpec& g, int device) {
  const int arch = device_arch(device);
  static std::mutex mu;
  static auto* slots = new std::map<std::pair<std::string, int>, std::shared_ptr<Slot>>;
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard<std::mutex> lock(mu);
    std::shared_ptr<Slot>& s = (*slots)[{structure_key(g), arch}];
    if (s == nullptr) s = std::make_shared<Slot>();
    slot = s;
  }
  // Compiling and loading happen outside the map's lock; a failure leaves the slot to retry.
  std::call_once(slot->once, [&] {
    std::shared_ptr<const DeviceCode> code = compile(cuda_source(g), arch);
    auto library = std::make_unique<Library>(*code);
    slot->loaded.kernel.kernel = library->kernel(kKernelName);
    slot->loaded.kernel.num_inputs = static_cast<int>(g.inputs.size());
    slot->loaded.kernel.num_outputs = static_cast<int>(g.outputs.size());
    slot->loaded.kernel.arch = code->arch;
    slot->loaded.library = std::move(library);
  });
  return slot->loaded.kernel;
}

const LoadedKernel& kernel_for(const FusedElementwise& f, int device) {
  return kernel_for(spec_of(f), device);
}

void launch(const LoadedKernel& k, int64_t n, const void* const* ins, void* const* outs, int device,
            cudaStream_t stream) {
  if (n <= 0) return;
  constexpr int64_t kThreads = 256;
  // Enough blocks to fill the device a few times over; the loop strides over the rest.
  const int64_t blocks = std::min<int64_t>((n + kThreads - 1) / kThreads, facts(device).sms * 32);
  long long count = n;
  absl::InlinedVector<const void*, 16> ptrs;
  for (int i = 0; i < k.num_inputs; ++i) ptrs.push_back(ins[i]);
  for (int o = 0; o < k.num_outputs; ++o) ptrs.push_back(outs[o]);
  absl::InlinedVector<void*, 17> args;  // the address of each parameter's value
  args.push_back(&count);
  for (const void*& p : ptrs) args.push_back(&p);
  check(
      cudaLaunchKernel(reinterpret_cast<const void*>(k.kernel), dim3(static_cast<unsigned>(blocks)),
                       dim3(kThreads), args.data(), 0, stream),
      "cudaLaunchKernel(fused_elementwise)");
}

}  // namespace graft::cuda::fusion
