// CPU kernels of the shape family. Everything but iota is a byte-level copy, so the kernels
// depend on the element size only and go through strided_copy / fill.
#include <algorithm>
#include <cstring>

#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/parallel.h"
#include "core/backend/cpu/strided_copy.h"
#include "core/primitives/shape.h"

namespace graft::cpu {
namespace {

int64_t esize_of(const Aval& a) { return dtype_size(a.dtype); }

const char* byte_ptr(const void* p, int64_t elems, int64_t esize) {
  return static_cast<const char*>(p) + elems * esize;
}
char* byte_ptr(void* p, int64_t elems, int64_t esize) {
  return static_cast<char*>(p) + elems * esize;
}

// Reads scalar integer input i as int64 (start indices of the dynamic slices).
int64_t read_index(Call& c, int i) {
  return dispatch_dtype(c.in_aval(i).dtype, [&]<typename T>() -> int64_t {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<int64_t>(*c.in<T>(i));
    } else {
      fail(c.prim.name(), "start indices must be integers, got ", c.in_aval(i).str());
    }
  });
}

// Start indices from inputs [first, first + rank) as lax.dynamic_slice takes them: a negative
// start counts from the end (plus the dim, once), then it is clamped so a `sizes` block fits.
Shape clamped_starts(Call& c, int first, const Shape& operand, const Shape& sizes) {
  Shape starts(operand.size());
  for (size_t d = 0; d < operand.size(); ++d) {
    int64_t s = read_index(c, first + static_cast<int>(d));
    if (s < 0) s += operand[d];
    starts[d] = std::clamp<int64_t>(s, 0, operand[d] - sizes[d]);
  }
  return starts;
}

int64_t offset_of(const Shape& idx, const Shape& strides) {
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * strides[d];
  return off;
}

void copy_buffer(Call& c, int64_t bytes) {
  const char* s = static_cast<const char*>(c.in_raw(0));
  char* d = static_cast<char*>(c.out_raw(0));
  parallel_for(bytes, 1 << 17, [&](int64_t b, int64_t e) { std::memcpy(d + b, s + b, e - b); });
}

void reshape_kernel(Call& c) { c.alias(0, 0); }

void transpose_kernel(Call& c) {
  const auto& perm = c.params<Transpose>().perm();
  const Shape& out = c.out_aval().shape;
  Shape in_st = row_major_strides(c.in_aval(0).shape), src(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) src[i] = in_st[perm[i]];
  strided_copy(esize_of(c.out_aval()), out, c.in_raw(0), src, c.out_raw(0), row_major_strides(out));
}

void broadcast_in_dim_kernel(Call& c) {
  const auto& p = c.params<BroadcastInDim>();
  const Shape& out = c.out_aval().shape;
  const Shape& in = c.in_aval(0).shape;
  int64_t es = esize_of(c.out_aval());
  if (numel(in) == 1) {  // scalar fill
    fill(es, c.out_raw(0), numel(out), c.in_raw(0));
    return;
  }
  // Dims the operand does not cover (or covers with size 1) read with stride 0; strided_copy
  // turns a leading run of those into row repeats (memcpy) and trailing ones into fills.
  Shape in_st = row_major_strides(in), src(out.size(), 0);
  for (size_t i = 0; i < p.dims().size(); ++i) {
    if (in[i] != 1) src[p.dims()[i]] = in_st[i];
  }
  strided_copy(es, out, c.in_raw(0), src, c.out_raw(0), row_major_strides(out));
}

void slice_kernel(Call& c) {
  const auto& p = c.params<Slice>();
  const Shape& out = c.out_aval().shape;
  Shape in_st = row_major_strides(c.in_aval(0).shape), src(out.size());
  for (size_t d = 0; d < out.size(); ++d) src[d] = in_st[d] * p.strides()[d];
  int64_t es = esize_of(c.out_aval());
  strided_copy(es, out, byte_ptr(c.in_raw(0), offset_of(p.start(), in_st), es), src, c.out_raw(0),
               row_major_strides(out));
}

void dynamic_slice_kernel(Call& c) {
  const Shape& in = c.in_aval(0).shape;
  const Shape& out = c.out_aval().shape;
  Shape starts = clamped_starts(c, 1, in, out);
  Shape in_st = row_major_strides(in);
  int64_t es = esize_of(c.out_aval());
  strided_copy(es, out, byte_ptr(c.in_raw(0), offset_of(starts, in_st), es), in_st, c.out_raw(0),
               row_major_strides(out));
}

void dynamic_update_slice_kernel(Call& c) {
  const Shape& out = c.out_aval().shape;
  const Shape& upd = c.in_aval(1).shape;
  Shape starts = clamped_starts(c, 2, out, upd);
  int64_t es = esize_of(c.out_aval());
  copy_buffer(c, numel(out) * es);
  Shape out_st = row_major_strides(out);
  strided_copy(es, upd, c.in_raw(1), row_major_strides(upd),
               byte_ptr(c.out_raw(0), offset_of(starts, out_st), es), out_st);
}

void concatenate_kernel(Call& c) {
  int axis = c.params<Concatenate>().axis();
  const Shape& out = c.out_aval().shape;
  Shape out_st = row_major_strides(out);
  int64_t es = esize_of(c.out_aval());
  int64_t at = 0;
  for (int i = 0; i < c.num_inputs(); ++i) {
    const Shape& s = c.in_aval(i).shape;
    strided_copy(es, s, c.in_raw(i), row_major_strides(s),
                 byte_ptr(c.out_raw(0), at * out_st[axis], es), out_st);
    at += s[axis];
  }
}

void pad_kernel(Call& c) {
  const PadConfig& cfg = c.params<Pad>().config();
  const Shape& in = c.in_aval(0).shape;
  const Shape& out = c.out_aval().shape;
  int64_t es = esize_of(c.out_aval());
  fill(es, c.out_raw(0), numel(out), c.in_raw(1));
  // Operand element i of dim d lands at lo + i * (interior + 1); keep those inside [0, out).
  Shape first(in.size()), count(in.size()), dst_pos(in.size()), dst_st(in.size());
  Shape out_st = row_major_strides(out);
  for (size_t d = 0; d < in.size(); ++d) {
    int64_t lo = cfg[d][0], step = cfg[d][2] + 1;
    int64_t i0 = lo >= 0 ? 0 : (-lo + step - 1) / step;
    int64_t i1 = out[d] - lo <= 0 ? 0 : std::min(in[d], (out[d] - lo + step - 1) / step);
    first[d] = i0;
    count[d] = std::max<int64_t>(0, i1 - i0);
    dst_pos[d] = lo + i0 * step;
    dst_st[d] = out_st[d] * step;
  }
  if (numel(count) == 0) return;
  Shape in_st = row_major_strides(in);
  strided_copy(es, count, byte_ptr(c.in_raw(0), offset_of(first, in_st), es), in_st,
               byte_ptr(c.out_raw(0), offset_of(dst_pos, out_st), es), dst_st);
}

void rev_kernel(Call& c) {
  const Shape& s = c.out_aval().shape;
  Shape st = row_major_strides(s), src = st, base(s.size(), 0);
  if (numel(s) == 0) return;
  for (int d : c.params<Rev>().dims()) {
    src[d] = -st[d];
    base[d] = s[d] - 1;
  }
  int64_t es = esize_of(c.out_aval());
  strided_copy(es, s, byte_ptr(c.in_raw(0), offset_of(base, st), es), src, c.out_raw(0), st);
}

void iota_kernel(Call& c) {
  const auto& p = c.params<Iota>();
  const Shape& s = p.shape();
  int64_t n = numel(s);
  if (n == 0) return;
  int64_t inner = row_major_strides(s)[p.dimension()];
  int64_t len = s[p.dimension()];
  dispatch_dtype(p.dtype(), [&]<typename T>() {
    T* out = c.out<T>();
    parallel_for(n, 1 << 15, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        int64_t v = (i / inner) % len;
        if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>) {
          out[i] = T(static_cast<float>(v));
        } else {
          out[i] = static_cast<T>(v);
        }
      }
    });
  });
}

}  // namespace

void register_shape_kernels(KernelTable& table) {
  table[int(PrimitiveId::kReshape)] = &reshape_kernel;
  table[int(PrimitiveId::kTranspose)] = &transpose_kernel;
  table[int(PrimitiveId::kBroadcastInDim)] = &broadcast_in_dim_kernel;
  table[int(PrimitiveId::kSlice)] = &slice_kernel;
  table[int(PrimitiveId::kDynamicSlice)] = &dynamic_slice_kernel;
  table[int(PrimitiveId::kDynamicUpdateSlice)] = &dynamic_update_slice_kernel;
  table[int(PrimitiveId::kConcatenate)] = &concatenate_kernel;
  table[int(PrimitiveId::kPad)] = &pad_kernel;
  table[int(PrimitiveId::kRev)] = &rev_kernel;
  table[int(PrimitiveId::kIota)] = &iota_kernel;
}

}  // namespace graft::cpu
