#include "core/sharding/axis.h"

#include <mutex>

#include "core/error.h"

namespace graft {
namespace {

std::mutex names_mu;
std::vector<std::string>& names() {
  static auto* n = new std::vector<std::string>();  // never destroyed: bits outlive statics
  return *n;
}

thread_local std::vector<AxisFrame> env;

}  // namespace

int axis_bit(std::string_view name) {
  if (name.empty()) fail("axis", "an axis name must not be empty");
  std::lock_guard<std::mutex> lock(names_mu);
  std::vector<std::string>& n = names();
  for (size_t i = 0; i < n.size(); ++i) {
    if (n[i] == name) return static_cast<int>(i);
  }
  if (n.size() == kMaxAxisNames) {
    fail("axis", "more than ", kMaxAxisNames, " distinct axis names in one process (adding '", name,
         "')");
  }
  n.emplace_back(name);
  return static_cast<int>(n.size() - 1);
}

AxisMask axis_mask(const std::vector<std::string>& ns) {
  AxisMask m = 0;
  for (const std::string& s : ns) m |= AxisMask{1} << axis_bit(s);
  return m;
}

const std::string& axis_name_of(int bit) {
  std::lock_guard<std::mutex> lock(names_mu);
  return names().at(static_cast<size_t>(bit));
}

std::vector<std::string> axis_names_of(AxisMask m) {
  std::vector<std::string> out;
  for (int b = 0; b < kMaxAxisNames; ++b) {
    if (m >> b & 1) out.push_back(axis_name_of(b));
  }
  return out;
}

std::string vma_str(AxisMask m) {
  if (m == 0) return "";
  std::string s = "{";
  for (int b = 0; b < kMaxAxisNames; ++b) {
    if (!(m >> b & 1)) continue;
    if (s.size() > 1) s += ",";
    s += axis_name_of(b);
  }
  return s + "}";
}

AxisScope::AxisScope(std::string name, int64_t size) {
  if (name.empty()) return;  // an unnamed vmap binds nothing
  axis_bit(name);            // intern now, so a bad name fails before anything is traced
  env.push_back({std::move(name), size});
  pushed_ = true;
}

AxisScope::~AxisScope() {
  if (pushed_) env.pop_back();
}

int64_t bound_axis_size(std::string_view op, const std::string& name) {
  for (size_t i = env.size(); i-- > 0;) {
    if (env[i].name == name) return env[i].size;
  }
  fail(op, "unbound axis name '", name,
       "': collectives run inside pmap, shard_map or vmap with that axis_name");
}

bool axis_bound(const std::string& name) {
  for (const AxisFrame& f : env) {
    if (f.name == name) return true;
  }
  return false;
}

const std::vector<AxisFrame>& axis_env() { return env; }

}  // namespace graft
