#include "core/backend/eager.h"

#include <memory>
#include <shared_mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/ir/program.h"
#include "core/primitive.h"

namespace graft {
namespace {

// Equal keys: same primitive (same_params) on the same input avals.
struct Entry {
  std::shared_ptr<const Executable> exe;
  std::vector<Aval> in;
};

size_t key_hash(const Primitive& p, const std::vector<Array>& inputs) {
  size_t h = static_cast<size_t>(p.id()) * 1000003u;
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  for (const Array& a : inputs) {
    const Aval& av = a.aval();
    mix(static_cast<size_t>(av.dtype) * 2 + av.weak);
    for (int64_t d : av.shape) mix(static_cast<size_t>(d));
  }
  for (const SubProgram& sub : p.sub_programs()) mix(hash_program(*sub.program));
  return h;
}

bool matches(const Entry& e, const Primitive& p, const std::vector<Array>& inputs) {
  const Primitive& q = *e.exe->program().instrs[0].prim;
  if (&q != &p && (q.id() != p.id() || !q.same_params(p))) return false;
  if (e.in.size() != inputs.size()) return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!(e.in[i] == inputs[i].aval())) return false;
  }
  return true;
}

// Bounded: a program that keeps making new shapes clears it now and then rather than growing.
constexpr size_t kMaxEntries = 4096;

struct Cache {
  std::shared_mutex mu;
  std::unordered_multimap<size_t, Entry> map;
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
// compiled per node, not kept here. fused_elementwise is the exception: its body has no
// constants and no effects, same_params compares it structurally, and a kept executable
// keeps its primitive's compiled loop, so a group applied again eagerly
// (fuse_elementwise_call on values) reuses both.
bool cacheable(const Primitive& p) {
  if (p.has_side_effects()) return false;
  return p.sub_programs().empty() || p.id() == PrimitiveId::kFusedElementwise;
}

std::shared_ptr<const Executable> executable_for(const Backend& backend, const Node& n) {
  const Primitive& p = *n.primitive;
  if (!cacheable(p)) return compile_one(backend, n);
  Cache& c = cache();
  const size_t h = key_hash(p, n.inputs);
  {
    std::shared_lock<std::shared_mutex> lock(c.mu);
    auto [b, e] = c.map.equal_range(h);
    for (auto it = b; it != e; ++it) {
      if (matches(it->second, p, n.inputs)) return it->second.exe;
    }
  }
  Entry entry{compile_one(backend, n), {}};
  for (const Array& a : n.inputs) entry.in.push_back(a.aval());
  std::unique_lock<std::shared_mutex> lock(c.mu);
  if (c.map.size() >= kMaxEntries) c.map.clear();
  auto exe = entry.exe;
  c.map.emplace(h, std::move(entry));
  return exe;
}

}  // namespace

void run_eager(const Backend& backend, Node& n) {
  Buffers args;
  args.reserve(n.inputs.size());
  for (const Array& in : n.inputs) {
    if (in.node()->donated()) fail_donated();  // a pending consumer built before the donation
    args.push_back(in.node()->buffers[in.output_index()]);
  }
  std::shared_ptr<const Executable> exe = executable_for(backend, n);
  n.set_buffers(exe->run_buffers(args));
}

size_t eager_cache_size() {
  Cache& c = cache();
  std::shared_lock<std::shared_mutex> lock(c.mu);
  return c.map.size();
}

}  // namespace graft
