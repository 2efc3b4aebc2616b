// The CUDA kernels of the shape family: each reads its primitive's parameters and the avals
// from the Call and runs its launcher (shape_launch.h) on the call's stream. reshape aliases
// its input (row-major buffers: same bytes, new dims), as on the CPU.
#include <vector>

#include "core/backend/cuda/kernel.h"
#include "core/backend/cuda/kernels/shape_launch.h"
#include "core/primitives/shape.h"

namespace graft::cuda {
namespace {

int64_t esize(const Call& c) { return dtype_size(c.out_aval().dtype); }

std::vector<StartIndex> starts_from(const Call& c, int first) {
  std::vector<StartIndex> starts;
  for (int i = first; i < c.num_inputs(); ++i) starts.push_back({c.in_raw(i), c.in_aval(i).dtype});
  return starts;
}

void reshape_kernel(Call& c) { c.alias(0, 0); }

void transpose_kernel(Call& c) {
  launch_transpose(esize(c), c.in_aval(0).shape, c.params<Transpose>().perm(), c.in_raw(0),
                   c.out_raw(0), c.stream());
}

void broadcast_in_dim_kernel(Call& c) {
  const auto& p = c.params<BroadcastInDim>();
  launch_broadcast_in_dim(esize(c), c.in_aval(0).shape, c.out_aval().shape, p.dims(),
                          c.in_raw(0), c.out_raw(0), c.stream());
}

void slice_kernel(Call& c) {
  const auto& p = c.params<Slice>();
  launch_slice(esize(c), c.in_aval(0).shape, p.start(), p.limit(), p.strides(), c.in_raw(0),
               c.out_raw(0), c.stream());
}

void dynamic_slice_kernel(Call& c) {
  launch_dynamic_slice(esize(c), c.in_aval(0).shape, c.out_aval().shape, c.in_raw(0),
                       starts_from(c, 1), c.out_raw(0), c.stream());
}

void dynamic_update_slice_kernel(Call& c) {
  launch_dynamic_update_slice(esize(c), c.out_aval().shape, c.in_aval(1).shape, c.in_raw(0),
                              c.in_raw(1), starts_from(c, 2), c.out_raw(0), c.stream());
}

void concatenate_kernel(Call& c) {
  std::vector<Shape> shapes;
  std::vector<const void*> xs;
  for (int i = 0; i < c.num_inputs(); ++i) {
    shapes.push_back(c.in_aval(i).shape);
    xs.push_back(c.in_raw(i));
  }
  launch_concatenate(esize(c), shapes, xs, c.params<Concatenate>().axis(), c.out_raw(0),
                     c.stream());
}

void pad_kernel(Call& c) {
  launch_pad(esize(c), c.in_aval(0).shape, c.params<Pad>().config(), c.in_raw(0), c.in_raw(1),
             c.out_raw(0), c.stream());
}

void rev_kernel(Call& c) {
  launch_rev(esize(c), c.out_aval().shape, c.params<Rev>().dims(), c.in_raw(0), c.out_raw(0),
             c.stream());
}

void iota_kernel(Call& c) {
  const auto& p = c.params<Iota>();
  launch_iota(p.dtype(), p.shape(), p.dimension(), c.out_raw(0), c.stream());
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

}  // namespace graft::cuda
