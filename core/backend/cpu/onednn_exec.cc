#include "core/backend/cpu/onednn_exec.h"

#include "core/buffer.h"

#include <cstdlib>
#include <memory>
#include <utility>

namespace graft::cpu {
namespace {

// A per-thread scratch area that only grows: a thread runs one primitive at a time (kernels
// do not nest GEMMs), so one area per thread is never used by two executions at once.
class Scratch {
 public:
  void* get(size_t bytes) {
    if (bytes > size_) {
      // 64-byte alignment, as oneDNN's own scratchpads.
      void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
      if (p == nullptr) throw AllocError(bytes, "a oneDNN scratchpad");
      data_.reset(p);
      size_ = bytes;
    }
    return data_.get();
  }

 private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> data_;
  size_t size_ = 0;
};

}  // namespace

dnnl::engine& onednn_engine() {
  static dnnl::engine* e = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *e;
}

dnnl::primitive_attr user_scratchpad_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void execute_primitive(const dnnl::primitive& prim, size_t scratch_bytes,
                       std::unordered_map<int, dnnl::memory> args) {
  thread_local dnnl::stream stream(onednn_engine());
  thread_local Scratch scratch;
  if (scratch_bytes > 0) {
    dnnl::memory::desc md({static_cast<dnnl::memory::dim>(scratch_bytes)},
                          dnnl::memory::data_type::u8, dnnl::memory::format_tag::a);
    args.emplace(DNNL_ARG_SCRATCHPAD,
                 dnnl::memory(md, onednn_engine(), scratch.get(scratch_bytes)));
  }
  prim.execute(stream, args);
  stream.wait();
}

}  // namespace graft::cpu
