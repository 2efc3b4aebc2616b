#include "core/backend/cpu/onednn_matmul.h"

#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "core/backend/cpu/onednn_exec.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace graft::cpu {
namespace {

struct DescHash {
  size_t operator()(const GemmDesc& d) const {
    size_t h = 1469598103934665603ull;
    auto mix = [&h](int64_t v) { h = (h ^ static_cast<size_t>(v)) * 1099511628211ull; };
    for (int64_t v : {d.batch, d.m, d.k, d.n}) mix(v);
    for (int64_t v : d.a_strides) mix(v);
    for (int64_t v : d.b_strides) mix(v);
    mix(static_cast<int64_t>(d.in) * 16 + static_cast<int64_t>(d.out));
    return h;
  }
};

dnnl::memory::data_type dnnl_type(DType t) {
  return t == DType::kBF16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
}

// A created primitive with its descriptors (null primitive: oneDNN has no implementation).
struct Entry {
  std::unique_ptr<dnnl::matmul> prim;
  dnnl::memory::desc a_md, b_md, c_md;
  size_t scratch_bytes = 0;  // the scratchpad execute_primitive() provides
};

std::shared_ptr<const Entry> create(const GemmDesc& d) {
  auto e = std::make_shared<Entry>();
  using dims = dnnl::memory::dims;
  e->a_md = dnnl::memory::desc(dims{d.batch, d.m, d.k}, dnnl_type(d.in),
                               dims{d.a_strides[0], d.a_strides[1], d.a_strides[2]});
  e->b_md = dnnl::memory::desc(dims{d.batch, d.k, d.n}, dnnl_type(d.in),
                               dims{d.b_strides[0], d.b_strides[1], d.b_strides[2]});
  e->c_md = dnnl::memory::desc(dims{d.batch, d.m, d.n}, dnnl_type(d.out), dims{d.m * d.n, d.n, 1});
  try {
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(e->a_md, e->b_md, e->c_md),
                                    user_scratchpad_attr(), onednn_engine());
    e->prim = std::make_unique<dnnl::matmul>(pd);
    e->scratch_bytes = pd.scratchpad_desc().get_size();
  } catch (const dnnl::error&) {
    e->prim.reset();  // unimplemented for these types / strides on this CPU
  }
  return e;
}

// A small LRU map from descriptor to created primitive. Creating a primitive costs tens of
// microseconds to milliseconds (JIT code generation); looking one up costs well under one.
class Cache {
 public:
  static constexpr size_t kCapacity = 256;

  std::shared_ptr<const Entry> get(const GemmDesc& d) {
    {
      std::lock_guard<std::mutex> l(mu_);
      auto it = map_.find(d);
      if (it != map_.end()) {
        ++hits_;
        lru_.splice(lru_.begin(), lru_, it->second);
        return it->second->second;
      }
      ++misses_;
    }
    // Created outside the lock: other threads keep hitting while one compiles.
    std::shared_ptr<const Entry> e = create(d);
    std::lock_guard<std::mutex> l(mu_);
    if (map_.find(d) == map_.end()) {
      lru_.emplace_front(d, e);
      map_[d] = lru_.begin();
      if (lru_.size() > kCapacity) {
        map_.erase(lru_.back().first);
        lru_.pop_back();
      }
    }
    return e;
  }

  GemmCacheStats stats() {
    std::lock_guard<std::mutex> l(mu_);
    return {hits_, misses_, static_cast<int64_t>(lru_.size()), static_cast<int64_t>(kCapacity)};
  }

 private:
  using Item = std::pair<GemmDesc, std::shared_ptr<const Entry>>;
  std::mutex mu_;
  std::list<Item> lru_;
  std::unordered_map<GemmDesc, std::list<Item>::iterator, DescHash> map_;
  int64_t hits_ = 0, misses_ = 0;
};

std::atomic<bool> enabled{true};

Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: kernels may run during static teardown
  return *c;
}

}  // namespace

bool onednn_matmul(const GemmDesc& d, const void* a, const void* b, void* c) {
  if (!enabled.load(std::memory_order_relaxed)) return false;
  std::shared_ptr<const Entry> e = cache().get(d);
  if (!e->prim) return false;
  dnnl::memory ma(e->a_md, onednn_engine(), const_cast<void*>(a));
  dnnl::memory mb(e->b_md, onednn_engine(), const_cast<void*>(b));
  dnnl::memory mc(e->c_md, onednn_engine(), c);
  execute_primitive(*e->prim, e->scratch_bytes,
                    {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
  return true;
}

GemmCacheStats onednn_cache_stats() { return cache().stats(); }

void set_onednn_enabled(bool e) { enabled.store(e); }

bool onednn_enabled() { return enabled.load(std::memory_order_relaxed); }

}  // namespace graft::cpu
