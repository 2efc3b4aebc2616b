// The CUDA kernels of the index family: gather, the scatters and sort read their primitive's
// parameters and avals from the Call and run their launchers (index_launch.h) on the call's
// stream; scratch (scatter_add's f32 accumulator for f16/bf16, sort's words, permutations
// and CUB storage) comes from Call::scratch, released in stream order after the kernel.
#include <vector>

#include "core/backend/cuda/kernel.h"
#include "core/backend/cuda/kernels/index_launch.h"
#include "core/primitives/index.h"

namespace graft::cuda {
namespace {

void gather_kernel(Call& c) {
  const auto& g = c.params<Gather>();
  const IndexLayout l =
      index_layout(c.in_aval(0).shape, c.in_aval(1).shape, g.axis(), g.batch_dims());
  launch_gather(c.out_aval().dtype, c.in_aval(1).dtype, l, g.mode() == GatherMode::kClip,
                c.in_raw(0), c.in_raw(1), c.out_raw(0), c.stream());
}

void scatter_add_kernel(Call& c) {
  const auto& sa = c.params<ScatterAdd>();
  const IndexLayout l =
      index_layout(c.in_aval(0).shape, c.in_aval(1).shape, sa.axis(), sa.batch_dims());
  const DType dtype = c.out_aval().dtype;
  const size_t bytes = scatter_add_scratch_bytes(dtype, l);
  void* out = c.out_raw(0);
  void* scratch = bytes > 0 ? c.scratch(bytes) : nullptr;
  launch_scatter_add(dtype, c.in_aval(1).dtype, l, c.in_raw(0), c.in_raw(1), c.in_raw(2), out,
                     scratch, c.stream());
}

void scatter_combine_kernel(Call& c) {
  const auto& sc = c.params<ScatterCombine>();
  const IndexLayout l =
      index_layout(c.in_aval(0).shape, c.in_aval(1).shape, sc.axis(), sc.batch_dims());
  const ScatterCombiner how = sc.id() == PrimitiveId::kScatter      ? ScatterCombiner::kSet
                              : sc.id() == PrimitiveId::kScatterMul ? ScatterCombiner::kMul
                              : sc.id() == PrimitiveId::kScatterMin ? ScatterCombiner::kMin
                                                                    : ScatterCombiner::kMax;
  const size_t bytes = scatter_combine_scratch_bytes(how, l);
  void* scratch = bytes > 0 ? c.scratch(bytes) : nullptr;
  launch_scatter_combine(how, c.out_aval().dtype, c.in_aval(1).dtype, l, c.in_raw(0),
                         c.in_raw(1), c.in_raw(2), c.out_raw(0), scratch, c.stream());
}

void sort_kernel(Call& c) {
  const auto& s = c.params<Sort>();
  std::vector<SortOperand> ops;
  std::vector<DType> keys;
  for (int i = 0; i < c.num_inputs(); ++i) {
    ops.push_back({c.in_aval(i).dtype, c.in_raw(i), c.out_raw(i)});
    if (i < s.num_keys()) keys.push_back(c.in_aval(i).dtype);
  }
  const Shape& shape = c.in_aval(0).shape;
  const size_t bytes = sort_scratch_bytes(shape, s.axis(), keys);
  void* scratch = bytes > 0 ? c.scratch(bytes) : nullptr;
  launch_sort(shape, s.axis(), s.num_keys(), ops, scratch, bytes, c.stream());
}

}  // namespace

void register_index_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kGather)] = &gather_kernel;
  table[static_cast<int>(PrimitiveId::kScatterAdd)] = &scatter_add_kernel;
  table[static_cast<int>(PrimitiveId::kSort)] = &sort_kernel;
  for (PrimitiveId id : {PrimitiveId::kScatter, PrimitiveId::kScatterMul, PrimitiveId::kScatterMin,
                         PrimitiveId::kScatterMax}) {
    table[static_cast<int>(id)] = &scatter_combine_kernel;
  }
}

}  // namespace graft::cuda
