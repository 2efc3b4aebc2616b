#include "core/backend/cpu/onednn_conv.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/backend/cpu/onednn_exec.h"
#include "core/backend/cpu/onednn_matmul.h"
#include "core/buffer.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace graft::cpu {
namespace {

using dims = dnnl::memory::dims;
using md = dnnl::memory::desc;

// The convolution in oneDNN's terms: src (N, C, spatial...), weights ([G,] O, I, spatial...)
// and dst (N, O, spatial...) with graft's element strides, oneDNN's dilation (graft's - 1) and
// non-negative padding (cropping moved into the src view: its dims and `src_offset`).
struct Plan {
  dims src, src_st, wei, wei_st, dst, dst_st, strides, dilates, pad_l, pad_r;
  DType in = DType::kF32, out = DType::kF32;
  int64_t src_offset = 0;  // elements

  // Everything the created primitive depends on (not src_offset: the pointer moves).
  std::vector<int64_t> key() const {
    std::vector<int64_t> k{static_cast<int64_t>(in), static_cast<int64_t>(out)};
    for (const dims* d :
         {&src, &src_st, &wei, &wei_st, &dst, &dst_st, &strides, &dilates, &pad_l, &pad_r}) {
      k.push_back(static_cast<int64_t>(d->size()));
      k.insert(k.end(), d->begin(), d->end());
    }
    return k;
  }
};

bool dtypes_fit(DType in, DType out) {
  return (in == DType::kF32 && out == DType::kF32) ||
         (in == DType::kBF16 && (out == DType::kBF16 || out == DType::kF32));
}

// The plan, or nothing when the convolution is one oneDNN's convolution_forward cannot express.
std::optional<Plan> plan(const ConvParams& p, const ConvOperands& o) {
  const size_t n = o.lhs.size() - 2;
  if (n < 1 || n > 3 || p.batch_group_count != 1 || !dtypes_fit(o.in, o.out_dtype)) return {};
  if (numel(o.lhs) == 0 || numel(o.rhs) == 0 || numel(o.out) == 0) return {};
  for (int64_t d : p.lhs_dilation) {
    if (d != 1) return {};
  }
  const auto &ld = p.dims.lhs_spec, &rd = p.dims.rhs_spec, &od = p.dims.out_spec;
  const Shape lst = row_major_strides(o.lhs), rst = row_major_strides(o.rhs),
              ost = row_major_strides(o.out);
  const int64_t g = p.feature_group_count, out_feat = o.rhs[rd[0]];
  Plan pl;
  pl.in = o.in;
  pl.out = o.out_dtype;
  pl.src = {o.lhs[ld[0]], o.lhs[ld[1]]};
  pl.src_st = {lst[ld[0]], lst[ld[1]]};
  if (g > 1) {
    pl.wei = {g, out_feat / g, o.rhs[rd[1]]};
    pl.wei_st = {out_feat / g * rst[rd[0]], rst[rd[0]], rst[rd[1]]};
  } else {
    pl.wei = {out_feat, o.rhs[rd[1]]};
    pl.wei_st = {rst[rd[0]], rst[rd[1]]};
  }
  pl.dst = {o.out[od[0]], o.out[od[1]]};
  pl.dst_st = {ost[od[0]], ost[od[1]]};
  for (size_t i = 0; i < n; ++i) {
    const auto [lo, hi] = p.padding[i];
    const int64_t in = o.lhs[ld[2 + i]] - std::max<int64_t>(0, -lo) - std::max<int64_t>(0, -hi);
    if (in < 1) return {};  // cropped to nothing (the padding alone feeds the window)
    pl.src_offset += std::max<int64_t>(0, -lo) * lst[ld[2 + i]];
    pl.src.push_back(in);
    pl.src_st.push_back(lst[ld[2 + i]]);
    pl.wei.push_back(o.rhs[rd[2 + i]]);
    pl.wei_st.push_back(rst[rd[2 + i]]);
    pl.dst.push_back(o.out[od[2 + i]]);
    pl.dst_st.push_back(ost[od[2 + i]]);
    pl.strides.push_back(p.window_strides[i]);
    pl.dilates.push_back(p.rhs_dilation[i] - 1);
    pl.pad_l.push_back(std::max<int64_t>(0, lo));
    pl.pad_r.push_back(std::max<int64_t>(0, hi));
  }
  return pl;
}

dnnl::memory::data_type dnnl_type(DType t) {
  return t == DType::kBF16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
}

// A reorder between graft's layout and the primitive's (null prim: the layouts are equal).
struct Reorder {
  std::unique_ptr<dnnl::reorder> prim;
  size_t scratch_bytes = 0;
};

Reorder make_reorder(const md& from, const md& to) {
  Reorder r;
  if (from == to) return r;
  dnnl::reorder::primitive_desc pd(onednn_engine(), from, onednn_engine(), to,
                                   user_scratchpad_attr());
  r.prim = std::make_unique<dnnl::reorder>(pd);
  r.scratch_bytes = pd.scratchpad_desc().get_size();
  return r;
}

// A created primitive with the layouts around it (null prim: not for oneDNN).
struct Entry {
  std::unique_ptr<dnnl::convolution_forward> prim;
  size_t scratch_bytes = 0;
  md src_user, wei_user, dst_user;  // graft's buffers
  md src_md, wei_md, dst_md;        // what the primitive reads and writes
  Reorder src_in, wei_in, dst_out;
  std::string impl;  // oneDNN's implementation name
};

std::optional<dnnl::convolution_forward::primitive_desc> conv_pd(const Plan& p, const md& src,
                                                                  const md& wei, const md& dst) {
  try {
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                      dnnl::algorithm::convolution_direct, src, wei, dst,
                                      p.strides, p.dilates, p.pad_l, p.pad_r);
    dnnl::convolution_forward::primitive_desc pd(d, user_scratchpad_attr(), onednn_engine());
    // oneDNN's reference convolution is a plain loop, no faster than graft's.
    if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0) return {};
    return pd;
  } catch (const dnnl::error&) {
    return {};  // unimplemented for these types / layouts on this CPU
  }
}

std::shared_ptr<const Entry> create(const Plan& p) {
  auto e = std::make_shared<Entry>();
  const auto it = dnnl_type(p.in), ot = dnnl_type(p.out);
  e->src_user = md(p.src, it, p.src_st);
  e->wei_user = md(p.wei, it, p.wei_st);
  e->dst_user = md(p.dst, ot, p.dst_st);
  const auto any = dnnl::memory::format_tag::any;
  // First graft's layouts for src and dst (no copies), the weights in oneDNN's choice (small);
  // then oneDNN's choice for all three.
  auto pd = conv_pd(p, e->src_user, md(p.wei, it, any), e->dst_user);
  if (!pd) pd = conv_pd(p, md(p.src, it, any), md(p.wei, it, any), md(p.dst, ot, any));
  if (!pd) return e;
  try {
    e->src_md = pd->src_desc();
    e->wei_md = pd->weights_desc();
    e->dst_md = pd->dst_desc();
    e->src_in = make_reorder(e->src_user, e->src_md);
    e->wei_in = make_reorder(e->wei_user, e->wei_md);
    e->dst_out = make_reorder(e->dst_md, e->dst_user);
    e->scratch_bytes = pd->scratchpad_desc().get_size();
    e->impl = pd->impl_info_str();
    e->prim = std::make_unique<dnnl::convolution_forward>(*pd);
  } catch (const dnnl::error&) {
    e->prim.reset();
  }
  return e;
}

struct KeyHash {
  size_t operator()(const std::vector<int64_t>& k) const {
    size_t h = 1469598103934665603ull;
    for (int64_t v : k) h = (h ^ static_cast<size_t>(v)) * 1099511628211ull;
    return h;
  }
};

// Created primitives by geometry; emptied when it reaches kCapacity (a program has a handful
// of convolution geometries; creation costs milliseconds, a lookup well under one).
class Cache {
 public:
  static constexpr size_t kCapacity = 256;

  std::shared_ptr<const Entry> get(const Plan& p) {
    std::vector<int64_t> k = p.key();
    {
      std::lock_guard<std::mutex> l(mu_);
      auto it = map_.find(k);
      if (it != map_.end()) {
        ++hits_;
        return it->second;
      }
      ++misses_;
    }
    std::shared_ptr<const Entry> e = create(p);  // outside the lock: others keep hitting
    std::lock_guard<std::mutex> l(mu_);
    if (map_.size() >= kCapacity) map_.clear();
    map_.emplace(std::move(k), e);
    return e;
  }

  ConvCacheStats stats() {
    std::lock_guard<std::mutex> l(mu_);
    return {runs.load(), hits_, misses_, static_cast<int64_t>(map_.size())};
  }

  std::atomic<int64_t> runs{0};

 private:
  std::mutex mu_;
  std::unordered_map<std::vector<int64_t>, std::shared_ptr<const Entry>, KeyHash> map_;
  int64_t hits_ = 0, misses_ = 0;
};

Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: kernels may run during static teardown
  return *c;
}

std::shared_ptr<const Entry> entry(const ConvParams& p, const ConvOperands& o, Plan* out_plan) {
  if (!onednn_enabled()) return nullptr;
  std::optional<Plan> pl = plan(p, o);
  if (!pl) return nullptr;
  std::shared_ptr<const Entry> e = cache().get(*pl);
  if (!e->prim) return nullptr;
  if (out_plan) *out_plan = std::move(*pl);
  return e;
}

// `user` in the primitive's layout: itself, or a reordered copy held by `hold`.
dnnl::memory to_primitive(const Reorder& r, const md& layout, dnnl::memory user,
                          std::shared_ptr<Buffer>& hold) {
  if (!r.prim) return user;
  hold = Buffer::make(layout.get_size(), "a oneDNN convolution operand");
  dnnl::memory m(layout, onednn_engine(), hold->data());
  execute_primitive(*r.prim, r.scratch_bytes, {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, m}});
  return m;
}

}  // namespace

bool conv_uses_onednn(const ConvParams& p, const ConvOperands& o) {
  return entry(p, o, nullptr) != nullptr;
}

std::string onednn_conv_impl(const ConvParams& p, const ConvOperands& o) {
  std::shared_ptr<const Entry> e = entry(p, o, nullptr);
  if (!e) return "";
  std::string s = e->impl;
  if (e->src_in.prim || e->dst_out.prim) s += " + reorders";
  return s;
}

bool onednn_conv(const ConvParams& p, const ConvOperands& o, const void* lhs, const void* rhs,
                 void* out) {
  Plan pl;
  std::shared_ptr<const Entry> e = entry(p, o, &pl);
  if (!e) return false;
  const dnnl::engine& eng = onednn_engine();
  const char* src_ptr = static_cast<const char*>(lhs) + pl.src_offset * dtype_size(o.in);
  std::shared_ptr<Buffer> src_buf, wei_buf, dst_buf;
  dnnl::memory src = to_primitive(
      e->src_in, e->src_md, dnnl::memory(e->src_user, eng, const_cast<char*>(src_ptr)), src_buf);
  dnnl::memory wei = to_primitive(
      e->wei_in, e->wei_md, dnnl::memory(e->wei_user, eng, const_cast<void*>(rhs)), wei_buf);
  dnnl::memory user_dst(e->dst_user, eng, out);
  dnnl::memory dst = user_dst;
  if (e->dst_out.prim) {
    dst_buf = Buffer::make(e->dst_md.get_size(), "a oneDNN convolution result");
    dst = dnnl::memory(e->dst_md, eng, dst_buf->data());
  }
  execute_primitive(*e->prim, e->scratch_bytes,
                    {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
  if (e->dst_out.prim) {
    execute_primitive(*e->dst_out.prim, e->dst_out.scratch_bytes,
                      {{DNNL_ARG_FROM, dst}, {DNNL_ARG_TO, user_dst}});
  }
  cache().runs.fetch_add(1, std::memory_order_relaxed);
  return true;
}

ConvCacheStats onednn_conv_stats() { return cache().stats(); }

}  // namespace graft::cpu
