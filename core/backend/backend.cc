#include "core/backend/backend.h"

#include <atomic>

#include "core/error.h"

namespace graft {
namespace {

// Set during static initialization (before main and before any thread), read after.
std::atomic<Backend*>& slot() {
  static std::atomic<Backend*> b{nullptr};
  return b;
}

}  // namespace

const Backend& default_backend() {
  Backend* b = slot().load(std::memory_order_acquire);
  if (b == nullptr) {
    fail("eval", "no backend is linked into this program: add //core/backend/cpu to its deps");
  }
  return *b;
}

bool register_backend(std::unique_ptr<Backend> b) {
  // Registered backends live as long as the process (static objects may evaluate arrays
  // while being destroyed).
  slot().store(b.release(), std::memory_order_release);
  return true;
}

}  // namespace graft
