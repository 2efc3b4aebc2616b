// launch_reduce (reduce.h): the plan's trivial kinds (no outputs, the identity for an empty
// reduction, a copy when only size-1 axes are reduced) and reduce_sum / reduce_prod; max, min,
// and, or are in reduce_extrema.cu (a second file, so nvcc's work splits over two processes).
// Signed integers sum and multiply as the unsigned type of their width: the same bits, with
// defined wrap-around, as the CPU's unsigned accumulators.
#include <cstring>
#include <limits>

#include "core/backend/cuda/kernels/reduce_device.h"

namespace graft::cuda {
namespace {

using red::Op;

template <typename U>
__global__ void fill_kernel(U* out, int64_t n, U value) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = value;
  }
}

// The identity of `op` as a value of storage type T, on the host.
template <typename T>
T identity_of(PrimitiveId op) {
  if constexpr (std::is_same_v<T, bool>) {
    return op == PrimitiveId::kReduceProd || op == PrimitiveId::kReduceMin ||
           op == PrimitiveId::kReduceAnd;
  } else {
    using C = ew::compute_t<T>;
    constexpr bool kFloat = std::is_floating_point_v<C>;
    C v = C(0);
    switch (op) {
      case PrimitiveId::kReduceProd:
        v = C(1);
        break;
      case PrimitiveId::kReduceMax:
        v = kFloat ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::lowest();
        break;
      case PrimitiveId::kReduceMin:
        v = kFloat ? std::numeric_limits<C>::infinity() : std::numeric_limits<C>::max();
        break;
      case PrimitiveId::kReduceAnd:
        if constexpr (!kFloat) v = static_cast<C>(~C(0));
        break;
      case PrimitiveId::kReduceSum:
      case PrimitiveId::kReduceOr:
        break;
      default:  // launch_reduce admits the six reductions only (accepted)
        graft::fail(kPrimitiveNames[static_cast<int>(op)], "is not a reduction");
    }
    return T(v);
  }
}

template <typename T>
void fill_identity(PrimitiveId op, void* out, int64_t n, cudaStream_t stream) {
  using U = std::conditional_t<
      sizeof(T) == 1, uint8_t,
      std::conditional_t<sizeof(T) == 2, uint16_t,
                         std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
  const T v = identity_of<T>(op);
  U bits;
  std::memcpy(&bits, &v, sizeof(U));
  fill_kernel<<<red::grid_for((n + 255) / 256), 256, 0, stream>>>(static_cast<U*>(out), n, bits);
  check(cudaGetLastError(), "reduction identity fill launch");
}

template <Op kOp>
void run_sum_prod(DType dtype, const ReducePlan& p, const void* x, void* out, void* scratch,
                  cudaStream_t stream) {
  auto go = [&]<typename T>() { red::run(red::ValueR<kOp, T>{}, p, x, out, scratch, stream); };
  switch (dtype) {
    case DType::kU8:
    case DType::kI8:  // integer sums wrap: computed on the unsigned bits
      return go.template operator()<uint8_t>();
    case DType::kU16:
    case DType::kI16:
      return go.template operator()<uint16_t>();
    case DType::kU32:
    case DType::kI32:
      return go.template operator()<uint32_t>();
    case DType::kI64:
    case DType::kU64:
      return go.template operator()<uint64_t>();
    case DType::kF16:
      return go.template operator()<f16>();
    case DType::kBF16:
      return go.template operator()<bf16>();
    case DType::kF32:
      return go.template operator()<float>();
    case DType::kF64:
      return go.template operator()<double>();
    case DType::kBool:
    case DType::kC64:
    case DType::kC128:
    case DType::kF8E4M3FN:
    case DType::kF8E5M2:
      break;
  }
  graft::fail(kPrimitiveNames[static_cast<int>(kOp == Op::kSum ? PrimitiveId::kReduceSum
                                                               : PrimitiveId::kReduceProd)],
              "has no CUDA kernel for ", dtype_name(dtype));
}

// The op / dtype pairs with a kernel: the real dtypes, as the CPU's (complex and fp8 operands
// never reach a reduction: bind() rejects them).
bool accepted(PrimitiveId op, DType d) {
  if (is_complex(d) || is_float8(d)) return false;
  switch (op) {
    case PrimitiveId::kReduceSum:
    case PrimitiveId::kReduceProd:
      return d != DType::kBool;
    case PrimitiveId::kReduceMax:
    case PrimitiveId::kReduceMin:
      return true;
    case PrimitiveId::kReduceAnd:
    case PrimitiveId::kReduceOr:
      return d == DType::kBool || is_integral(d);
    default:
      return false;
  }
}

}  // namespace

void launch_reduce(PrimitiveId op, DType dtype, const ReducePlan& plan, const void* x, void* out,
                   void* scratch, cudaStream_t stream) {
  if (!accepted(op, dtype)) {
    graft::fail(kPrimitiveNames[static_cast<int>(op)], "has no CUDA kernel for ",
                dtype_name(dtype));
  }
  switch (plan.kind) {
    case ReducePlan::Kind::kNone:
      return;
    case ReducePlan::Kind::kFill:
      return dispatch_dtype(dtype,
                            [&]<typename T>() { fill_identity<T>(op, out, plan.n_out, stream); });
    case ReducePlan::Kind::kCopy:
      if (out != x) {
        check(cudaMemcpyAsync(out, x, static_cast<size_t>(plan.n_out) * dtype_size(dtype),
                              cudaMemcpyDeviceToDevice, stream),
              "cudaMemcpyAsync (reduction over size-1 axes)");
      }
      return;
    case ReducePlan::Kind::kRows:
    case ReducePlan::Kind::kCols:
      break;
  }
  if (op == PrimitiveId::kReduceSum)
    return run_sum_prod<Op::kSum>(dtype, plan, x, out, scratch, stream);
  if (op == PrimitiveId::kReduceProd)
    return run_sum_prod<Op::kProd>(dtype, plan, x, out, scratch, stream);
  red::launch_extrema(op, dtype, plan, x, out, scratch, stream);
}

}  // namespace graft::cuda
