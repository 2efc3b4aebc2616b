// Turning a CUDA library's status into graft::Error: "[cuda] cudaMalloc(1.0 GiB): out of
// memory". Every CUDA, cuBLASLt, cuDNN, NCCL and NVRTC call in the backend goes through one of
// the check functions (each library's own file defines its overload next to its handles), so
// no failure is ignored and none aborts.
#pragma once

#include <string_view>

#include <cuda_runtime_api.h>

namespace graft::cuda {

// Throws graft::Error "[cuda] <call>: <library> error <code>: <message>".
[[noreturn]] void fail(std::string_view library, std::string_view call, long code,
                       std::string_view message);

// A failed runtime call; clears the runtime's last error first (a sticky error stays).
void check(cudaError_t status, std::string_view call);

}  // namespace graft::cuda
