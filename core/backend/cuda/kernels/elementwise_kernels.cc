// The elementwise family's CUDA kernel-table entries: each reads its operands' avals and
// parameters from the Call and enqueues the launcher of elementwise.h on the call's stream.
// Entries for the Unary / Binary rows are generated from core/primitives/list.h, as the CPU's.
// stop_gradient, bitcast_convert_type and a convert to the same dtype share the input's buffer
// (the CPU does the same), so they launch nothing.
#include "core/backend/cuda/kernel.h"
#include "core/backend/cuda/kernels/elementwise.h"
#include "core/primitives/elementwise.h"

namespace graft::cuda {
namespace {

void unary_kernel(Call& c) {
  const DType dtype = c.in_aval(0).dtype;
  if (!dtype_in_class(primitive_facts(c.prim.id()).dtypes, dtype)) {
    graft::fail(c.prim.name(), "has no CUDA kernel for ", c.in_aval(0).str());
  }
  launch_unary(c.prim.id(), dtype, c.in_raw(0), c.out_raw(0), numel(c.out_aval().shape),
               c.stream());
}

void binary_kernel(Call& c) {
  const DType dtype = c.in_aval(0).dtype;
  if (!dtype_in_class(primitive_facts(c.prim.id()).dtypes, dtype)) {
    graft::fail(c.prim.name(), "has no CUDA kernel for ", c.in_aval(0).str());
  }
  launch_binary(c.prim.id(), dtype, c.in_raw(0), c.in_raw(1), c.out_raw(0),
                numel(c.out_aval().shape), c.stream());
}

void select_kernel(Call& c) {
  launch_select(c.out_aval().dtype, c.in<bool>(0), c.in_raw(1), c.in_raw(2), c.out_raw(0),
                numel(c.out_aval().shape), c.stream());
}

void convert_kernel(Call& c) {
  const DType from = c.in_aval(0).dtype, to = c.out_aval().dtype;
  if (from == to) return c.alias(0, 0);
  launch_convert(from, to, c.in_raw(0), c.out_raw(0), numel(c.out_aval().shape), c.stream());
}

void alias_kernel(Call& c) { c.alias(0, 0); }

}  // namespace

void register_elementwise_kernels(KernelTable& table) {
#define GRAFT_UNARY_KERNEL(name) table[static_cast<int>(PrimitiveId::k##name)] = &unary_kernel;
#define GRAFT_BINARY_KERNEL(name) table[static_cast<int>(PrimitiveId::k##name)] = &binary_kernel;
#define GRAFT_ROW(name, str, family, kind, ...) \
  GRAFT_IF_##kind(GRAFT_UNARY_KERNEL, GRAFT_BINARY_KERNEL, name)
  GRAFT_PRIMITIVES(GRAFT_ROW)
#undef GRAFT_ROW
#undef GRAFT_BINARY_KERNEL
#undef GRAFT_UNARY_KERNEL
  table[static_cast<int>(PrimitiveId::kSelectN)] = &select_kernel;
  table[static_cast<int>(PrimitiveId::kConvertElementType)] = &convert_kernel;
  table[static_cast<int>(PrimitiveId::kBitcastConvertType)] = &alias_kernel;
  table[static_cast<int>(PrimitiveId::kStopGradient)] = &alias_kernel;  // the identity
}

}  // namespace graft::cuda
