// A dense, 64-byte aligned host allocation. Owned through std::shared_ptr by evaluated nodes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace graft {

class Buffer {
 public:
  // Allocates `bytes` (uninitialized). Throws std::bad_alloc on failure.
  explicit Buffer(size_t bytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() { return data_; }
  const void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  template <typename T>
  T* as() {
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* as() const {
    return static_cast<const T*>(data_);
  }

  static std::shared_ptr<Buffer> make(size_t bytes) { return std::make_shared<Buffer>(bytes); }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace graft
