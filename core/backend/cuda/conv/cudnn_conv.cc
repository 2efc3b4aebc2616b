#include "core/backend/cuda/conv/cudnn_conv.h"

#include <cudnn_cnn.h>

#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/backend/cuda/attention/cudnn_backend.h"  // check(cudnnStatus_t), cudnn::Handle
#include "core/backend/cuda/runtime/check.h"
#include "core/backend/cuda/runtime/stream.h"
#include "core/error.h"

namespace graft::cuda::conv {
namespace {

template <typename H, cudnnStatus_t (*Destroy)(H)>
struct Deleter {
  void operator()(H h) const { Destroy(h); }  // a failed destroy cannot be handled
};
template <typename H, cudnnStatus_t (*Destroy)(H)>
using Owned = std::unique_ptr<std::remove_pointer_t<H>, Deleter<H, Destroy>>;
using TensorDesc = Owned<cudnnTensorDescriptor_t, cudnnDestroyTensorDescriptor>;
using FilterDesc = Owned<cudnnFilterDescriptor_t, cudnnDestroyFilterDescriptor>;
using ConvDesc = Owned<cudnnConvolutionDescriptor_t, cudnnDestroyConvolutionDescriptor>;

struct Plan {
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;
  cudnnConvolutionFwdAlgo_t algo{};
  size_t workspace = 0;
};

// One handle per device; its plans; runs on it take turns (cuDNN's threading rule).
struct Context {
  cudnn::Handle handle;  // created with the device current
  std::mutex mu;
  std::map<std::string, std::unique_ptr<Plan>> plans;
};

Context& context(int device) {
  static std::mutex mu;
  static auto* all = new std::map<int, std::unique_ptr<Context>>;  // leaked on purpose
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<Context>& c = (*all)[device];
  if (!c) {
    DeviceGuard guard(device);
    c = std::make_unique<Context>();
  }
  return *c;
}

cudnnDataType_t data_type(DType t) {
  switch (t) {
    case DType::kF16:
      return CUDNN_DATA_HALF;
    case DType::kBF16:
      return CUDNN_DATA_BFLOAT16;
    case DType::kF64:
      return CUDNN_DATA_DOUBLE;
    case DType::kF32:
      return CUDNN_DATA_FLOAT;
    default:  // conv_general_dilated takes floating operands only (its shape rule checks)
      graft::fail("conv_general_dilated", "has no cuDNN data type for ", dtype_name(t));
  }
}

int to_int(int64_t v) {
  if (v > std::numeric_limits<int>::max()) {
    graft::fail("conv_general_dilated", "a size of ", v, " is too large for cuDNN");
  }
  return static_cast<int>(v);
}

std::string key_of(const ConvShape& s) {
  std::string k = std::to_string(static_cast<int>(s.type)) + "/" + std::to_string(s.groups);
  const int r = 2 + s.spatial;
  for (int i = 0; i < r; ++i) {
    k += "/" + std::to_string(s.x[i]) + "," + std::to_string(s.w[i]) + "," + std::to_string(s.y[i]);
  }
  for (int i = 0; i < s.spatial; ++i) {
    k += "/" + std::to_string(s.strides[i]) + "," + std::to_string(s.dilations[i]);
  }
  return k;
}

// A dense row-major tensor descriptor of `rank` dims.
TensorDesc tensor(const int64_t* dims, int rank, cudnnDataType_t type) {
  cudnnTensorDescriptor_t raw = nullptr;
  check(cudnnCreateTensorDescriptor(&raw), "cudnnCreateTensorDescriptor");
  TensorDesc d(raw);
  int sizes[5], strides[5];
  int64_t step = 1;
  for (int i = rank; i-- > 0;) {
    sizes[i] = to_int(dims[i]);
    strides[i] = to_int(step);
    step *= dims[i];
  }
  to_int(step);  // cuDNN's tensors index with 32 bits
  check(cudnnSetTensorNdDescriptor(raw, type, rank, sizes, strides), "cudnnSetTensorNdDescriptor");
  return d;
}

std::unique_ptr<Plan> make_plan(cudnnHandle_t handle, const ConvShape& s) {
  auto p = std::make_unique<Plan>();
  const int rank = 2 + s.spatial;
  const cudnnDataType_t type = data_type(s.type);
  const bool half = s.type == DType::kF16 || s.type == DType::kBF16;
  p->x = tensor(s.x, rank, type);
  p->y = tensor(s.y, rank, type);
  {
    cudnnFilterDescriptor_t raw = nullptr;
    check(cudnnCreateFilterDescriptor(&raw), "cudnnCreateFilterDescriptor");
    p->w.reset(raw);
    int dims[5];
    for (int i = 0; i < rank; ++i) dims[i] = to_int(s.w[i]);
    check(cudnnSetFilterNdDescriptor(raw, type, CUDNN_TENSOR_NCHW, rank, dims),
          "cudnnSetFilterNdDescriptor");
  }
  {
    cudnnConvolutionDescriptor_t raw = nullptr;
    check(cudnnCreateConvolutionDescriptor(&raw), "cudnnCreateConvolutionDescriptor");
    p->conv.reset(raw);
    int pads[3] = {0, 0, 0}, strides[3], dilations[3];
    for (int i = 0; i < s.spatial; ++i) {
      strides[i] = to_int(s.strides[i]);
      dilations[i] = to_int(s.dilations[i]);
    }
    const cudnnDataType_t compute = type == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    check(cudnnSetConvolutionNdDescriptor(raw, s.spatial, pads, strides, dilations,
                                          CUDNN_CROSS_CORRELATION, compute),
          "cudnnSetConvolutionNdDescriptor");
    check(cudnnSetConvolutionGroupCount(raw, to_int(s.groups)), "cudnnSetConvolutionGroupCount");
    check(cudnnSetConvolutionMathType(raw, half               ? CUDNN_TENSOR_OP_MATH
                                           : s.type == DType::kF32 ? CUDNN_FMA_MATH
                                                                   : CUDNN_DEFAULT_MATH),
          "cudnnSetConvolutionMathType");
  }
  // The output size cuDNN computes must be the primitive's.
  int out[5];
  check(cudnnGetConvolutionNdForwardOutputDim(p->conv.get(), p->x.get(), p->w.get(), rank, out),
        "cudnnGetConvolutionNdForwardOutputDim");
  for (int i = 0; i < rank; ++i) {
    if (out[i] != s.y[i]) {
      graft::fail("conv_general_dilated", "cuDNN's output dim ", i, " is ", out[i], ", not ",
                  s.y[i], " (internal error of the CUDA lowering)");
    }
  }
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int returned = 0;
  check(cudnnGetConvolutionForwardAlgorithm_v7(handle, p->x.get(), p->w.get(), p->conv.get(),
                                               p->y.get(), CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                               &returned, perf),
        "cudnnGetConvolutionForwardAlgorithm_v7");
  int pick = -1;
  for (int i = 0; i < returned && pick < 0; ++i) {
    if (perf[i].status == CUDNN_STATUS_SUCCESS) pick = i;
  }
  if (pick < 0) {
    graft::fail("conv_general_dilated", "cuDNN has no forward algorithm for this convolution (",
                key_of(s), ")");
  }
  p->algo = perf[pick].algo;
  if (half) {
    check(cudnnSetConvolutionMathType(p->conv.get(), perf[pick].mathType),
          "cudnnSetConvolutionMathType");
  }
  check(cudnnGetConvolutionForwardWorkspaceSize(handle, p->x.get(), p->w.get(), p->conv.get(),
                                                p->y.get(), p->algo, &p->workspace),
        "cudnnGetConvolutionForwardWorkspaceSize");
  return p;
}

}  // namespace

void cudnn_convolve(Call& call, const ConvShape& s, const void* x, const void* w, void* y) {
  Context& c = context(call.device());
  std::lock_guard<std::mutex> lock(c.mu);
  std::unique_ptr<Plan>& plan = c.plans[key_of(s)];
  if (!plan) plan = make_plan(c.handle.get(), s);
  check(cudnnSetStream(c.handle.get(), call.stream()), "cudnnSetStream");
  void* ws = plan->workspace > 0 ? call.scratch(plan->workspace) : nullptr;
  const double one_d = 1, zero_d = 0;
  const float one_f = 1, zero_f = 0;
  const bool f64 = s.type == DType::kF64;
  check(cudnnConvolutionForward(c.handle.get(), f64 ? static_cast<const void*>(&one_d) : &one_f,
                                plan->x.get(), x, plan->w.get(), w, plan->conv.get(), plan->algo,
                                ws, plan->workspace,
                                f64 ? static_cast<const void*>(&zero_d) : &zero_f, plan->y.get(),
                                y),
        "cudnnConvolutionForward");
}

}  // namespace graft::cuda::conv
