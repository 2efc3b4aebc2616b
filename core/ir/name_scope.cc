#include "core/ir/name_scope.h"

#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace graft::detail {

thread_local int name_scope_depth = 0;

namespace {

thread_local std::vector<std::string> scope_stack;

// Primitive -> scope path. Entries of primitives that died are dropped now and then; the
// weak_ptr tells a live entry from a dead one whose address was reused.
struct ScopeTable {
  std::mutex mu;
  std::unordered_map<const Primitive*, std::pair<std::weak_ptr<const Primitive>, std::string>> m;
  size_t since_prune = 0;
};
ScopeTable& table() {
  static ScopeTable* t = new ScopeTable;  // never destroyed: binds may run at exit
  return *t;
}

}  // namespace

void push_name_scope(const std::string& name) {
  scope_stack.push_back(scope_stack.empty() ? name : scope_stack.back() + "/" + name);
  ++name_scope_depth;
}

void pop_name_scope() {
  if (scope_stack.empty()) return;
  scope_stack.pop_back();
  --name_scope_depth;
}

void record_name_scope(const std::shared_ptr<const Primitive>& p) {
  if (scope_stack.empty() || p == nullptr) return;
  ScopeTable& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  if (++t.since_prune > 4096) {
    t.since_prune = 0;
    for (auto it = t.m.begin(); it != t.m.end();) {
      it = it->second.first.expired() ? t.m.erase(it) : std::next(it);
    }
  }
  auto it = t.m.find(p.get());
  if (it != t.m.end() && !it->second.first.expired()) return;  // keeps its first scope
  t.m[p.get()] = {p, scope_stack.back()};
}

std::string name_scope_of(const Primitive* p) {
  ScopeTable& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.m.find(p);
  if (it == t.m.end()) return "";
  std::shared_ptr<const Primitive> live = it->second.first.lock();
  return live.get() == p ? it->second.second : "";
}

}  // namespace graft::detail
