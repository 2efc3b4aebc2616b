// NVRTC compilation with a process-wide cache (see the header). The cache maps source text and
// architecture to a slot whose code is made under std::call_once: two threads asking for one
// kernel compile it once, and threads asking for different kernels compile concurrently (the
// map's lock is not held while NVRTC runs).
#include "core/backend/cuda/fusion/nvrtc_compile.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/backend/cuda/runtime/check.h"
#include "core/error.h"

namespace graft::cuda {

void check(nvrtcResult status, std::string_view call) {
  if (status == NVRTC_SUCCESS) return;
  fail("NVRTC", call, static_cast<long>(status), nvrtcGetErrorString(status));
}

namespace fusion {
namespace {

// An NVRTC program, destroyed with its scope.
class Program {
 public:
  explicit Program(const std::string& source) {
    check(
        nvrtcCreateProgram(&p_, source.c_str(), "graft_fused_elementwise.cu", 0, nullptr, nullptr),
        "nvrtcCreateProgram");
  }
  ~Program() {
    if (p_ != nullptr) nvrtcDestroyProgram(&p_);
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram get() const { return p_; }

  std::string log() const {
    size_t size = 0;
    if (nvrtcGetProgramLogSize(p_, &size) != NVRTC_SUCCESS || size == 0) return "";
    std::string text(size, '\0');
    if (nvrtcGetProgramLog(p_, text.data()) != NVRTC_SUCCESS) return "";
    while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) text.pop_back();
    return text;
  }

 private:
  nvrtcProgram p_ = nullptr;
};

// The architectures this NVRTC compiles for, ascending.
const std::vector<int>& supported_archs() {
  static const std::vector<int> archs = [] {
    int n = 0;
    check(nvrtcGetNumSupportedArchs(&n), "nvrtcGetNumSupportedArchs");
    std::vector<int> a(static_cast<size_t>(n));
    if (n > 0) check(nvrtcGetSupportedArchs(a.data()), "nvrtcGetSupportedArchs");
    std::sort(a.begin(), a.end());
    return a;
  }();
  return archs;
}

std::shared_ptr<const DeviceCode> compile_now(const std::string& source, int arch) {
  const std::vector<int>& archs = supported_archs();
  auto code = std::make_shared<DeviceCode>();
  code->cubin = std::find(archs.begin(), archs.end(), arch) != archs.end();
  code->arch = arch;
  if (!code->cubin) {  // PTX for the newest known architecture below the device's
    auto below = std::upper_bound(archs.begin(), archs.end(), arch);
    if (below == archs.begin()) {
      fail("NVRTC", "compile", NVRTC_ERROR_INVALID_OPTION,
           "no architecture at or below compute capability " + std::to_string(arch));
    }
    code->arch = *(below - 1);
  }
  const std::string target =
      std::string(code->cubin ? "--gpu-architecture=sm_" : "--gpu-architecture=compute_") +
      std::to_string(code->arch);
  const char* options[] = {target.c_str(),    "-default-device",  "--std=c++17", "--fmad=false",
                           "--prec-div=true", "--prec-sqrt=true", "--ftz=false"};
  Program program(source);
  const nvrtcResult status =
      nvrtcCompileProgram(program.get(), static_cast<int>(std::size(options)), options);
  if (status != NVRTC_SUCCESS) {
    fail("NVRTC", "nvrtcCompileProgram(" + target + ")", status,
         std::string(nvrtcGetErrorString(status)) + "\n" + program.log());
  }
  size_t size = 0;
  if (code->cubin) {
    check(nvrtcGetCUBINSize(program.get(), &size), "nvrtcGetCUBINSize");
    code->image.resize(size);
    check(nvrtcGetCUBIN(program.get(), code->image.data()), "nvrtcGetCUBIN");
  } else {
    check(nvrtcGetPTXSize(program.get(), &size), "nvrtcGetPTXSize");  // counts the NUL
    code->image.resize(size);
    check(nvrtcGetPTX(program.get(), code->image.data()), "nvrtcGetPTX");
  }
  return code;
}

struct Slot {
  std::once_flag once;
  std::shared_ptr<const DeviceCode> code;
};

struct Cache {
  std::mutex mu;
  std::map<std::pair<std::string, int>, std::shared_ptr<Slot>> slots;
  std::atomic<size_t> compiled{0};
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: kernels may compile until exit
  return *c;
}

}  // namespace

std::shared_ptr<const DeviceCode> compile(const std::string& source, int arch) {
  Cache& c = cache();
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    std::shared_ptr<Slot>& s = c.slots[{source, arch}];
    if (s == nullptr) s = std::make_shared<Slot>();
    slot = s;
  }
  // A throwing compile leaves the flag unset: the next call tries (and reports) again.
  std::call_once(slot->once, [&] {
    slot->code = compile_now(source, arch);
    c.compiled.fetch_add(1, std::memory_order_relaxed);
  });
  return slot->code;
}

size_t compiled_count() { return cache().compiled.load(std::memory_order_relaxed); }

}  // namespace fusion
}  // namespace graft::cuda
