#include "core/backend/cpu/openmp_policy.h"

#include <unistd.h>

#include <cstdlib>

namespace graft::cpu {

void reexec_with_passive_openmp(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  setenv("OMP_WAIT_POLICY", "passive", 1);
  execv("/proc/self/exe", argv);
}

}  // namespace graft::cpu
