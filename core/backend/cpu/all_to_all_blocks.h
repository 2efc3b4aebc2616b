// How all_to_all moves blocks, shared by the CPU's and the CUDA backend's kernels: member r's
// output block q is member q's input block r along the split dimension, placed at block q
// along the concat dimension (non-tiled: the index r of the split dimension and q of the
// concat one, each dimension dropped). Each block is one strided copy of shape `block`.
#pragma once

#include <cstdint>

#include "core/primitives/collective.h"
#include "core/shape.h"

namespace graft::cpu {

struct AllToAllBlocks {
  Shape block;                     // one block's shape
  Shape src_strides, dst_strides;  // element strides of a block in the input, in the output
  int64_t src_step = 0;            // element offset of block p in the input: p * src_step
  int64_t dst_step = 0;            // of block q in the output: q * dst_step
};

inline AllToAllBlocks all_to_all_blocks(const AllToAll& p, int n, const Shape& in_shape,
                                        const Shape& out_shape) {
  const int split = p.split(), concat = p.concat();
  const Shape in_strides = row_major_strides(in_shape), out_strides = row_major_strides(out_shape);
  AllToAllBlocks b;
  if (p.tiled()) {
    b.block = in_shape;
    b.block[split] /= n;
    b.src_strides = in_strides;
    b.dst_strides = out_strides;
    b.src_step = b.block[split] * in_strides[split];
    b.dst_step = out_shape[concat] / n * out_strides[concat];
    return b;
  }
  for (size_t d = 0; d < in_shape.size(); ++d) {
    if (static_cast<int>(d) == split) continue;
    b.block.push_back(in_shape[d]);
    b.src_strides.push_back(in_strides[d]);
  }
  for (size_t d = 0; d < out_shape.size(); ++d) {
    if (static_cast<int>(d) != concat) b.dst_strides.push_back(out_strides[d]);
  }
  b.src_step = in_strides[split];
  b.dst_step = out_strides[concat];
  return b;
}

}  // namespace graft::cpu
