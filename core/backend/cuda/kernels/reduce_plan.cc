// Planning the CUDA reductions (reduce.h) on the host. The shape is collapsed as on the CPU
// (size-1 dims dropped, adjacent kept / reduced dims merged), which leaves one of three
// layouts: the reduced elements of each output contiguous (the last axes: a group of threads
// per output, vector loads), one reduced block with kept dims on both sides (threads across
// the inner columns, coalesced), or alternating blocks (a strided walk). Few outputs over a
// long reduction are split, so the GPU has enough blocks; the partial results go to scratch
// and a second kernel combines them in a fixed order (deterministic, unlike atomics).
#include <algorithm>

#include "core/backend/cuda/kernels/reduce.h"
#include "core/error.h"
#include "core/shape.h"

namespace graft::cuda {
namespace {

// About two waves of 256-thread blocks on an H100 / H200 (132 SMs x 8 resident blocks).
constexpr int64_t kTargetBlocks = 1024;
constexpr int64_t kMinSplit = 4096;  // elements per partial result, at least
constexpr int64_t kMaxSplits = 1024;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Bytes of a partial result: f16 / bf16 accumulate in f32, other dtypes in their own width.
int acc_bytes_of(DType d) {
  return d == DType::kF16 || d == DType::kBF16 ? 4 : static_cast<int>(dtype_size(d));
}

int tpo_for(int64_t n) { return n >= 2048 ? 256 : (n >= 32 ? 32 : 1); }

void plan_splits_rows(ReducePlan& p) {
  const int64_t blocks = ceil_div(p.n_out * p.tpo, 256);
  if (blocks < kTargetBlocks && p.n >= 2 * kMinSplit) {
    p.splits = std::min({ceil_div(kTargetBlocks, blocks), p.n / kMinSplit, kMaxSplits});
  }
}

void plan_cols(ReducePlan& p, int64_t outer, int64_t inner) {
  p.kind = ReducePlan::Kind::kCols;
  p.outer = outer;
  p.inner = inner;
  int bx = 1;
  while (bx < 32 && bx < inner) bx *= 2;
  p.bx = bx;
  const int64_t by = 256 / bx;
  const int64_t blocks = outer * ceil_div(inner, bx);
  const int64_t min_rows = std::max<int64_t>(by * 16, kMinSplit / bx);
  if (blocks < kTargetBlocks && p.n >= 2 * min_rows) {
    p.splits = std::min({ceil_div(kTargetBlocks, blocks), p.n / min_rows, kMaxSplits});
  }
}

void plan_contiguous(ReducePlan& p) {
  p.kind = ReducePlan::Kind::kRows;
  p.contiguous = true;
  p.tpo = tpo_for(p.n);
  plan_splits_rows(p);
}

void finish(ReducePlan& p, int acc_bytes) {
  p.acc_bytes = acc_bytes;
  if (p.splits > 1) p.scratch_bytes = static_cast<size_t>(p.n_out * p.splits) * acc_bytes;
}

}  // namespace

ReducePlan plan_reduce(const std::vector<int64_t>& shape, const std::vector<int>& axes,
                       DType dtype) {
  ReducePlan p;
  p.n_out = 1;
  p.n = 1;
  struct Block {
    int64_t size;
    bool reduced;
  };
  std::vector<Block> blocks;
  for (int i = 0; i < static_cast<int>(shape.size()); ++i) {
    const bool red = std::binary_search(axes.begin(), axes.end(), i);
    (red ? p.n : p.n_out) *= shape[i];
    if (shape[i] == 1) continue;
    if (!blocks.empty() && blocks.back().reduced == red) {
      blocks.back().size *= shape[i];
    } else {
      blocks.push_back({shape[i], red});
    }
  }
  p.acc_bytes = acc_bytes_of(dtype);
  if (p.n_out == 0) {
    p.kind = ReducePlan::Kind::kNone;
    return p;
  }
  if (p.n == 0) {
    p.kind = ReducePlan::Kind::kFill;
    return p;
  }
  int n_red = 0;
  for (const Block& b : blocks) n_red += b.reduced;
  if (n_red == 0) {
    p.kind = ReducePlan::Kind::kCopy;
    return p;
  }
  if (n_red == 1) {
    int64_t outer = 1, inner = 1;
    bool after = false;
    for (const Block& b : blocks) {
      if (b.reduced) {
        after = true;
      } else {
        (after ? inner : outer) *= b.size;
      }
    }
    if (inner == 1) {
      plan_contiguous(p);
    } else {
      plan_cols(p, outer, inner);
    }
    finish(p, p.acc_bytes);
    return p;
  }
  // Alternating blocks: a strided walk.
  p.kind = ReducePlan::Kind::kRows;
  for (const Block& b : blocks) {
    int& nd = b.reduced ? p.red_nd : p.kept_nd;
    if (nd == kMaxReduceDims) {
      fail("reduce", "the CUDA kernel handles at most ", kMaxReduceDims,
           " alternating kept / reduced dims, got shape ", shape_str(shape));
    }
    ++nd;
  }
  // Sizes and element strides, innermost last.
  int ki = p.kept_nd, ri = p.red_nd;
  int64_t stride = 1;
  for (int k = static_cast<int>(blocks.size()) - 1; k >= 0; --k) {
    if (blocks[k].reduced) {
      --ri;
      p.red_size[ri] = blocks[k].size;
      p.red_stride[ri] = stride;
    } else {
      --ki;
      p.kept_size[ki] = blocks[k].size;
      p.kept_stride[ki] = stride;
    }
    stride *= blocks[k].size;
  }
  // Threads along the outputs when the innermost block is kept (coalesced across threads) and
  // there are enough outputs; otherwise a group of threads along the reduced elements.
  p.tpo = !blocks.back().reduced && p.n_out >= 8192 ? 1 : tpo_for(p.n);
  plan_splits_rows(p);
  finish(p, p.acc_bytes);
  return p;
}

ReducePlan plan_arg(const std::vector<int64_t>& shape, int axis) {
  ReducePlan p;
  int64_t outer = 1, inner = 1;
  p.n = 1;
  for (int i = 0; i < static_cast<int>(shape.size()); ++i) {
    if (i < axis) outer *= shape[i];
    if (i == axis) p.n = shape[i];
    if (i > axis) inner *= shape[i];
  }
  p.n_out = outer * inner;
  p.acc_bytes = 16;  // (value, int64 index), 8-byte aligned
  if (p.n_out == 0) return p;
  if (p.n == 0) fail("argmax", "cannot reduce a zero-sized axis");
  if (inner == 1) {
    plan_contiguous(p);
  } else {
    plan_cols(p, outer, inner);
  }
  finish(p, p.acc_bytes);
  return p;
}

CumsumPlan plan_cumsum(const std::vector<int64_t>& shape, int axis, bool reverse, DType dtype) {
  CumsumPlan p;
  p.reverse = reverse;
  for (int i = 0; i < static_cast<int>(shape.size()); ++i) {
    if (i < axis) p.outer *= shape[i];
    if (i == axis) p.n = shape[i];
    if (i > axis) p.inner *= shape[i];
  }
  if (shape.empty()) p.n = 1;  // not reachable through the primitive (it needs an axis)
  p.acc_bytes = acc_bytes_of(dtype);
  const int64_t lines = p.outer * p.inner;
  if (lines == 0 || p.n == 0) return p;
  if (p.inner == 1) {
    // A block per (row, chunk): enough blocks, chunks of at least 8192 elements.
    constexpr int64_t kMinChunk = 8192;
    if (lines < kTargetBlocks && p.n >= 2 * kMinChunk) {
      p.chunks = std::min({ceil_div(kTargetBlocks, lines), p.n / kMinChunk, kMaxSplits});
    }
  } else {
    // A thread per (line, chunk), walking its rows in order: enough threads, >= 64 rows each.
    constexpr int64_t kMinRows = 64, kTargetThreads = kTargetBlocks * 256;
    if (lines < kTargetThreads && p.n >= 2 * kMinRows) {
      p.chunks = std::min({ceil_div(kTargetThreads, lines), p.n / kMinRows, kMaxSplits});
    }
  }
  if (p.chunks > 1) p.scratch_bytes = static_cast<size_t>(lines * p.chunks) * p.acc_bytes;
  return p;
}

}  // namespace graft::cuda
