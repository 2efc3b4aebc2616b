// CPU kernel of conv_general_dilated (core/primitives/conv.h): oneDNN's convolution where it
// fits (onednn_conv.h says which), else a direct loop that covers every case the primitive
// allows (any dimension numbers, N-d, padding that crops, lhs and rhs dilation, feature and
// batch groups; f32 / f64 / bf16 / f16 in, any floating out).
// Each output position finds, once, where every window tap lands in the input (or that it
// falls in padding or a dilation hole); then every output feature sums over taps and input
// features. bf16 / f16 / f32 accumulate in f32, f64 in f64. Output positions are split
// across threads, each writes its own elements, so results do not depend on the thread count.
#include <vector>

#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/onednn_conv.h"
#include "core/backend/cpu/parallel.h"
#include "core/dtype/convert.h"
#include "core/error.h"
#include "core/primitives/conv.h"

namespace graft::cpu {
namespace {

struct Geometry {
  size_t n = 0;                             // spatial dims
  int64_t batch = 0, out_batch = 0;         // lhs batch, output batch (batch / batch groups)
  int64_t in_feat = 0, out_feat = 0;        // rhs input features (per group), output features
  int64_t fg = 1, bg = 1;
  int64_t l_batch = 0, l_feat = 0;          // lhs strides of its batch and feature dims
  int64_t r_out = 0, r_in = 0;              // rhs strides of its out / in feature dims
  int64_t o_batch = 0, o_feat = 0;          // output strides of its batch and feature dims
  Shape in, window, out;                    // spatial sizes
  Shape l_sp, r_sp, o_sp;                   // spatial strides
};

Geometry geometry(const ConvParams& p, const Shape& ls, const Shape& rs, const Shape& os) {
  Geometry g;
  const auto &ld = p.dims.lhs_spec, &rd = p.dims.rhs_spec, &od = p.dims.out_spec;
  const Shape lst = row_major_strides(ls), rst = row_major_strides(rs), ost = row_major_strides(os);
  g.n = ls.size() - 2;
  g.batch = ls[ld[0]];
  g.out_batch = os[od[0]];
  g.in_feat = rs[rd[1]];
  g.out_feat = rs[rd[0]];
  g.fg = p.feature_group_count;
  g.bg = p.batch_group_count;
  g.l_batch = lst[ld[0]];
  g.l_feat = lst[ld[1]];
  g.r_out = rst[rd[0]];
  g.r_in = rst[rd[1]];
  g.o_batch = ost[od[0]];
  g.o_feat = ost[od[1]];
  for (size_t i = 0; i < g.n; ++i) {
    g.in.push_back(ls[ld[2 + i]]);
    g.window.push_back(rs[rd[2 + i]]);
    g.out.push_back(os[od[2 + i]]);
    g.l_sp.push_back(lst[ld[2 + i]]);
    g.r_sp.push_back(rst[rd[2 + i]]);
    g.o_sp.push_back(ost[od[2 + i]]);
  }
  return g;
}

// Increments a row-major multi-index over `sizes`; false after the last one.
bool next_index(Shape& idx, const Shape& sizes) {
  for (size_t i = idx.size(); i-- > 0;) {
    if (++idx[i] < sizes[i]) return true;
    idx[i] = 0;
  }
  return false;
}

template <typename T, typename Acc, typename U>
void conv_loop(const ConvParams& p, const Geometry& g, const T* lhs, const T* rhs, U* out) {
  const int64_t taps = numel(g.window), out_sp = numel(g.out);
  // The rhs offset of every window tap, and its index per spatial dim.
  std::vector<int64_t> r_off(taps);
  std::vector<Shape> tap_idx(taps);
  {
    Shape k(g.n, 0);
    for (int64_t t = 0; t < taps; ++t, next_index(k, g.window)) {
      int64_t off = 0;
      for (size_t i = 0; i < g.n; ++i) off += k[i] * g.r_sp[i];
      r_off[t] = off;
      tap_idx[t] = k;
    }
  }
  const int64_t per_group_out = g.out_feat / (g.fg > 1 ? g.fg : g.bg);
  parallel_for(g.out_batch * out_sp, 16, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> l_off(taps);
    Shape y(g.n);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t b = item / out_sp;
      int64_t q = item % out_sp, o_off = b * g.o_batch;
      for (size_t i = g.n; i-- > 0;) {
        y[i] = q % g.out[i];
        q /= g.out[i];
        o_off += y[i] * g.o_sp[i];
      }
      // Where each tap lands in the (undilated, unpadded) input, or -1.
      for (int64_t t = 0; t < taps; ++t) {
        int64_t off = 0;
        for (size_t i = 0; i < g.n && off >= 0; ++i) {
          const int64_t pos =
              y[i] * p.window_strides[i] + tap_idx[t][i] * p.rhs_dilation[i] - p.padding[i].first;
          const int64_t ld = p.lhs_dilation[i];
          if (pos < 0 || pos % ld != 0 || pos / ld >= g.in[i]) {
            off = -1;
          } else {
            off += (pos / ld) * g.l_sp[i];
          }
        }
        l_off[t] = off;
      }
      for (int64_t o = 0; o < g.out_feat; ++o) {
        const int64_t group = o / per_group_out;
        const int64_t lb = g.bg > 1 ? group * g.out_batch + b : b;
        const int64_t c0 = g.fg > 1 ? group * g.in_feat : 0;
        const T* lp = lhs + lb * g.l_batch + c0 * g.l_feat;
        const T* rp = rhs + o * g.r_out;
        Acc acc = 0;
        for (int64_t t = 0; t < taps; ++t) {
          if (l_off[t] < 0) continue;
          const T* lt = lp + l_off[t];
          const T* rt = rp + r_off[t];
          for (int64_t c = 0; c < g.in_feat; ++c) {
            acc += static_cast<Acc>(lt[c * g.l_feat]) * static_cast<Acc>(rt[c * g.r_in]);
          }
        }
        out[o_off + o * g.o_feat] = convert_value<Acc, U>(acc);
      }
    }
  });
}

void conv_kernel(Call& call) {
  const auto& p = call.params<ConvGeneralDilated>().conv();
  const Aval& oa = call.out_aval();
  void* out = call.out_raw();
  if (numel(oa.shape) == 0) return;
  const ConvOperands ops{call.in_aval(0).shape, call.in_aval(1).shape, oa.shape,
                         call.in_aval(0).dtype, oa.dtype};
  if (onednn_conv(p, ops, call.in_raw(0), call.in_raw(1), out)) return;
  const Geometry g = geometry(p, call.in_aval(0).shape, call.in_aval(1).shape, oa.shape);
  const DType in = call.in_aval(0).dtype;
  dispatch_dtype(in, [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                  std::is_same_v<T, bf16> || std::is_same_v<T, f16>) {
      using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
      dispatch_dtype(oa.dtype, [&]<typename U>() {
        if constexpr (std::is_same_v<U, float> || std::is_same_v<U, double> ||
                      std::is_same_v<U, bf16> || std::is_same_v<U, f16>) {
          conv_loop<T, Acc, U>(p, g, call.in<T>(0), call.in<T>(1), static_cast<U*>(out));
        } else {
          fail("conv_general_dilated", "no CPU kernel for output dtype ", dtype_name(oa.dtype));
        }
      });
    } else {
      fail("conv_general_dilated", "no CPU kernel for operand dtype ", dtype_name(in));
    }
  });
}

}  // namespace

void register_conv_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kConvGeneralDilated)] = &conv_kernel;
}

}  // namespace graft::cpu
