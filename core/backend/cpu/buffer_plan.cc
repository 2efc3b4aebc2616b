// Liveness-based buffer planning: which values die where, which instructions may compute in
// place, and the peak memory of the resulting schedule.
#include <algorithm>

#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/executable.h"

namespace graft {

namespace {

int64_t bytes_of(const Aval& a) { return numel(a.shape) * dtype_size(a.dtype); }

}  // namespace

BufferPlan plan_buffers(const Program& p, const std::vector<bool>& donated) {
  BufferPlan plan;
  size_t n = p.avals.size();
  plan.last_use.assign(n, -1);
  plan.input_index.assign(n, -1);
  plan.keep.assign(n, false);
  for (size_t j = 0; j < p.inputs.size(); ++j) plan.input_index[p.inputs[j]] = static_cast<int>(j);
  for (int v : p.outputs) plan.keep[v] = true;
  for (int v : p.constants) plan.keep[v] = true;
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    for (int v : p.instrs[i].in) plan.last_use[v] = static_cast<int>(i);
  }
  plan.output_index.assign(n, -1);
  std::vector<int> times(n, 0);
  for (int v : p.outputs) ++times[v];
  for (const Instr& instr : p.instrs) {
    for (int v : instr.out) {
      if (times[v] != 1) continue;
      const auto at = std::find(p.outputs.begin(), p.outputs.end(), v) - p.outputs.begin();
      plan.output_index[v] = static_cast<int>(at);
    }
  }
  // Simulate the schedule: outputs allocate (or take over a dying input), then the inputs
  // whose last use this was are freed.
  int64_t live = 0;
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    const Instr& instr = p.instrs[i];
    uint64_t reusable = reusable_inputs(p, plan, i, donated);
    plan.reusable.push_back(reusable);
    std::vector<bool> taken(instr.in.size(), false);
    for (int o : instr.out) {
      int64_t b = bytes_of(p.avals[o]);
      plan.total_bytes += b;
      bool reused = false;
      for (size_t k = 0; k < instr.in.size() && k < 64 && !reused; ++k) {
        const Aval& a = p.avals[instr.in[k]];
        if (!(reusable >> k & 1) || taken[k] || a.shape != p.avals[o].shape ||
            a.dtype != p.avals[o].dtype) {
          continue;
        }
        // Taking over an argument's buffer adds the value to what the program holds.
        taken[k] = reused = true;
        if (plan.input_index[instr.in[k]] >= 0) live += b;
      }
      if (!reused) live += b;
    }
    plan.peak_bytes = std::max(plan.peak_bytes, live);
    // A taken input lives on as the output; an argument's buffer is the caller's.
    std::vector<int> done;
    for (size_t k = 0; k < instr.in.size(); ++k) {
      if (taken[k]) done.push_back(instr.in[k]);
    }
    for (int v : instr.in) {
      if (plan.last_use[v] != static_cast<int>(i) || plan.keep[v]) continue;
      if (plan.input_index[v] >= 0) continue;
      if (std::find(done.begin(), done.end(), v) != done.end()) continue;  // or x * x
      done.push_back(v);
      live -= bytes_of(p.avals[v]);
    }
    for (int o : instr.out) {
      if (plan.last_use[o] < 0 && !plan.keep[o]) live -= bytes_of(p.avals[o]);  // unused
    }
  }
  return plan;
}

uint64_t reusable_inputs(const Program& p, const BufferPlan& plan, size_t i,
                         const std::vector<bool>& donated) {
  const Instr& instr = p.instrs[i];
  if (!cpu::runs_in_place(instr.prim->id())) return 0;
  uint64_t mask = 0;
  for (size_t k = 0; k < instr.in.size() && k < 64; ++k) {
    int v = instr.in[k];
    if (plan.last_use[v] != static_cast<int>(i) || plan.keep[v]) continue;
    int j = plan.input_index[v];
    if (j >= 0 && (static_cast<size_t>(j) >= donated.size() || !donated[j])) continue;
    mask |= uint64_t{1} << k;
  }
  return mask;
}

}  // namespace graft
