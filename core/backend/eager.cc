#include "core/backend/eager.h"

#include <absl/container/inlined_vector.h>

#include <memory>
#include <shared_mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/backend/device_shards.h"
#include "core/ir/program.h"
#include "core/ir/primitive.h"

namespace graft {
namespace {

// Equal keys: same primitive (same_params) on the same input avals.
struct Entry {
  std::shared_ptr<const Executable> exe;
  std::vector<Aval> in;
  const Backend* backend;
};

size_t key_hash(const Backend& backend, const Primitive& p, const std::vector<Array>& inputs) {
  size_t h = static_cast<size_t>(p.id()) * 1000003u + reinterpret_cast<uintptr_t>(&backend);
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  for (const Array& a : inputs) {
    const Aval& av = a.aval();
    mix(static_cast<size_t>(av.dtype) * 2 + av.weak);
    for (int64_t d : av.shape) mix(static_cast<size_t>(d));
  }
  for (const SubProgram& sub : p.sub_programs()) mix(hash_program(*sub.program));
  return h;
}

bool matches(const Entry& e, const Backend& backend, const Primitive& p,
             const std::vector<Array>& inputs) {
  if (e.backend != &backend) return false;
  const Primitive& q = *e.exe->program().instrs[0].prim;
  if (&q != &p && (q.id() != p.id() || !q.same_params(p))) return false;
  if (e.in.size() != inputs.size()) return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!(e.in[i] == inputs[i].aval())) return false;
  }
  return true;
}

// Bounded: past this many entries new (primitive, avals) pairs compile per call rather than
// growing the cache. Entries are never removed, so a reader may keep a plain pointer to one
// without holding the lock (the per-thread front cache below relies on that).
constexpr size_t kMaxEntries = 4096;

struct Cache {
  std::shared_mutex mu;
  std::unordered_multimap<size_t, Entry> map;  // node-based: entries never move
};
Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: static arrays may evaluate at exit
  return *c;
}

std::shared_ptr<const Executable> compile_one(const Backend& backend, const Node& n) {
  auto p = std::make_shared<Program>();
  Instr instr;
  instr.prim = n.primitive;
  for (const Array& a : n.inputs) {
    instr.in.push_back(static_cast<int>(p->avals.size()));
    p->inputs.push_back(static_cast<int>(p->avals.size()));
    p->avals.push_back(a.aval());
  }
  for (const Aval& a : n.avals) {
    instr.out.push_back(static_cast<int>(p->avals.size()));
    p->outputs.push_back(static_cast<int>(p->avals.size()));
    p->avals.push_back(a);
  }
  p->instrs.push_back(std::move(instr));
  return backend.compile(std::move(p));
}

// Primitives holding bodies keep their own per-body plans (ControlPrimitive::backend_data)
// and may hold large constants, and effects (debug_print) may hold callbacks: they are
// compiled per node, not kept here. fused_elementwise and fused_reduce are the exception: their
// bodies have no constants and no effects, same_params compares them structurally, and a kept
// executable keeps its primitive's compiled loop, so a group applied again eagerly
// (fuse_elementwise_call on values) reuses both.
bool cacheable(const Primitive& p) {
  if (p.has_side_effects()) return false;
  return p.sub_programs().empty() || p.id() == PrimitiveId::kFusedElementwise ||
         p.id() == PrimitiveId::kFusedReduce;
}

// A direct-mapped cache per thread in front of the shared one: the common case (the same
// few ops on the same shapes, over and over) takes no lock and no reference count. Plain
// pointers to immortal entries, so it needs no destructor at thread exit.
struct FrontSlot {
  size_t hash;
  const Entry* entry;
};
constexpr size_t kFrontSlots = 256;
thread_local FrontSlot front[kFrontSlots];

const Entry* shared_lookup(const Backend& backend, const Node& n, size_t h) {
  const Primitive& p = *n.primitive;
  Cache& c = cache();
  {
    std::shared_lock<std::shared_mutex> lock(c.mu);
    auto [b, e] = c.map.equal_range(h);
    for (auto it = b; it != e; ++it) {
      if (matches(it->second, backend, p, n.inputs)) return &it->second;
    }
    if (c.map.size() >= kMaxEntries) return nullptr;
  }
  Entry entry{compile_one(backend, n), {}, &backend};
  for (const Array& a : n.inputs) entry.in.push_back(a.aval());
  std::unique_lock<std::shared_mutex> lock(c.mu);
  if (c.map.size() >= kMaxEntries) return nullptr;
  return &c.map.emplace(h, std::move(entry))->second;
}

// The cached executable for `n`, or null when `n` must be compiled for itself.
const Executable* cached_executable(const Backend& backend, const Node& n) {
  if (!cacheable(*n.primitive)) return nullptr;
  const size_t h = key_hash(backend, *n.primitive, n.inputs);
  FrontSlot& slot = front[h % kFrontSlots];
  if (slot.entry != nullptr && slot.hash == h &&
      matches(*slot.entry, backend, *n.primitive, n.inputs)) {
    return slot.entry->exe.get();
  }
  const Entry* e = shared_lookup(backend, n, h);
  if (e == nullptr) return nullptr;
  slot = {h, e};
  return e->exe.get();
}

}  // namespace

void run_eager(const Backend& host, Node& n) {
  absl::InlinedVector<std::shared_ptr<Buffer>*, 6> args;
  for (const Array& in : n.inputs) {
    Node& producer = *in.node();
    if (producer.donated()) fail_donated();  // a pending consumer built before the donation
    args.push_back(&producer.buffers[in.output_index()]);
  }
  // An op over arrays in a GPU's memory runs on the device backend.
  const Backend& backend =
      device_backend() == nullptr ? host : backend_for(args.data(), args.size());
  // An operand sharded over devices is computed on gathered (device_shards.h).
  Buffers gathered;
  if (device_backend() != nullptr) {
    const int device = placement_device(args.data(), args.size());
    gathered.reserve(args.size());  // args point into it: it must not reallocate
    for (auto*& a : args) {
      if (*a == nullptr || device_shards(**a) == nullptr) continue;
      gathered.push_back(gather_shards(*device_shards(**a), device));
      a = &gathered.back();
    }
  }
  Buffers outputs;
  if (const Executable* exe = cached_executable(backend, n)) {
    exe->run_reading(args.data(), outputs);
  } else {
    compile_one(backend, n)->run_reading(args.data(), outputs);
  }
  n.set_buffers(std::move(outputs));
}

size_t eager_cache_size() {
  Cache& c = cache();
  std::shared_lock<std::shared_mutex> lock(c.mu);
  return c.map.size();
}

}  // namespace graft
