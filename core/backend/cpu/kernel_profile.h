// Where a program's time goes, kernel by kernel: with GRAFT_PROFILE=1 every CPU kernel run is
// timed (self time: a control-flow kernel's figure excludes the kernels its bodies ran) and
// summed per primitive and per (primitive, operand avals); the table is printed to stderr
// when the process exits, or on demand. Off (one branch per kernel) otherwise.
#pragma once

#include <cstdint>
#include <string>

#include "core/backend/cpu/kernel.h"

namespace graft::cpu {

// True when GRAFT_PROFILE is set to anything but "", "0", "off", "false" or "no".
bool profiling_enabled();

// Times one kernel run; the scope's constructor and destructor bracket the kernel.
class KernelTimer {
 public:
  explicit KernelTimer(const Call& call);
  ~KernelTimer();
  KernelTimer(const KernelTimer&) = delete;
  KernelTimer& operator=(const KernelTimer&) = delete;

 private:
  const Call& call_;
  int64_t start_ns_;
  int64_t children_before_ns_;
};

// The table so far (per primitive, then the `top` costliest primitive + avals rows).
std::string profile_report(int top = 25);
// Forgets what was measured (e.g. after warm-up steps).
void profile_reset();

}  // namespace graft::cpu
