#include "transforms/jit.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/ir/effects.h"
#include "core/primitives/shard_map.h"
#include "transforms/passes/passes.h"

namespace graft::detail {

namespace {

void mix(size_t& h, size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); }

void hash_def(size_t& h, const TreeDef& d) {
  mix(h, std::hash<std::string>()(d.kind));
  for (const std::string& k : d.keys) mix(h, std::hash<std::string>()(k));
  mix(h, d.children.size());
  for (const TreeDef& c : d.children) hash_def(h, c);
}

// What differs between the key of this call and a cached one, in words.
std::string key_diff(const JitKey& now, const JitKey& then) {
  if (now.types.size() != then.types.size()) {
    return absl::StrCat("the number of arguments changed: ", then.types.size(), " -> ",
                        now.types.size());
  }
  std::vector<std::string> why;
  for (size_t k = 0; k < now.types.size(); ++k) {
    if (now.types[k] != then.types[k]) {
      why.push_back(absl::StrCat("arg ", k, ": C++ type changed"));
    } else if (now.defs[k] != then.defs[k]) {
      why.push_back(
          absl::StrCat("arg ", k, ": structure ", then.defs[k].str(), " -> ", now.defs[k].str()));
    } else if (now.statics[k] != then.statics[k]) {
      why.push_back(absl::StrCat("static arg ", k, ": ", then.statics[k].text(), " -> ",
                                 now.statics[k].text()));
    }
  }
  if (!why.empty() || now.avals.size() != then.avals.size()) return absl::StrJoin(why, "; ");
  for (size_t i = 0; i < now.avals.size(); ++i) {
    const Aval& a = then.avals[i];
    const Aval& b = now.avals[i];
    std::string where = absl::StrCat("leaf ", i, " (arg ", now.leaf_arg[i], "): ");
    if (a.shape != b.shape) {
      why.push_back(where + "shape " + shape_str(a.shape) + " -> " + shape_str(b.shape));
    }
    if (a.dtype != b.dtype) {
      why.push_back(where + "dtype " + dtype_name(a.dtype) + " -> " + dtype_name(b.dtype));
    }
    if (a.weak != b.weak) {
      why.push_back(where +
                    (a.weak ? "weakly typed -> strongly typed" : "strongly typed -> weakly typed"));
    }
    auto text = [](const std::shared_ptr<const NamedSharding>& s) {
      return s == nullptr ? std::string("unsharded") : s->str();
    };
    if (i < now.shardings.size() && i < then.shardings.size() &&
        text(now.shardings[i]) != text(then.shardings[i])) {
      why.push_back(where + "sharding " + text(then.shardings[i]) + " -> " +
                    text(now.shardings[i]));
    }
  }
  return absl::StrJoin(why, "; ");
}

int differences(const JitKey& a, const JitKey& b) {
  if (a.types != b.types || a.defs != b.defs) return 1 << 20;
  int n = 0;
  for (size_t k = 0; k < a.statics.size(); ++k) n += a.statics[k] != b.statics[k] ? 1000 : 0;
  for (size_t i = 0; i < a.avals.size(); ++i) n += a.avals[i] == b.avals[i] ? 0 : 1;
  if (!a.same_shardings(b)) ++n;
  return n;
}

}  // namespace

void JitKey::finish() {
  size_t h = types.size();
  for (const std::type_index& t : types) mix(h, t.hash_code());
  for (const TreeDef& d : defs) hash_def(h, d);
  for (const StaticArg& s : statics) mix(h, s.hash());
  for (const Aval& a : avals) {
    mix(h, static_cast<size_t>(a.dtype) * 2 + a.weak);
    mix(h, a.shape.size());
    for (int64_t d : a.shape) mix(h, static_cast<size_t>(d));
  }
  for (const auto& s : shardings) mix(h, s == nullptr ? 0 : std::hash<std::string>()(s->str()));
  hash = h;
}

bool JitKey::same_shardings(const JitKey& o) const {
  if (shardings.size() != o.shardings.size()) return false;
  for (size_t i = 0; i < shardings.size(); ++i) {
    const auto &a = shardings[i], &b = o.shardings[i];
    if (a == b) continue;
    if (a == nullptr || b == nullptr || *a != *b) return false;
  }
  return true;
}

JitCache::JitCache(JitOptions options) : options_(std::move(options)) {
  const char* env = std::getenv("GRAFT_JIT_EXPLAIN");
  log_ = options_.explain_misses || (env != nullptr && std::string(env) == "1");
  if (options_.cache_size == 0) fail("jit", "cache_size must be at least 1");
}

bool JitCache::is_static(size_t arg, size_t num_args) const {
  for (int s : options_.static_argnums) {
    int64_t a = s < 0 ? s + static_cast<int64_t>(num_args) : s;
    if (a < 0 || a >= static_cast<int64_t>(num_args)) {
      fail("jit", "static_argnums entry ", s, " is out of range for ", num_args, " arguments");
    }
    if (a == static_cast<int64_t>(arg)) return true;
  }
  return false;
}

bool JitCache::is_donated(size_t arg, size_t num_args) const {
  for (int s : options_.donate_argnums) {
    int64_t a = s < 0 ? s + static_cast<int64_t>(num_args) : s;
    if (a < 0 || a >= static_cast<int64_t>(num_args)) {
      fail("jit", "donate_argnums entry ", s, " is out of range for ", num_args, " arguments");
    }
    if (a == static_cast<int64_t>(arg)) return true;
  }
  return false;
}

std::shared_ptr<const JitEntry> JitCache::lookup(const JitKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto [lo, hi] = index_.equal_range(key.hash);
  for (auto it = lo; it != hi; ++it) {
    if (it->second->first == key) {
      lru_.splice(lru_.begin(), lru_, it->second);
      ++stats_.hits;
      return lru_.front().second;
    }
  }
  ++stats_.misses;
  last_miss_ = explain(key);
  if (log_) std::cerr << "[jit] cache miss: " << last_miss_ << "\n";
  return nullptr;
}

std::string JitCache::explain(const JitKey& key) const {
  if (lru_.empty()) {
    return stats_.evictions == 0 ? "first call: nothing compiled yet"
                                 : "nothing cached (all entries were evicted)";
  }
  const JitKey* closest = nullptr;
  int best = 0;
  for (const auto& [k, e] : lru_) {  // most recent first: ties go to the latest
    int d = differences(key, k);
    if (closest == nullptr || d < best) {
      closest = &k;
      best = d;
    }
  }
  std::string diff = key_diff(key, *closest);
  if (diff.empty()) diff = "no cached entry matches";
  return absl::StrCat(diff, " (", lru_.size(), " entries cached, closest shown)");
}

void JitCache::insert(const JitKey& key, std::shared_ptr<const JitEntry> entry,
                      double compile_seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.compile_seconds += compile_seconds;
  auto [lo, hi] = index_.equal_range(key.hash);
  for (auto it = lo; it != hi; ++it) {
    if (it->second->first == key) return;  // another thread compiled it meanwhile
  }
  lru_.emplace_front(key, std::move(entry));
  index_.emplace(key.hash, lru_.begin());
  while (lru_.size() > options_.cache_size) {
    auto last = std::prev(lru_.end());
    auto [a, b] = index_.equal_range(last->first.hash);
    for (auto it = a; it != b; ++it) {
      if (it->second == last) {
        index_.erase(it);
        break;
      }
    }
    lru_.pop_back();
    ++stats_.evictions;
  }
}

JitStats JitCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

std::string JitCache::explain_miss() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_miss_;
}

size_t JitCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}

void JitCache::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  lru_.clear();
  index_.clear();
}

std::shared_ptr<JitEntry> compile(const FlatFn& fn, const std::vector<Aval>& avals,
                                  std::vector<bool> donated,
                                  const std::vector<std::shared_ptr<const NamedSharding>>& in_shardings,
                                  const std::vector<std::optional<NamedSharding>>& out_shardings) {
  std::vector<Array> effects;
  std::vector<Array>* prev = set_effect_collector(&effects);
  Graph g;
  try {
    g = trace_avals(fn, avals);
  } catch (...) {
    set_effect_collector(prev);
    throw;
  }
  set_effect_collector(prev);
  std::optional<Program> p = lower(g, effects);
  if (!p) return nullptr;
  auto entry = std::make_shared<JitEntry>();
  Program q = partition_for_jit(*p, in_shardings, out_shardings, &entry->out_shardings);
  entry->executable = default_backend().compile(std::make_shared<const Program>(optimize(q)),
                                                std::move(donated));
  return entry;
}

MemoryAnalysis memory_of(const JitEntry& e) {
  MemoryAnalysis m{e.executable->peak_bytes(), e.executable->total_bytes()};
  const Program& p = e.executable->program();
  if (!e.out_shardings.empty() && p.instrs.size() == 1 &&
      p.instrs[0].prim->id() == PrimitiveId::kShardMap) {
    const auto& body = static_cast<const ShardMap&>(*p.instrs[0].prim).bodies()[0];
    auto per_device = default_backend().compile(body, std::vector<bool>(body->inputs.size()));
    m.per_device_peak_bytes = per_device->peak_bytes();
    for (const Aval& a : body->input_avals()) {
      m.per_device_peak_bytes += numel(a.shape) * dtype_size(a.dtype);
    }
    return m;
  }
  for (const Instr& instr : p.instrs) {
    if (instr.prim->id() != PrimitiveId::kShardMap) continue;
    const auto& sm = static_cast<const ShardMap&>(*instr.prim);
    const auto& body = sm.bodies()[0];
    auto per_device = default_backend().compile(body, std::vector<bool>(body->inputs.size()));
    int64_t bytes = per_device->peak_bytes();
    const std::vector<Aval> in = body->input_avals();
    for (size_t i = 0; i < in.size(); ++i) {
      bool split = false;
      for (const auto& axes : sm.in_specs()[i]) split = split || !axes.empty();
      if (split) bytes += numel(in[i].shape) * dtype_size(in[i].dtype);
    }
    m.mapped_body_peak_bytes = std::max(m.mapped_body_peak_bytes, bytes);
  }
  return m;
}

// The executable for these arguments: the device backend's when one lives in a GPU's memory.
const Executable& executable_for(const JitEntry& e, const std::vector<Array>& leaves) {
  const Backend* device = device_backend();
  if (device == nullptr) return *e.executable;
  eval(leaves);  // where a pending argument lives is known once it is computed
  // A program partitioned over a mesh of GPUs runs there even when its arguments are on the
  // host (their in_shardings say where they go).
  bool on_device = !e.out_shardings.empty() && e.out_shardings[0]->mesh().platform() != "cpu";
  for (const Array& a : leaves) {
    if (a.valid() && a.node()->evaluated()) {
      for (const auto& b : a.node()->buffers) on_device = on_device || (b && !b->on_host());
    }
  }
  if (!on_device) return *e.executable;
  std::call_once(e.on_device_once, [&] {
    const Executable& x = *e.executable;
    e.on_device = device->compile(x.program_ptr(), x.donated());
  });
  return *e.on_device;
}

std::vector<Array> run(const JitEntry& e, const std::vector<Array>& leaves) {
  std::vector<Array> outs = executable_for(e, leaves).run(leaves);
  for (size_t o = 0; o < outs.size() && o < e.out_shardings.size(); ++o) {
    const NamedSharding& s = *e.out_shardings[o];
    if (s.mesh().platform() != "cpu") {  // each block to its GPU (core/backend/device_shards.h)
      outs[o] = device_put(outs[o], s);
      continue;
    }
    Array placed = Array::from_buffer(outs[o].buffer(), outs[o].shape(), outs[o].dtype(),
                                      outs[o].weak_type());
    placed.node()->sharding = e.out_shardings[o];
    outs[o] = std::move(placed);
  }
  return outs;
}

}  // namespace graft::detail
