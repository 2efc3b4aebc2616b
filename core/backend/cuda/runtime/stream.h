// Streams, events and the current device, as RAII handles.
//
// Stream: a non-blocking cudaStream_t (it does not synchronize with the legacy default
// stream), destroyed with its owner. Event: a cudaEvent_t (timing off unless asked).
// DeviceGuard: makes a device current for a scope and restores the previous one.
// compute_stream(device): the device's default compute stream, on which graft's kernels run and
// whose order the caching allocator's reuse relies on (allocator.h). Created on first use,
// thread-safe, and never destroyed (it lives until the process exits, so nothing is freed
// during the CUDA runtime's own teardown).
//
// Errors: every CUDA call goes through check(): a failure throws graft::Error "[cuda] ...".
// Destructors never throw (a failed destroy is ignored: nothing can be done about it then).
// Built only with --config=cuda.
#pragma once

#include <cuda_runtime_api.h>

namespace graft::cuda {

// Throws graft::Error "[cuda] ..." unless 0 <= device < the number of devices (also when
// there is no GPU or driver at all).
void check_device(int device);

class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
  bool changed_ = false;
};

class Stream {
 public:
  // A new non-blocking stream on `device` (priority 0).
  explicit Stream(int device);
  ~Stream();
  Stream(Stream&& o) noexcept : stream_(o.stream_), device_(o.device_) { o.stream_ = nullptr; }
  Stream& operator=(Stream&& o) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  cudaStream_t get() const { return stream_; }
  int device() const { return device_; }
  // Waits on the host for everything enqueued so far.
  void synchronize() const;
  // Later work on this stream waits for `event` (recorded on any stream).
  void wait(cudaEvent_t event) const;

 private:
  cudaStream_t stream_ = nullptr;
  int device_ = 0;
};

class Event {
 public:
  // An event on `device`; `timing` enables elapsed_ms (and costs a little).
  explicit Event(int device, bool timing = false);
  ~Event();
  Event(Event&& o) noexcept : event_(o.event_) { o.event_ = nullptr; }
  Event& operator=(Event&& o) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  cudaEvent_t get() const { return event_; }
  void record(cudaStream_t stream) const;
  void synchronize() const;
  // Whether the work before the last record() has finished (never blocks).
  bool done() const;
  // Milliseconds between `start` and this event (both recorded with timing on, both done).
  float elapsed_ms(const Event& start) const;

 private:
  cudaEvent_t event_ = nullptr;
};

// The device's default compute stream (see above). Throws for a bad device.
cudaStream_t compute_stream(int device);

}  // namespace graft::cuda
