#include "core/backend/cpu/kernel_profile.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"

namespace graft::cpu {

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Totals {
  int64_t calls = 0, self_ns = 0;
};

struct Profile {
  std::mutex mu;
  std::map<std::string, Totals> by_prim, by_shape;
  int64_t first_ns = 0, last_ns = 0;  // wall span covered by timed kernels
};

Profile& profile() {
  static Profile* p = new Profile;  // never destroyed: kernels may run during exit
  return *p;
}

// Time spent by kernels nested in the current one on this thread (a body's kernels run on the
// calling thread, so subtracting them gives the outer kernel's self time).
thread_local int64_t nested_ns = 0;

// GRAFT_PROFILE_TOP=n lists the n costliest (primitive, avals) rows instead of 25.
void print_at_exit() {
  const char* top = std::getenv("GRAFT_PROFILE_TOP");
  const int n = top != nullptr ? std::atoi(top) : 0;
  std::fputs(profile_report(n > 0 ? n : 25).c_str(), stderr);
}

bool read_flag() {
  const char* env = std::getenv("GRAFT_PROFILE");
  if (env == nullptr) return false;
  const std::string_view v(env);
  const bool on = !(v.empty() || v == "0" || v == "off" || v == "false" || v == "no");
  if (on) std::atexit(print_at_exit);
  return on;
}

std::string shape_key(const Call& call) {
  std::string key(call.prim.name());
  key += ' ';
  for (int i = 0; i < call.num_inputs(); ++i) {
    if (i > 0) key += ", ";
    key += call.in_aval(i).str();
  }
  key += " -> ";
  for (int i = 0; i < call.num_outputs(); ++i) {
    if (i > 0) key += ", ";
    key += call.out_aval(i).str();
  }
  return key;
}

}  // namespace

bool profiling_enabled() {
  static const bool on = read_flag();
  return on;
}

KernelTimer::KernelTimer(const Call& call)
    : call_(call), start_ns_(now_ns()), children_before_ns_(nested_ns) {}

KernelTimer::~KernelTimer() {
  const int64_t end = now_ns(), total = end - start_ns_;
  const int64_t self = total - (nested_ns - children_before_ns_);
  nested_ns = children_before_ns_ + total;
  Profile& p = profile();
  std::string key = shape_key(call_);
  std::lock_guard<std::mutex> lock(p.mu);
  Totals& a = p.by_prim[std::string(call_.prim.name())];
  ++a.calls;
  a.self_ns += self;
  Totals& b = p.by_shape[std::move(key)];
  ++b.calls;
  b.self_ns += self;
  if (p.first_ns == 0 || start_ns_ < p.first_ns) p.first_ns = start_ns_;
  p.last_ns = std::max(p.last_ns, end);
}

void profile_reset() {
  Profile& p = profile();
  std::lock_guard<std::mutex> lock(p.mu);
  p.by_prim.clear();
  p.by_shape.clear();
  p.first_ns = p.last_ns = 0;
}

std::string profile_report(int top) {
  Profile& p = profile();
  std::lock_guard<std::mutex> lock(p.mu);
  auto sorted = [](const std::map<std::string, Totals>& m) {
    std::vector<std::pair<std::string, Totals>> v(m.begin(), m.end());
    std::sort(v.begin(), v.end(),
              [](const auto& a, const auto& b) { return a.second.self_ns > b.second.self_ns; });
    return v;
  };
  int64_t sum = 0;
  for (const auto& [name, t] : p.by_prim) sum += t.self_ns;
  std::string out = str_cat("graft kernel profile (GRAFT_PROFILE): ", sum / 1e6,
                            " ms in kernels over ", (p.last_ns - p.first_ns) / 1e6,
                            " ms of wall time\n");
  char line[512];
  std::snprintf(line, sizeof line, "  %-28s %9s %12s %7s\n", "primitive", "calls", "self ms",
                "share");
  out += line;
  for (const auto& [name, t] : sorted(p.by_prim)) {
    std::snprintf(line, sizeof line, "  %-28s %9lld %12.2f %6.1f%%\n", name.c_str(),
                  static_cast<long long>(t.calls), t.self_ns / 1e6,
                  sum > 0 ? 100.0 * t.self_ns / sum : 0.0);
    out += line;
  }
  out += str_cat("  costliest ", top, " (primitive, avals):\n");
  int n = 0;
  for (const auto& [key, t] : sorted(p.by_shape)) {
    if (n++ == top) break;
    std::snprintf(line, sizeof line, "  %9lld %12.2f %6.1f%%  ", static_cast<long long>(t.calls),
                  t.self_ns / 1e6, sum > 0 ? 100.0 * t.self_ns / sum : 0.0);
    out += line;
    out += key.size() > 200 ? key.substr(0, 200) + "..." : key;
    out += '\n';
  }
  return out;
}

}  // namespace graft::cpu
