#include "core/backend/backend.h"

#include <atomic>

#include "core/error.h"
#include "core/eval.h"

namespace graft {
namespace {

// Set during static initialization (before main and before any thread), read after.
std::atomic<Backend*>& slot() {
  static std::atomic<Backend*> b{nullptr};
  return b;
}

}  // namespace

std::vector<Array> Executable::run(const std::vector<Array>& args) const {
  const Program& p = program();
  const std::vector<bool>& give = donated();
  if (args.size() != p.inputs.size()) {
    fail("jit", "program takes ", p.inputs.size(), " arrays, got ", args.size());
  }
  for (const Array& a : args) {
    if (!a.valid()) fail("jit", "called with an empty Array handle");
    if (a.node()->donated()) fail_donated();
  }
  eval(args);
  Buffers buffers;
  buffers.reserve(args.size());
  for (const Array& a : args) buffers.push_back(a.buffer());
  // A donated argument's buffer moves into the run: the table then holds its only reference
  // (unless the caller kept one, e.g. through buffer()), so the program may write into it.
  for (size_t j = 0; j < args.size() && j < give.size(); ++j) {
    if (give[j]) args[j].node()->drop_buffers();
  }
  Buffers outs = run_buffers(std::move(buffers));
  std::vector<Array> result;
  result.reserve(outs.size());
  for (size_t k = 0; k < outs.size(); ++k) {
    const int v = p.outputs[k];
    size_t j = 0;
    while (j < p.inputs.size() && p.inputs[j] != v) ++j;
    if (j < p.inputs.size() && (j >= give.size() || !give[j])) {
      result.push_back(args[j]);
      continue;
    }
    const Aval& a = p.avals[v];
    result.push_back(Array::from_buffer(std::move(outs[k]), a.shape, a.dtype, a.weak));
  }
  return result;
}

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
