#include "core/device/runtime.h"

#include <atomic>

#include "core/error.h"

namespace graft {

namespace {
std::atomic<const Runtime*> installed{nullptr};
}  // namespace

bool install_runtime(const Runtime& r) {
  // Lives as long as the process: static objects may evaluate arrays while being destroyed.
  installed.store(new Runtime(r), std::memory_order_release);
  return true;
}

const Runtime& runtime(const char* op) {
  const Runtime* r = installed.load(std::memory_order_acquire);
  if (r == nullptr) {
    fail(op, "graft's runtime is not linked into this program: depend on //core (it links "
             "//core/backend)");
  }
  return *r;
}

void eval(const std::vector<Array>& arrays) { runtime("eval").eval(arrays); }

}  // namespace graft
