// The complex family's CUDA kernel-table entries (real, imag, complex, conj): each reads its
// avals from the Call and runs its launcher (complex.h) on the call's stream.
#include "core/backend/cuda/kernel.h"
#include "core/backend/cuda/kernels/complex.h"
#include "core/primitives/complex.h"

namespace graft::cuda {
namespace {

template <ComplexPart kPart>
void part_kernel(Call& c) {
  launch_complex_part(kPart, c.in_aval(0).dtype, c.in_raw(0), c.out_raw(0),
                      numel(c.out_aval().shape), c.stream());
}

void complex_kernel(Call& c) {
  launch_make_complex(c.out_aval().dtype, c.in_raw(0), c.in_raw(1), c.out_raw(0),
                      numel(c.out_aval().shape), c.stream());
}

}  // namespace

void register_complex_kernels(KernelTable& table) {
  table[int(PrimitiveId::kReal)] = &part_kernel<ComplexPart::kReal>;
  table[int(PrimitiveId::kImag)] = &part_kernel<ComplexPart::kImag>;
  table[int(PrimitiveId::kConj)] = &part_kernel<ComplexPart::kConj>;
  table[int(PrimitiveId::kComplex)] = &complex_kernel;
}

}  // namespace graft::cuda
