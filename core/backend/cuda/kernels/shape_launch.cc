// The shape family's launchers: each turns its primitive's parameters into one or more
// strided copies, as core/backend/cpu/shape_kernels.cc does on the CPU (same stride
// arithmetic, so both backends agree on every edge case: empty blocks, negative padding,
// broadcast size-1 dims).
#include "core/backend/cuda/kernels/shape_launch.h"

#include <algorithm>

#include "core/backend/cuda/kernels/strided.h"
#include "core/backend/cuda/runtime/check.h"
#include "core/error.h"

namespace graft::cuda {
namespace {

const char* at(const void* p, int64_t elems, int64_t esize) {
  return static_cast<const char*>(p) + elems * esize;
}
char* at(void* p, int64_t elems, int64_t esize) { return static_cast<char*>(p) + elems * esize; }

int64_t offset_of(const Shape& idx, const Shape& strides) {
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * strides[d];
  return off;
}

// The DeviceStarts of a block of `sizes` inside `dims` (laid out with `strides`).
DeviceStarts device_starts(const std::vector<StartIndex>& starts, const Shape& dims,
                           const Shape& sizes, const Shape& strides) {
  if (starts.size() != dims.size()) {
    graft::fail("dynamic_slice", "needs one start index per dim: ", starts.size(), " for rank ",
         dims.size());
  }
  if (dims.size() > static_cast<size_t>(kMaxCopyRank)) {
    graft::fail("dynamic_slice", "rank ", dims.size(), " is above the CUDA kernel's ", kMaxCopyRank);
  }
  DeviceStarts st;
  st.rank = static_cast<int>(dims.size());
  for (int d = 0; d < st.rank; ++d) {
    if (!is_integral(starts[d].dtype)) {  // strided.cu reads integer starts only
      graft::fail("dynamic_slice", "needs integer start indices, got ", dtype_name(starts[d].dtype));
    }
    st.index[d] = starts[d].ptr;
    st.dtype[d] = starts[d].dtype;
    st.dim[d] = dims[d];
    st.size[d] = sizes[d];
    st.stride[d] = strides[d];
  }
  return st;
}

}  // namespace

void launch_transpose(int64_t esize, const Shape& in, const std::vector<int>& perm,
                      const void* x, void* out, cudaStream_t stream) {
  Shape in_st = row_major_strides(in), src(perm.size()), out_shape(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    src[i] = in_st[perm[i]];
    out_shape[i] = in[perm[i]];
  }
  strided_copy(esize, out_shape, x, src, out, row_major_strides(out_shape), stream);
}

void launch_broadcast_in_dim(int64_t esize, const Shape& in, const Shape& out_shape,
                             const std::vector<int>& dims, const void* x, void* out,
                             cudaStream_t stream) {
  if (numel(in) == 1) {  // a scalar fill
    fill(esize, out, numel(out_shape), x, stream);
    return;
  }
  // Dims the operand does not cover (or covers with size 1) read with stride 0.
  Shape in_st = row_major_strides(in), src(out_shape.size(), 0);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (in[i] != 1) src[dims[i]] = in_st[i];
  }
  strided_copy(esize, out_shape, x, src, out, row_major_strides(out_shape), stream);
}

void launch_slice(int64_t esize, const Shape& in, const Shape& start, const Shape& limit,
                  const Shape& strides, const void* x, void* out, cudaStream_t stream) {
  Shape in_st = row_major_strides(in), src(in.size()), out_shape(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t step = strides.empty() ? 1 : strides[d];
    out_shape[d] = limit[d] <= start[d] ? 0 : (limit[d] - start[d] + step - 1) / step;
    src[d] = in_st[d] * step;
  }
  if (numel(out_shape) == 0) return;
  strided_copy(esize, out_shape, at(x, offset_of(start, in_st), esize), src, out,
               row_major_strides(out_shape), stream);
}

void launch_rev(int64_t esize, const Shape& shape, const std::vector<int>& dims, const void* x,
                void* out, cudaStream_t stream) {
  if (numel(shape) == 0) return;
  Shape st = row_major_strides(shape), src = st, base(shape.size(), 0);
  for (int d : dims) {
    src[d] = -st[d];
    base[d] = shape[d] - 1;
  }
  strided_copy(esize, shape, at(x, offset_of(base, st), esize), src, out, st, stream);
}

void launch_concatenate(int64_t esize, const std::vector<Shape>& ins,
                        const std::vector<const void*>& xs, int axis, void* out,
                        cudaStream_t stream) {
  if (ins.empty()) return;
  Shape out_shape = ins[0];
  out_shape[axis] = 0;
  for (const Shape& s : ins) out_shape[axis] += s[axis];
  const Shape out_st = row_major_strides(out_shape);
  int64_t pos = 0;
  for (size_t i = 0; i < ins.size(); ++i) {
    strided_copy(esize, ins[i], xs[i], row_major_strides(ins[i]),
                 at(out, pos * out_st[axis], esize), out_st, stream);
    pos += ins[i][axis];
  }
}

void launch_pad(int64_t esize, const Shape& in, const CudaPadConfig& cfg, const void* x,
                const void* value, void* out, cudaStream_t stream) {
  Shape out_shape(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t core = in[d] == 0 ? 0 : in[d] + (in[d] - 1) * cfg[d][2];
    out_shape[d] = cfg[d][0] + cfg[d][1] + core;
  }
  const int64_t total = numel(out_shape);
  if (total == 0) return;
  fill(esize, out, total, value, stream);
  // Operand element i of dim d lands at lo + i * (interior + 1); keep those inside [0, out).
  Shape first(in.size()), count(in.size()), dst_pos(in.size()), dst_st(in.size());
  const Shape out_st = row_major_strides(out_shape);
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t lo = cfg[d][0], step = cfg[d][2] + 1;
    const int64_t i0 = lo >= 0 ? 0 : (-lo + step - 1) / step;
    const int64_t i1 =
        out_shape[d] - lo <= 0 ? 0 : std::min(in[d], (out_shape[d] - lo + step - 1) / step);
    first[d] = i0;
    count[d] = std::max<int64_t>(0, i1 - i0);
    dst_pos[d] = lo + i0 * step;
    dst_st[d] = out_st[d] * step;
  }
  if (numel(count) == 0) return;
  const Shape in_st = row_major_strides(in);
  strided_copy(esize, count, at(x, offset_of(first, in_st), esize), in_st,
               at(out, offset_of(dst_pos, out_st), esize), dst_st, stream);
}

void launch_dynamic_slice(int64_t esize, const Shape& in, const Shape& sizes, const void* x,
                          const std::vector<StartIndex>& starts, void* out,
                          cudaStream_t stream) {
  if (numel(sizes) == 0) return;
  const Shape in_st = row_major_strides(in);
  const DeviceStarts st = device_starts(starts, in, sizes, in_st);
  strided_copy(esize, sizes, x, in_st, out, row_major_strides(sizes), stream, &st,
               StartsSide::kSource);
}

void launch_dynamic_update_slice(int64_t esize, const Shape& operand, const Shape& upd,
                                 const void* x, const void* update,
                                 const std::vector<StartIndex>& starts, void* out,
                                 cudaStream_t stream) {
  const int64_t total = numel(operand);
  if (total == 0) return;
  if (out != x) {
    check(cudaMemcpyAsync(out, x, static_cast<size_t>(total * esize), cudaMemcpyDeviceToDevice,
                          stream),
          "cudaMemcpyAsync (dynamic_update_slice)");
  }
  if (numel(upd) == 0) return;
  const Shape out_st = row_major_strides(operand);
  const DeviceStarts st = device_starts(starts, operand, upd, out_st);
  strided_copy(esize, upd, update, row_major_strides(upd), out, out_st, stream, &st,
               StartsSide::kDestination);
}

}  // namespace graft::cuda
