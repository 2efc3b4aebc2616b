#include "core/buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <string>

#include "core/env.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define GRAFT_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define GRAFT_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define GRAFT_POISON(p, n) ((void)(p), (void)(n))
#define GRAFT_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace graft {
namespace {

constexpr size_t kCacheMin = size_t{1} << 20;  // smaller blocks: malloc does well
constexpr size_t kPage = 4096;

// A quarter of physical memory, at least 1 GiB. A training step frees and allocates the same
// blocks every step; when they do not all fit, evicted blocks go back to the system and come
// back as fresh mappings whose first touch the kernel (and, in a VM, the host) pays for. With
// 1 GiB, moe-small's 6 timed steps re-allocated 770 MiB that way and took 1.5-2.1 s instead
// of 1.46-1.54 s. Cached bytes never exceed what the process once held live.
size_t cache_limit() {
  if (const char* env = std::getenv("GRAFT_BUFFER_CACHE_MB")) {
    try {
      return static_cast<size_t>(std::stoull(env)) << 20;
    } catch (...) {  // not a number: the default
    }
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const size_t quarter = pages > 0 && page > 0 ? size_t(pages) * size_t(page) / 4 : 0;
  return std::max(size_t{1} << 30, quarter);
}

// Freed blocks by capacity. A request takes the smallest cached block that fits and wastes
// at most an eighth of it; least recently freed blocks are evicted first.
class Cache {
 public:
  // A cached block of at least `capacity` bytes (capacity is set to its size), or null.
  void* take(size_t& capacity) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_size_.lower_bound(capacity);
    if (it == by_size_.end() || it->first > capacity + capacity / 8) return nullptr;
    Block b = *it->second;
    lru_.erase(it->second);
    by_size_.erase(it);
    bytes_ -= b.capacity;
    GRAFT_UNPOISON(b.data, b.capacity);
    capacity = b.capacity;
    return b.data;
  }

  // Keeps the block (taking ownership) or frees it.
  void give(void* data, size_t capacity) {
    std::unique_lock<std::mutex> lock(mu_);
    if (closed_ || capacity > limit_) {
      lock.unlock();
      std::free(data);
      return;
    }
    while (bytes_ + capacity > limit_) evict_oldest();
    GRAFT_POISON(data, capacity);
    lru_.push_front(Block{data, capacity});
    by_size_.emplace(capacity, lru_.begin());
    bytes_ += capacity;
  }

  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    while (!lru_.empty()) evict_oldest();
  }

  // At exit: frees everything and stops caching (buffers that static objects free later go
  // straight back to the system).
  void close() {
    std::lock_guard<std::mutex> lock(mu_);
    while (!lru_.empty()) evict_oldest();
    closed_ = true;
  }

  size_t bytes() {
    std::lock_guard<std::mutex> lock(mu_);
    return bytes_;
  }

 private:
  struct Block {
    void* data;
    size_t capacity;
  };
  void evict_oldest() {  // with mu_ held
    Block b = lru_.back();
    auto [lo, hi] = by_size_.equal_range(b.capacity);
    for (auto it = lo; it != hi; ++it) {
      if (it->second == std::prev(lru_.end())) {
        by_size_.erase(it);
        break;
      }
    }
    lru_.pop_back();
    bytes_ -= b.capacity;
    GRAFT_UNPOISON(b.data, b.capacity);
    std::free(b.data);
  }

  std::mutex mu_;
  std::list<Block> lru_;  // most recently freed first
  std::multimap<size_t, std::list<Block>::iterator> by_size_;
  size_t bytes_ = 0;
  size_t limit_ = cache_limit();
  bool closed_ = false;
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: buffers may be freed during static teardown
  return *c;
}

// Empties the cache when static objects are destroyed at exit.
struct CloseAtExit {
  CloseAtExit() { cache(); }  // constructed first, so closed after later statics are gone
  ~CloseAtExit() { cache().close(); }
} close_at_exit;

// Blocks of at least this size are aligned to, and rounded up to, 2 MiB and marked for
// transparent huge pages (where THP is "madvise", the common default): 512x fewer TLB
// misses for a streaming kernel and fewer first-touch page faults. The rounding wastes at
// most a quarter of the block. GRAFT_HUGE_PAGES=0 turns this off.
constexpr size_t kHugeMin = size_t{8} << 20;
constexpr size_t kHugePage = size_t{2} << 20;

bool huge_pages_enabled() {
  static const bool on = env_flag("GRAFT_HUGE_PAGES", true);
  return on;
}

bool huge(size_t rounded) { return rounded >= kHugeMin && huge_pages_enabled(); }

// A large block's size: whole pages, or whole huge pages.
size_t large_size(size_t bytes) {
  const size_t page = huge(bytes) ? kHugePage : kPage;
  return (bytes + page - 1) / page * page;
}

void* allocate_large(size_t size) {
  const bool h = huge(size);
  void* p = std::aligned_alloc(h ? kHugePage : kPage, size);
  if (p != nullptr && h) madvise(p, size, MADV_HUGEPAGE);  // a hint: failure is harmless
  return p;
}

std::string alloc_message(size_t bytes, std::string_view what) {
  return str_cat("[alloc] cannot allocate ", bytes, " bytes (",
                 bytes_str(static_cast<double>(bytes)), ")", what.empty() ? "" : " for ", what,
                 ": out of memory");
}

}  // namespace

std::string bytes_str(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, kUnits[u]);
  return buf;
}

AllocError::AllocError(size_t bytes, std::string_view what)
    : Error(alloc_message(bytes, what)), bytes_(bytes) {}

namespace {

std::atomic<size_t> live{0}, peak{0};

void count_allocated(size_t bytes) {
  const size_t now = live.fetch_add(bytes) + bytes;
  size_t seen = peak.load();
  while (now > seen && !peak.compare_exchange_weak(seen, now)) {
  }
}

}  // namespace

size_t Buffer::live_bytes() { return live.load(); }
size_t Buffer::peak_bytes() { return peak.load(); }
void Buffer::reset_peak_bytes() { peak.store(live.load()); }

Buffer::Buffer(size_t bytes, std::string_view what) : bytes_(bytes) {
  // A request no allocator can satisfy; the rounding below must not wrap around either.
  if (bytes > (size_t{1} << 62)) throw AllocError(bytes, what);
  // aligned_alloc wants a multiple of the alignment; keep a real allocation for 0 bytes too.
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  if (rounded >= kCacheMin) {
    rounded = large_size(rounded);
    data_ = cache().take(rounded);
    if (data_ == nullptr) {
      data_ = allocate_large(rounded);
      if (data_ == nullptr) {  // under memory pressure: give the cached blocks back, retry
        cache().clear();
        data_ = allocate_large(rounded);
      }
    }
  } else {
    data_ = std::aligned_alloc(64, rounded);
  }
  if (data_ == nullptr) throw AllocError(bytes, what);
  capacity_ = rounded;
  count_allocated(rounded);
  static const bool poison = env_flag("GRAFT_POISON_BUFFERS", false);
  if (poison) std::memset(data_, 0xFF, rounded);  // NaN: reads of unwritten memory show
}

Buffer::Buffer(ViewOf v)
    : bytes_(v.bytes), parent_(std::move(v.parent)), device_(parent_ ? parent_->device_ : -1) {
  if (!parent_ || v.offset + v.bytes > parent_->bytes() || v.offset % 64 != 0) {
    fail("buffer", "a view of ", v.bytes, " bytes at ", v.offset, " does not fit its buffer");
  }
  // Kernels never take a view over as an in-place output (is_view()); one is written only
  // where its owner offers it as an output's destination (a scan's y rows).
  data_ = const_cast<char*>(static_cast<const char*>(parent_->data())) + v.offset;
}

Buffer::Buffer(DeviceMemory m)
    : data_(m.data), bytes_(m.bytes), device_(m.device), release_(m.release) {
  if (m.device < 0 || m.release == nullptr) fail("buffer", "device memory needs a device and a release");
}

Buffer::~Buffer() {
  if (parent_) return;
  if (release_ != nullptr) {
    release_(data_, bytes_, device_);
    return;
  }
  live.fetch_sub(capacity_);
  if (capacity_ >= kCacheMin) {
    cache().give(data_, capacity_);
  } else {
    std::free(data_);
  }
}

size_t Buffer::cached_bytes() { return cache().bytes(); }

void Buffer::release_cached() { cache().clear(); }

}  // namespace graft
