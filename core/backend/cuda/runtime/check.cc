#include "core/backend/cuda/runtime/check.h"

#include <string>

#include "core/error.h"

namespace graft::cuda {

void fail(std::string_view library, std::string_view call, long code, std::string_view message) {
  throw Error("[cuda] " + std::string(call) + ": " + std::string(library) + " error " +
              std::to_string(code) + ": " + std::string(message));
}

void check(cudaError_t status, std::string_view call) {
  if (status == cudaSuccess) return;
  cudaGetLastError();
  fail("CUDA runtime", call, static_cast<long>(status), cudaGetErrorString(status));
}

}  // namespace graft::cuda
