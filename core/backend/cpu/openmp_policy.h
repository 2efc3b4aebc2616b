// oneDNN (Debian's build) runs its GEMMs on OpenMP, whose idle threads spin after each GEMM
// and starve graft's own thread pool on a small machine (measured: tiled attention 0.24-0.67x
// of naive with spinning threads, 4-9x faster without). libgomp reads OMP_WAIT_POLICY once,
// when it loads, so a program that wants it passive must set it and start again.
#pragma once

namespace graft::cpu {

// When OMP_WAIT_POLICY is unset: sets it to "passive" and re-executes this program with the
// same arguments (execv of /proc/self/exe). Returns normally when it was already set or the
// exec failed (the program then runs with OpenMP's default policy).
void reexec_with_passive_openmp(char** argv);

}  // namespace graft::cpu
