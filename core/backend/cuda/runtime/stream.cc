#include "core/backend/cuda/runtime/stream.h"

#include <array>
#include <atomic>
#include <mutex>

#include "core/backend/cuda/runtime/check.h"
#include "core/error.h"

namespace graft::cuda {
namespace {

// The device count, read once: it does not change while a process runs, and asking the
// runtime on every allocation would cost a call each time.
int count_devices() {
  static const int n = [] {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
      cudaGetLastError();
      return -static_cast<int>(err);  // remembered as an error code, reported by check_device
    }
    return count;
  }();
  return n;
}

constexpr int kMaxDevices = 64;

}  // namespace

void check_device(int device) {
  const int n = count_devices();
  if (n < 0) check(static_cast<cudaError_t>(-n), "cudaGetDeviceCount");
  if (n == 0) graft::fail("cuda", "no CUDA device (device ", device, " was asked for)");
  if (device < 0 || device >= n || device >= kMaxDevices) {
    graft::fail("cuda", "device ", device, " does not exist (", n, " devices)");
  }
}

DeviceGuard::DeviceGuard(int device) {
  check_device(device);
  check(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ != device) {
    check(cudaSetDevice(device), "cudaSetDevice");
    changed_ = true;
  }
}

DeviceGuard::~DeviceGuard() {
  if (changed_) cudaSetDevice(previous_);  // cannot fail for a device that was current
}

Stream::Stream(int device) : device_(device) {
  DeviceGuard guard(device);
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
}

Stream::~Stream() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

Stream& Stream::operator=(Stream&& o) noexcept {
  if (this != &o) {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
    stream_ = o.stream_;
    device_ = o.device_;
    o.stream_ = nullptr;
  }
  return *this;
}

void Stream::synchronize() const { check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

void Stream::wait(cudaEvent_t event) const {
  check(cudaStreamWaitEvent(stream_, event, 0), "cudaStreamWaitEvent");
}

Event::Event(int device, bool timing) {
  DeviceGuard guard(device);
  check(cudaEventCreateWithFlags(&event_, timing ? cudaEventDefault : cudaEventDisableTiming),
        "cudaEventCreateWithFlags");
}

Event::~Event() {
  if (event_ != nullptr) cudaEventDestroy(event_);
}

Event& Event::operator=(Event&& o) noexcept {
  if (this != &o) {
    if (event_ != nullptr) cudaEventDestroy(event_);
    event_ = o.event_;
    o.event_ = nullptr;
  }
  return *this;
}

void Event::record(cudaStream_t stream) const {
  check(cudaEventRecord(event_, stream), "cudaEventRecord");
}

void Event::synchronize() const { check(cudaEventSynchronize(event_), "cudaEventSynchronize"); }

bool Event::done() const {
  cudaError_t err = cudaEventQuery(event_);
  if (err == cudaErrorNotReady) {
    cudaGetLastError();  // not an error: the work is still running
    return false;
  }
  check(err, "cudaEventQuery");
  return true;
}

float Event::elapsed_ms(const Event& start) const {
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start.event_, event_), "cudaEventElapsedTime");
  return ms;
}

cudaStream_t compute_stream(int device) {
  check_device(device);
  // One slot per device, filled once under the mutex; readers after that take the fast path.
  // The Streams are leaked on purpose (see stream.h).
  static std::array<std::atomic<Stream*>, kMaxDevices> streams{};
  static std::mutex mu;
  Stream* s = streams[device].load(std::memory_order_acquire);
  if (s == nullptr) {
    std::lock_guard<std::mutex> lock(mu);
    s = streams[device].load(std::memory_order_relaxed);
    if (s == nullptr) {
      s = new Stream(device);
      streams[device].store(s, std::memory_order_release);
    }
  }
  return s->get();
}

}  // namespace graft::cuda
