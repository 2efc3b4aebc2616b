#include "core/backend/cpu/onednn_conv.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
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

// Which oneDNN convolution pass computes it (see Plan).
enum class Pass : int64_t { kForward, kBackwardData, kBackwardWeights };

// The convolution in oneDNN's terms, as one of three passes of a oneDNN convolution; each
// describes graft's buffers by their element strides. lhs, wei and out name graft's lhs, rhs
// and result in oneDNN's dims; `lhs_offset` and smaller lhs dims crop (negative padding).
//  - kForward (no lhs dilation, no batch groups): src (N, C, spatial...) = lhs, weights
//    ([G,] O, I, spatial...) = rhs, dst (N, O, spatial...) = out; oneDNN's dilation is
//    graft's - 1.
//  - kBackwardData (lhs dilation d, window strides 1): the backward data pass of the
//    convolution that strides by d. out is its diff_src, lhs its diff_dst, and its weights
//    are rhs spatially flipped, in / out features swapped (a dense copy; `flip_from`
//    describes rhs); with rhs dilation r and window k its padding is (k - 1) r - lo on the
//    left and (k - 1) r - hi on the right.
//  - kBackwardWeights (no lhs dilation; batch groups G, or none and a window larger than the
//    result): the backward weights pass of a convolution with G groups, as the kernel
//    gradient of a (grouped) convolution is. src (N, C, spatial...) = lhs with its batch and
//    feature dims swapped, diff_dst = rhs as (I, O, spatial...), diff_weights
//    ([G,] O / G, out batch, spatial...) = out; it strides by graft's rhs dilation and
//    dilates by graft's window strides.
struct Plan {
  Pass pass = Pass::kForward;
  dims lhs, lhs_st, wei, wei_st, out, out_st, strides, dilates, pad_l, pad_r;
  dims flip_from, flip_from_st;  // kBackwardData: rhs as (G, O / G, I, spatial...)
  DType in = DType::kF32, out_dtype = DType::kF32;
  int64_t lhs_offset = 0;  // elements

  // Everything the created primitive depends on (not lhs_offset: the pointer moves).
  std::vector<int64_t> key() const {
    std::vector<int64_t> k{static_cast<int64_t>(pass), static_cast<int64_t>(in),
                           static_cast<int64_t>(out_dtype)};
    for (const dims* d : {&lhs, &lhs_st, &wei, &wei_st, &out, &out_st, &strides, &dilates, &pad_l,
                          &pad_r, &flip_from, &flip_from_st}) {
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

bool all_ones(const Shape& s) {
  return std::all_of(s.begin(), s.end(), [](int64_t v) { return v == 1; });
}

// Whether the window has more elements than the result's spatial dims, as in the kernel
// gradient of a convolution (window: the output cotangent; result: the kernel). oneDNN's
// backward weights runs those faster than its forward convolution (measured, batch 32, 32x32
// NHWC 32->64 3x3: 15-22 ms against 32-50 ms).
bool window_exceeds_result(const ConvParams& p, const ConvOperands& o) {
  int64_t window = 1, result = 1;
  for (size_t i = 2; i < o.rhs.size(); ++i) {
    window *= o.rhs[p.dims.rhs_spec[i]];
    result *= o.out[p.dims.out_spec[i]];
  }
  return window > result;
}

// The plan, or nothing when the convolution is one oneDNN cannot express. `weights_form`:
// whether an ungrouped convolution whose window exceeds its result is planned as backward
// weights (else as forward).
std::optional<Plan> plan(const ConvParams& p, const ConvOperands& o, bool weights_form) {
  const size_t n = o.lhs.size() - 2;
  if (n < 1 || n > 3 || !dtypes_fit(o.in, o.out_dtype)) return {};
  if (numel(o.lhs) == 0 || numel(o.rhs) == 0 || numel(o.out) == 0) return {};
  const int64_t fg = p.feature_group_count, bg = p.batch_group_count;
  Plan pl;
  if (!all_ones(p.lhs_dilation)) {
    if (bg > 1 || !all_ones(p.window_strides)) return {};
    pl.pass = Pass::kBackwardData;
  } else if (bg > 1 || (fg == 1 && weights_form && window_exceeds_result(p, o))) {
    pl.pass = Pass::kBackwardWeights;
  }
  const auto &ld = p.dims.lhs_spec, &rd = p.dims.rhs_spec, &od = p.dims.out_spec;
  const Shape lst = row_major_strides(o.lhs), rst = row_major_strides(o.rhs),
              ost = row_major_strides(o.out);
  const int64_t out_feat = o.rhs[rd[0]], in_feat = o.rhs[rd[1]];
  pl.in = o.in;
  pl.out_dtype = o.out_dtype;
  pl.lhs = {o.lhs[ld[0]], o.lhs[ld[1]]};
  pl.lhs_st = {lst[ld[0]], lst[ld[1]]};
  pl.out = {o.out[od[0]], o.out[od[1]]};
  pl.out_st = {ost[od[0]], ost[od[1]]};
  switch (pl.pass) {
    case Pass::kForward:
      pl.wei = {out_feat / fg, in_feat};
      pl.wei_st = {rst[rd[0]], rst[rd[1]]};
      if (fg > 1) {
        pl.wei.insert(pl.wei.begin(), fg);
        pl.wei_st.insert(pl.wei_st.begin(), out_feat / fg * rst[rd[0]]);
      }
      break;
    case Pass::kBackwardData:
      // Dense, in oneDNN's order for the strided convolution: ([G,] I, O / G, spatial...).
      pl.wei = fg > 1 ? dims{fg, in_feat, out_feat / fg} : dims{in_feat, out_feat};
      pl.flip_from = {fg, out_feat / fg, in_feat};
      pl.flip_from_st = {out_feat / fg * rst[rd[0]], rst[rd[0]], rst[rd[1]]};
      break;
    case Pass::kBackwardWeights:
      std::swap(pl.lhs[0], pl.lhs[1]);
      std::swap(pl.lhs_st[0], pl.lhs_st[1]);
      pl.wei = {in_feat, out_feat};
      pl.wei_st = {rst[rd[1]], rst[rd[0]]};
      pl.out = {out_feat / bg, pl.out[0]};
      pl.out_st = {pl.out_st[1], pl.out_st[0]};
      if (bg > 1) {
        pl.out.insert(pl.out.begin(), bg);
        pl.out_st.insert(pl.out_st.begin(), out_feat / bg * pl.out_st[0]);
      }
      break;
  }
  for (size_t i = 0; i < n; ++i) {
    const auto [lo, hi] = p.padding[i];
    const int64_t window = o.rhs[rd[2 + i]], r = p.rhs_dilation[i], s = p.window_strides[i];
    const int64_t out = o.out[od[2 + i]];
    pl.wei.push_back(window);
    pl.out.push_back(out);
    pl.out_st.push_back(ost[od[2 + i]]);
    pl.lhs_st.push_back(lst[ld[2 + i]]);
    if (pl.pass == Pass::kBackwardData) {
      const int64_t d = p.lhs_dilation[i], left = (window - 1) * r - lo,
                    right = (window - 1) * r - hi;
      if (left < 0 || right + d <= 0) return {};  // oneDNN's limits on padding
      pl.lhs.push_back(o.lhs[ld[2 + i]]);
      pl.flip_from.push_back(window);
      pl.flip_from_st.push_back(rst[rd[2 + i]]);
      pl.strides.push_back(d);
      pl.dilates.push_back(r - 1);
      pl.pad_l.push_back(left);
      pl.pad_r.push_back(right);
      continue;
    }
    const int64_t in = o.lhs[ld[2 + i]] - std::max<int64_t>(0, -lo) - std::max<int64_t>(0, -hi);
    if (in < 1) return {};  // cropped to nothing (the padding alone feeds the window)
    pl.lhs_offset += std::max<int64_t>(0, -lo) * lst[ld[2 + i]];
    pl.lhs.push_back(in);
    pl.wei_st.push_back(rst[rd[2 + i]]);
    pl.pad_l.push_back(std::max<int64_t>(0, lo));
    if (pl.pass == Pass::kForward) {
      pl.strides.push_back(s);
      pl.dilates.push_back(r - 1);
      pl.pad_r.push_back(std::max<int64_t>(0, hi));
    } else {
      // The window (rhs) is the diff_dst, the result's positions the kernel taps.
      // Negative right padding: the last input positions are never read; crop them (oneDNN
      // takes no more than stride - 1 of it).
      const int64_t right = (window - 1) * r + (out - 1) * s + 1 - in - pl.pad_l.back();
      if (right < 0) pl.lhs.back() += right;
      if (pl.lhs.back() < 1) return {};
      pl.strides.push_back(r);
      pl.dilates.push_back(s - 1);
      pl.pad_r.push_back(std::max<int64_t>(0, right));
    }
  }
  if (pl.pass == Pass::kBackwardData) pl.wei_st = row_major_strides(pl.wei);
  return pl;
}

// Writes rhs (described by plan.flip_from) as the dense weights of a kBackwardData plan:
// features swapped, every spatial dim reversed (in a row-major tap index that is t ->
// taps - 1 - t).
void flip_weights(const Plan& p, const void* rhs, size_t esize, void* dst) {
  const int64_t groups = p.flip_from[0], per_group = p.flip_from[1], in_feat = p.flip_from[2];
  const Shape window(p.flip_from.begin() + 3, p.flip_from.end());
  const int64_t taps = numel(window);
  std::vector<int64_t> tap_off(taps, 0);
  for (int64_t t = 0; t < taps; ++t) {
    for (int64_t q = t, i = static_cast<int64_t>(window.size()); i-- > 0; q /= window[i]) {
      tap_off[t] += (q % window[i]) * p.flip_from_st[3 + i];
    }
  }
  const char* src = static_cast<const char*>(rhs);
  char* out = static_cast<char*>(dst);
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t o = 0; o < per_group; ++o) {
      for (int64_t c = 0; c < in_feat; ++c) {
        const int64_t from = g * p.flip_from_st[0] + o * p.flip_from_st[1] + c * p.flip_from_st[2];
        char* to = out + (((g * in_feat + c) * per_group + o) * taps + taps - 1) * esize;
        for (int64_t t = 0; t < taps; ++t) {
          std::memcpy(to - t * esize, src + (from + tap_off[t]) * esize, esize);
        }
      }
    }
  }
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
  std::unique_ptr<dnnl::primitive> prim;
  size_t scratch_bytes = 0;
  int lhs_arg = 0, wei_arg = 0, out_arg = 0;  // DNNL_ARG_* of the pass
  md lhs_user, wei_user, out_user;  // graft's buffers (wei: the flipped copy in kBackwardData)
  md lhs_md, wei_md, out_md;        // what the primitive reads and writes
  Reorder lhs_in, wei_in, out_back;
  std::string impl;  // oneDNN's implementation name

  // The primitive's layout and argument id (DNNL_ARG_*) for lhs, rhs and the result.
  void bind(std::pair<md, int> l, std::pair<md, int> w, std::pair<md, int> o) {
    std::tie(lhs_md, lhs_arg) = l;
    std::tie(wei_md, wei_arg) = w;
    std::tie(out_md, out_arg) = o;
  }
};

// Creates the primitive for these layouts into `e`; false when oneDNN has none or only its
// reference loop (no faster than graft's).
bool try_create(const Plan& p, const md& lhs, const md& wei, const md& out, Entry& e) {
  using dnnl::convolution_forward;
  const auto direct = dnnl::algorithm::convolution_direct;
  const auto any = dnnl::memory::format_tag::any;
  const auto it = lhs.data_type();
  // The forward convolution a backward pass is of (src, weights, dst), any layouts.
  auto hint = [&](const dims& src, const dims& weights, const dims& dst) {
    return convolution_forward::primitive_desc(
        convolution_forward::desc(dnnl::prop_kind::forward_training, direct, md(src, it, any),
                                  md(weights, it, any), md(dst, it, any), p.strides, p.dilates,
                                  p.pad_l, p.pad_r),
        onednn_engine());
  };
  try {
    std::unique_ptr<dnnl::primitive_desc> pd;
    switch (p.pass) {
      case Pass::kForward: {
        auto f = std::make_unique<convolution_forward::primitive_desc>(
            convolution_forward::desc(dnnl::prop_kind::forward_inference, direct, lhs, wei, out,
                                      p.strides, p.dilates, p.pad_l, p.pad_r),
            user_scratchpad_attr(), onednn_engine());
        e.bind({f->src_desc(), DNNL_ARG_SRC}, {f->weights_desc(), DNNL_ARG_WEIGHTS},
               {f->dst_desc(), DNNL_ARG_DST});
        pd = std::move(f);
        break;
      }
      case Pass::kBackwardData: {
        auto b = std::make_unique<dnnl::convolution_backward_data::primitive_desc>(
            dnnl::convolution_backward_data::desc(direct, out, wei, lhs, p.strides, p.dilates,
                                                  p.pad_l, p.pad_r),
            user_scratchpad_attr(), onednn_engine(), hint(p.out, p.wei, p.lhs));
        e.bind({b->diff_dst_desc(), DNNL_ARG_DIFF_DST}, {b->weights_desc(), DNNL_ARG_WEIGHTS},
               {b->diff_src_desc(), DNNL_ARG_DIFF_SRC});
        pd = std::move(b);
        break;
      }
      case Pass::kBackwardWeights: {
        auto b = std::make_unique<dnnl::convolution_backward_weights::primitive_desc>(
            dnnl::convolution_backward_weights::desc(direct, lhs, out, wei, p.strides, p.dilates,
                                                     p.pad_l, p.pad_r),
            user_scratchpad_attr(), onednn_engine(), hint(p.lhs, p.out, p.wei));
        e.bind({b->src_desc(), DNNL_ARG_SRC}, {b->diff_dst_desc(), DNNL_ARG_DIFF_DST},
               {b->diff_weights_desc(), DNNL_ARG_DIFF_WEIGHTS});
        pd = std::move(b);
        break;
      }
    }
    e.impl = pd->impl_info_str();
    if (e.impl.rfind("ref", 0) == 0) return false;
    e.scratch_bytes = pd->scratchpad_desc().get_size();
    e.lhs_in = make_reorder(e.lhs_user, e.lhs_md);
    e.wei_in = make_reorder(e.wei_user, e.wei_md);
    e.out_back = make_reorder(e.out_md, e.out_user);
    e.prim = std::make_unique<dnnl::primitive>(*pd);
    return true;
  } catch (const dnnl::error&) {
    return false;  // unimplemented for these types / layouts on this CPU
  }
}

std::shared_ptr<const Entry> create(const Plan& p) {
  auto e = std::make_shared<Entry>();
  const auto it = dnnl_type(p.in), ot = dnnl_type(p.out_dtype);
  e->lhs_user = md(p.lhs, it, p.lhs_st);
  e->wei_user = md(p.wei, it, p.wei_st);
  e->out_user = md(p.out, ot, p.out_st);
  const auto any = dnnl::memory::format_tag::any;
  const md lhs_any(p.lhs, it, any), wei_any(p.wei, it, any), out_any(p.out, ot, any);
  // oneDNN's choice of layouts first (with reorders from and to graft's where it differs: for
  // NHWC it is NHWC, no copies); then graft's layouts for lhs and out, oneDNN's for the
  // weights (graft's too in kBackwardWeights, whose rhs is an activation). Measured (2 cores,
  // batch 32, 32x32, 3x3): NCHW 32->64 forward, brgconv with reorders 21-23 ms against the
  // gemm convolution on graft's layout 25-45 ms; depthwise 64-channel kernel gradient, jit_dw
  // with reorders 5-8 ms against the gemm one 43 ms.
  const bool made =
      try_create(p, lhs_any, wei_any, out_any, *e) ||
      try_create(p, e->lhs_user, p.pass == Pass::kBackwardWeights ? e->wei_user : wei_any,
                 e->out_user, *e);
  if (!made) e->prim.reset();
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
  std::optional<Plan> pl = plan(p, o, true);
  if (!pl) return nullptr;
  std::shared_ptr<const Entry> e = cache().get(*pl);
  if (!e->prim && pl->pass == Pass::kBackwardWeights && p.batch_group_count == 1) {
    pl = plan(p, o, false);  // oneDNN's forward convolution, then
    if (!pl) return nullptr;
    e = cache().get(*pl);
  }
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
  if (e->lhs_in.prim || e->out_back.prim) s += " + reorders";
  return s;
}

bool onednn_conv(const ConvParams& p, const ConvOperands& o, const void* lhs, const void* rhs,
                 void* out) {
  Plan pl;
  std::shared_ptr<const Entry> e = entry(p, o, &pl);
  if (!e) return false;
  const dnnl::engine& eng = onednn_engine();
  const size_t esize = dtype_size(o.in);
  const char* lhs_ptr = static_cast<const char*>(lhs) + pl.lhs_offset * esize;
  std::shared_ptr<Buffer> lhs_buf, wei_buf, flipped, out_buf;
  if (pl.pass == Pass::kBackwardData) {
    flipped = Buffer::make(e->wei_user.get_size(), "flipped convolution weights");
    flip_weights(pl, rhs, esize, flipped->data());
    rhs = flipped->data();
  }
  dnnl::memory l = to_primitive(
      e->lhs_in, e->lhs_md, dnnl::memory(e->lhs_user, eng, const_cast<char*>(lhs_ptr)), lhs_buf);
  dnnl::memory w = to_primitive(e->wei_in, e->wei_md,
                                dnnl::memory(e->wei_user, eng, const_cast<void*>(rhs)), wei_buf);
  dnnl::memory user_out(e->out_user, eng, out);
  dnnl::memory res = user_out;
  if (e->out_back.prim) {
    out_buf = Buffer::make(e->out_md.get_size(), "a oneDNN convolution result");
    res = dnnl::memory(e->out_md, eng, out_buf->data());
  }
  execute_primitive(*e->prim, e->scratch_bytes,
                    {{e->lhs_arg, l}, {e->wei_arg, w}, {e->out_arg, res}});
  if (e->out_back.prim) {
    execute_primitive(*e->out_back.prim, e->out_back.scratch_bytes,
                      {{DNNL_ARG_FROM, res}, {DNNL_ARG_TO, user_out}});
  }
  cache().runs.fetch_add(1, std::memory_order_relaxed);
  return true;
}

ConvCacheStats onednn_conv_stats() { return cache().stats(); }

}  // namespace graft::cpu
