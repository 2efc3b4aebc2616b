// CUDA kernel of ragged_dot (both modes; see RaggedDot in core/primitives/linalg.h): one
// cuBLASLt GEMM per group (CUDA 13.0's cuBLASLt has no grouped GEMM).
//
// The group sizes live on the device, but the GEMMs' shapes must be known on the host: they
// are copied to the host with a synchronous copy on the call's stream (the one place this
// family waits for the device). They are then clamped like the CPU's (negative -> 0, groups
// cut at row m), so bad sizes never read or write out of bounds. Rows past the last group
// (rows mode) and groups without rows (contract mode) are zeroed.
#include <algorithm>
#include <vector>

#include "core/backend/cuda/kernel.h"
#include "core/backend/cuda/runtime/allocator.h"
#include "core/backend/cuda/runtime/blaslt_matmul.h"
#include "core/backend/cuda/runtime/check.h"
#include "core/primitives/linalg.h"

namespace graft::cuda {
namespace {

struct Group {
  int64_t start, rows;
};

std::vector<Group> clamped_groups(const std::vector<int32_t>& sizes, int64_t m) {
  std::vector<Group> out(sizes.size());
  int64_t s = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t e = std::min(s + std::max<int64_t>(sizes[i], 0), m);
    out[i] = {s, e - s};
    s = e;
  }
  return out;
}

void zero(void* p, int64_t bytes, cudaStream_t stream) {
  if (bytes > 0) check(cudaMemsetAsync(p, 0, bytes, stream), "cudaMemsetAsync");
}

void ragged_dot_kernel(Call& call) {
  const RaggedMode mode = call.params<RaggedDot>().mode();
  const Shape& ls = call.in_aval(0).shape;
  const Shape& rs = call.in_aval(1).shape;
  const int64_t m = ls[0], k = ls[1];
  const int64_t n = mode == RaggedMode::kRaggedRows ? rs[2] : rs[1];
  const int64_t g = call.in_aval(2).shape[0];
  const DType dt = call.in_aval(0).dtype;
  const int64_t es = dtype_size(dt);
  const int64_t out_bytes = numel(call.out_aval().shape) * es;
  if (out_bytes == 0) return;
  char* out = static_cast<char*>(call.out_raw());
  cudaStream_t stream = call.stream();
  std::vector<int32_t> sizes(g);
  copy_to_host_sync(call.device(), sizes.data(), call.in_raw(2), g * sizeof(int32_t), stream);
  const std::vector<Group> groups = clamped_groups(sizes, m);
  const char* lhs = static_cast<const char*>(call.in_raw(0));
  const char* rhs = static_cast<const char*>(call.in_raw(1));

  MatmulDesc desc;
  desc.a_type = desc.b_type = desc.c_type = cuda_data_type(dt);
  if (mode == RaggedMode::kRaggedRows) {  // out rows of group i = lhs rows @ rhs[i]
    if (k == 0) {
      zero(out, out_bytes, stream);
      return;
    }
    int64_t end = 0;
    for (int64_t i = 0; i < g; ++i) {
      const Group& gr = groups[i];
      end = gr.start + gr.rows;
      if (gr.rows == 0) continue;
      desc.m = gr.rows;
      desc.n = n;
      desc.k = k;
      matmul(desc, lhs + gr.start * k * es, rhs + i * k * n * es, out + gr.start * n * es,
             nullptr, call.device(), stream);
    }
    zero(out + end * n * es, (m - end) * n * es, stream);
    return;
  }
  // Contract: out[i] [k, n] = lhs_i^T @ rhs_i, lhs_i stored [rows, k] (so transposed).
  for (int64_t i = 0; i < g; ++i) {
    const Group& gr = groups[i];
    char* o = out + i * k * n * es;
    if (gr.rows == 0) {
      zero(o, k * n * es, stream);
      continue;
    }
    desc.m = k;
    desc.n = n;
    desc.k = gr.rows;
    desc.trans_a = true;
    matmul(desc, lhs + gr.start * k * es, rhs + gr.start * n * es, o, nullptr, call.device(),
           stream);
  }
}

}  // namespace

void register_ragged_dot_kernel(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kRaggedDot)] = &ragged_dot_kernel;
}

}  // namespace graft::cuda
