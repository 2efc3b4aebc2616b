#include "core/backend/cuda/attention/cudnn_backend.h"

#include <string>

#include "core/backend/cuda/runtime/check.h"

namespace graft::cuda {

void check(cudnnStatus_t status, std::string_view call) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  fail("cuDNN", call, static_cast<long>(status), cudnn::describe(status));
}

}  // namespace graft::cuda

namespace graft::cuda::cudnn {

Descriptor::Descriptor(cudnnBackendDescriptorType_t type) {
  check(cudnnBackendCreateDescriptor(type, &desc_), "cudnnBackendCreateDescriptor");
}

Descriptor::~Descriptor() {
  // A destructor must not throw; destroying a valid descriptor does not fail.
  if (desc_ != nullptr) cudnnBackendDestroyDescriptor(desc_);
}

Descriptor& Descriptor::operator=(Descriptor&& o) noexcept {
  if (this != &o) {
    if (desc_ != nullptr) cudnnBackendDestroyDescriptor(desc_);
    desc_ = o.desc_;
    o.desc_ = nullptr;
  }
  return *this;
}

Descriptor& Descriptor::set(cudnnBackendAttributeName_t attr, cudnnBackendAttributeType_t type,
                            int64_t count, const void* values) {
  check(cudnnBackendSetAttribute(desc_, attr, type, count, values),
        "cudnnBackendSetAttribute(attribute " + std::to_string(static_cast<int>(attr)) + ")");
  return *this;
}

void Descriptor::finalize(std::string_view what) {
  check(cudnnBackendFinalize(desc_), "cudnnBackendFinalize(" + std::string(what) + ")");
}

cudnnStatus_t Descriptor::try_finalize() { return cudnnBackendFinalize(desc_); }

Handle::Handle() { check(cudnnCreate(&handle_), "cudnnCreate"); }

Handle::~Handle() {
  if (handle_ != nullptr) cudnnDestroy(handle_);
}

std::string_view status_name(cudnnStatus_t status) { return cudnnGetErrorString(status); }

std::string describe(cudnnStatus_t status) {
  // cuDNN keeps the reason of its last failure per thread (which tensor, which attribute);
  // reading it also clears it, so the next failure reports its own.
  char detail[1024] = {0};
  cudnnGetLastErrorString(detail, sizeof detail);
  std::string message(cudnnGetErrorString(status));
  if (detail[0] != '\0') message += std::string(" (") + detail + ")";
  return message;
}

}  // namespace graft::cuda::cudnn
