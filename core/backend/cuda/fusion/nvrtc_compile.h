// Compiling generated CUDA C++ (cuda_source.h) with NVRTC, at run time, for one GPU
// architecture. NVRTC needs no GPU and no driver, so this works (and is tested) on a machine
// without one. Built only with --config=cuda.
//
// Options: -default-device (the preludes' functions need no __device__), C++17, no fast math:
// IEEE division and square root, denormals kept, and --fmad=false so that a mul and an add of
// two steps are not contracted into an FMA (the CPU rounds each: exact ops must give its bits).
//
// Thread-safe. Errors: graft::Error "[cuda] <call>: NVRTC error <code>: <message>", with the
// compile log for a source NVRTC rejects.
#pragma once

#include <nvrtc.h>

#include <memory>
#include <string>
#include <string_view>

namespace graft::cuda {

// A failed NVRTC call (next to check(cudaError_t, ...) of runtime/check.h).
void check(nvrtcResult status, std::string_view call);

}  // namespace graft::cuda

namespace graft::cuda::fusion {

// The architecture compiled for when there is no device to ask (H100 / H200).
inline constexpr int kDefaultArch = 90;

// Code for one architecture, loadable with cudaLibraryLoadData.
struct DeviceCode {
  std::string image;  // CUBIN, or PTX ending in its NUL
  bool cubin = false;
  int arch = 0;  // compiled for sm_<arch> (CUBIN) or compute_<arch> (PTX)
};

// Compiles `source` for compute capability `arch` (major * 10 + minor): CUBIN for sm_<arch>
// when NVRTC knows that architecture, else PTX for the newest virtual architecture it knows
// below it (the driver compiles PTX for the device on load); fails when it knows none at or
// below `arch`. Each (source, arch) compiles once per process (later calls, also concurrent
// ones, get the same code); a failed compile is not kept, so a later call fails again.
std::shared_ptr<const DeviceCode> compile(const std::string& source, int arch = kDefaultArch);

// Distinct (source, arch) pairs compiled so far (tests).
size_t compiled_count();

}  // namespace graft::cuda::fusion
