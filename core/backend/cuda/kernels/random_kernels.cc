// The random family's CUDA kernel-table entry: threefry2x32 reads its four u32 operands (a key
// word may be a scalar: rank 0, as the CPU kernel tests it) and writes both outputs.
#include "core/backend/cuda/kernel.h"
#include "core/backend/cuda/kernels/random.h"

namespace graft::cuda {
namespace {

void threefry2x32_kernel(Call& c) {
  const int64_t n = numel(c.out_aval(0).shape);
  uint32_t* y1 = c.out<uint32_t>(0);
  uint32_t* y2 = c.out<uint32_t>(1);
  launch_threefry2x32(c.in<uint32_t>(0), c.in_aval(0).shape.empty(), c.in<uint32_t>(1),
                      c.in_aval(1).shape.empty(), c.in<uint32_t>(2), c.in<uint32_t>(3), y1, y2, n,
                      c.stream());
}

}  // namespace

void register_random_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kThreefry2x32)] = &threefry2x32_kernel;
}

}  // namespace graft::cuda
