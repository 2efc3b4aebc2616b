#include "core/buffer.h"

#include <cstdlib>
#include <new>

namespace graft {

Buffer::Buffer(size_t bytes) : bytes_(bytes) {
  // aligned_alloc wants a multiple of the alignment; keep a real allocation for 0 bytes too.
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  data_ = std::aligned_alloc(64, rounded);
  if (data_ == nullptr) throw std::bad_alloc();
}

Buffer::~Buffer() { std::free(data_); }

}  // namespace graft
