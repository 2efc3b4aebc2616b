// RAII over cuDNN 9's backend (graph) API, cudnn_graph.h: a descriptor owns one
// cudnnBackendDescriptor_t, a handle owns one cudnnHandle_t; both release in their destructor.
// Every status goes through check(): a failure is a graft::Error
// "[cuda] <call>: cuDNN error <code>: <name> (<cuDNN's last error message>)", never an abort.
//
// Threading: a Descriptor or Handle is used by one thread at a time (cuDNN's own rule); the
// types hold no global state. Built only with --config=cuda.
#pragma once

#include <cudnn_graph.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace graft::cuda {

// Throws graft::Error unless `status` is CUDNN_STATUS_SUCCESS.
void check(cudnnStatus_t status, std::string_view call);

}  // namespace graft::cuda

namespace graft::cuda::cudnn {

// cuDNN 9 groups its statuses by thousands: 3000 - 3999 is "not supported" (this graph,
// shape, layout or device is outside what any engine implements), the answer that sends a
// caller to its own kernel instead of failing.
inline bool not_supported(cudnnStatus_t status) {
  return status >= CUDNN_STATUS_NOT_SUPPORTED && status < 4000;
}

class Descriptor {
 public:
  explicit Descriptor(cudnnBackendDescriptorType_t type);
  ~Descriptor();
  Descriptor(Descriptor&& o) noexcept : desc_(o.desc_) { o.desc_ = nullptr; }
  Descriptor& operator=(Descriptor&& o) noexcept;
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;

  cudnnBackendDescriptor_t get() const { return desc_; }

  // cudnnBackendSetAttribute; throws naming `attr` on failure.
  Descriptor& set(cudnnBackendAttributeName_t attr, cudnnBackendAttributeType_t type, int64_t count,
                  const void* values);
  Descriptor& set_int64(cudnnBackendAttributeName_t attr, int64_t v) {
    return set(attr, CUDNN_TYPE_INT64, 1, &v);
  }
  Descriptor& set_int64s(cudnnBackendAttributeName_t attr, const std::vector<int64_t>& v) {
    return set(attr, CUDNN_TYPE_INT64, static_cast<int64_t>(v.size()), v.data());
  }
  Descriptor& set_dtype(cudnnBackendAttributeName_t attr, cudnnDataType_t v) {
    return set(attr, CUDNN_TYPE_DATA_TYPE, 1, &v);
  }
  Descriptor& set_bool(cudnnBackendAttributeName_t attr, bool v) {
    return set(attr, CUDNN_TYPE_BOOLEAN, 1, &v);
  }
  Descriptor& set_float(cudnnBackendAttributeName_t attr, float v) {
    return set(attr, CUDNN_TYPE_FLOAT, 1, &v);
  }
  Descriptor& set_desc(cudnnBackendAttributeName_t attr, const Descriptor& d) {
    cudnnBackendDescriptor_t raw = d.get();
    return set(attr, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw);
  }
  Descriptor& set_descs(cudnnBackendAttributeName_t attr,
                        const std::vector<cudnnBackendDescriptor_t>& ds) {
    return set(attr, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(ds.size()), ds.data());
  }

  // cudnnBackendFinalize; throws on failure, naming `what`.
  void finalize(std::string_view what);
  // cudnnBackendFinalize, returning the status (for finalizations that may say "not supported").
  cudnnStatus_t try_finalize();

 private:
  cudnnBackendDescriptor_t desc_ = nullptr;
};

// One cuDNN handle, created on the calling thread's current device.
class Handle {
 public:
  Handle();
  ~Handle();
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  cudnnHandle_t get() const { return handle_; }

 private:
  cudnnHandle_t handle_ = nullptr;
};

// The name cuDNN gives a status ("CUDNN_STATUS_NOT_SUPPORTED_SHAPE").
std::string_view status_name(cudnnStatus_t status);
// "<status name> (<cuDNN's last error message on this thread>)", clearing the message.
std::string describe(cudnnStatus_t status);

}  // namespace graft::cuda::cudnn
