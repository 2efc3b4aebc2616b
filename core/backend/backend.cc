#include "core/backend/backend.h"

#include <algorithm>
#include <atomic>

#include "core/backend/device_shards.h"
#include "core/error.h"
#include "core/backend/eval.h"
#include "core/device/runtime.h"

namespace graft {
namespace {

// Set during static initialization (before main and before any thread), read after.
std::atomic<Backend*>& slot() {
  static std::atomic<Backend*> b{nullptr};
  return b;
}
std::atomic<Backend*>& device_slot() {
  static std::atomic<Backend*> b{nullptr};
  return b;
}

}  // namespace

Executable::Executable(std::shared_ptr<const Program> program, std::vector<bool> donated)
    : program_(std::move(program)), donated_(std::move(donated)) {
  const Program& p = *program_;
  for (int v : p.outputs) {
    int kept = -1;
    for (size_t j = 0; j < p.inputs.size() && kept < 0; ++j) {
      if (p.inputs[j] == v && (j >= donated_.size() || !donated_[j])) kept = static_cast<int>(j);
    }
    kept_argument_.push_back(kept);
  }
}

void Executable::run_reading(std::shared_ptr<Buffer>* const* args, Buffers& outputs) const {
  Buffers copies;
  copies.reserve(program().inputs.size());
  for (size_t i = 0; i < program().inputs.size(); ++i) copies.push_back(*args[i]);
  outputs = run_buffers(copies);
}

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
  // Arguments sharded over devices run gathered (device_shards.h); those copies are the
  // run's own, so the sharded arguments themselves are neither consumed nor written.
  std::vector<bool> gathered(args.size());
  for (size_t j = 0; j < args.size(); ++j) gathered[j] = device_shards(*buffers[j]) != nullptr;
  if (std::find(gathered.begin(), gathered.end(), true) != gathered.end()) {
    std::vector<std::shared_ptr<Buffer>*> at;
    for (auto& b : buffers) at.push_back(&b);
    gather_sharded_args(buffers, placement_device(at.data(), at.size()));
  }
  // A donated argument's buffer moves into the run: the table then holds its only reference
  // (unless the caller kept one, e.g. through buffer()), so the program may write into it.
  // One output of a multi-output node (an eager scan's carry, top_k's values) is not taken:
  // its siblings would go with it. It keeps its value and is only read.
  std::vector<bool> dropped(args.size());
  for (size_t j = 0; j < args.size() && j < give.size(); ++j) {
    if (give[j] && !gathered[j] && args[j].node()->buffers.size() == 1) {
      args[j].node()->drop_buffers();
      dropped[j] = true;
    }
  }
  Buffers outs;
  try {
    outs = run_buffers(buffers);
  } catch (...) {
    // Nothing is lost to a failed run: a donated argument it did not write gets its buffer
    // back.
    for (size_t j = 0; j < args.size(); ++j) {
      if (dropped[j] && buffers[j]) args[j].node()->set_buffers({std::move(buffers[j])});
    }
    throw;
  }
  std::vector<Array> result;
  result.reserve(outs.size());
  for (size_t k = 0; k < outs.size(); ++k) {
    if (kept_argument_[k] >= 0) {
      result.push_back(args[kept_argument_[k]]);
      continue;
    }
    const Aval& a = p.avals[p.outputs[k]];
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
  std::atomic<Backend*>& to = b->name() == "cpu" ? slot() : device_slot();
  to.store(b.release(), std::memory_order_release);
  return true;
}

const Backend* device_backend() { return device_slot().load(std::memory_order_acquire); }

const Backend& backend_for(const std::shared_ptr<Buffer>* const* buffers, size_t n) {
  if (placement_device(buffers, n) < 0) return default_backend();
  const Backend* d = device_backend();
  if (d == nullptr) fail("eval", "an operand lives in device memory but no device backend is linked");
  return *d;
}

std::shared_ptr<const Buffer> to_host(const std::shared_ptr<Buffer>& b) {
  if (b->on_host()) return b;
  if (const DeviceShards* s = device_shards(*b)) return gather_shards(*s, -1);
  const Backend* d = device_backend();
  if (d == nullptr) fail("eval", "a buffer lives in device memory but no device backend is linked");
  auto host = Buffer::make(b->bytes());
  d->copy_to_host(*b, host->data(), b->bytes());
  return host;
}

namespace {
int gpu_count() {
  const Backend* d = device_backend();
  return d == nullptr ? 0 : d->device_count();
}
// The base types reach the evaluator and the backends through core/runtime.h.
const bool runtime_installed = install_runtime(Runtime{&run_pending, &to_host, &gpu_count});
}  // namespace

}  // namespace graft
