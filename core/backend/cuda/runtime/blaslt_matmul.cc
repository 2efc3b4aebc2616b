#include "core/backend/cuda/runtime/blaslt_matmul.h"

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "core/backend/cuda/runtime/allocator.h"
#include "core/backend/cuda/runtime/check.h"
#include "core/backend/cuda/runtime/stream.h"
#include "core/error.h"

namespace graft::cuda {

void check(cublasStatus_t status, std::string_view call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  // cublasLtGetStatusString is cublasGetStatusString's twin in libcublasLt (graft does not
  // link the full cuBLAS).
  fail("cuBLASLt", call, static_cast<long>(status), cublasLtGetStatusString(status));
}

namespace {

// RAII for cuBLASLt's descriptor handles (pointers to opaque structs).
template <typename H, cublasStatus_t (*Destroy)(H)>
struct LtDeleter {
  void operator()(H h) const { Destroy(h); }  // a failed destroy cannot be handled
};
template <typename H, cublasStatus_t (*Destroy)(H)>
using LtPtr = std::unique_ptr<std::remove_pointer_t<H>, LtDeleter<H, Destroy>>;
using OpDesc = LtPtr<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using Layout = LtPtr<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using Preference = LtPtr<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

class LtHandle {
 public:
  explicit LtHandle(int device) {
    DeviceGuard guard(device);
    check(cublasLtCreate(&handle_), "cublasLtCreate");
  }
  ~LtHandle() { cublasLtDestroy(handle_); }
  LtHandle(const LtHandle&) = delete;
  LtHandle& operator=(const LtHandle&) = delete;
  cublasLtHandle_t get() const { return handle_; }

 private:
  cublasLtHandle_t handle_ = nullptr;
};

// Per-process state, leaked on purpose (handles and workspaces must outlive every static
// that might still run a matmul during exit, and CUDA may already be torn down then).
struct State {
  std::mutex mu;
  std::map<int, std::unique_ptr<LtHandle>> handles;
  std::map<std::pair<int, cudaStream_t>, void*> workspaces;
  struct KeyHash {
    size_t operator()(const std::array<int64_t, 24>& k) const {
      size_t h = 1469598103934665603ull;
      for (int64_t v : k) h = (h ^ static_cast<size_t>(v)) * 1099511628211ull;
      return h;
    }
  };
  std::unordered_map<std::array<int64_t, 24>, cublasLtMatmulAlgo_t, KeyHash> algos;
};

State& state() {
  static State* s = new State;
  return *s;
}

cublasLtHandle_t handle(int device) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  auto& h = s.handles[device];
  if (!h) h = std::make_unique<LtHandle>(device);
  return h->get();
}

// The stream's workspace. Reusing one block for every matmul on a stream is safe: the
// stream runs them one after another.
void* workspace(int device, cudaStream_t stream) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  void*& w = s.workspaces[{device, stream}];
  if (w == nullptr) w = allocate_raw(device, kMatmulWorkspaceBytes);
  return w;
}

bool is_fp8(cudaDataType_t t) { return t == CUDA_R_8F_E4M3 || t == CUDA_R_8F_E5M2; }

const char* type_name(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_32F:
      return "f32";
    case CUDA_R_64F:
      return "f64";
    case CUDA_R_16F:
      return "f16";
    case CUDA_R_16BF:
      return "bf16";
    case CUDA_R_8F_E4M3:
      return "e4m3";
    case CUDA_R_8F_E5M2:
      return "e5m2";
    default:
      return "unsupported type";
  }
}

cublasLtEpilogue_t lt_epilogue(Epilogue e) {
  switch (e) {
    case Epilogue::kNone:
      return CUBLASLT_EPILOGUE_DEFAULT;
    case Epilogue::kBias:
      return CUBLASLT_EPILOGUE_BIAS;
    case Epilogue::kRelu:
      return CUBLASLT_EPILOGUE_RELU;
    case Epilogue::kGelu:
      return CUBLASLT_EPILOGUE_GELU;
    case Epilogue::kBiasRelu:
      return CUBLASLT_EPILOGUE_RELU_BIAS;
    case Epilogue::kBiasGelu:
      return CUBLASLT_EPILOGUE_GELU_BIAS;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

bool has_bias(Epilogue e) {
  return e == Epilogue::kBias || e == Epilogue::kBiasRelu || e == Epilogue::kBiasGelu;
}

// The description with kDense resolved, after checking it.
struct Resolved {
  MatmulDesc d;
  int64_t rows_a, cols_a, rows_b, cols_b;  // stored row-major shapes
};

Resolved resolve(const MatmulDesc& in) {
  Resolved r{in, 0, 0, 0, 0};
  MatmulDesc& d = r.d;
  auto bad = [&](const auto&... why) { graft::fail("cuda", "matmul ", describe(in), ": ", why...); };
  if (d.batch < 0 || d.m < 0 || d.n < 0 || d.k < 1) bad("needs batch, m, n >= 0 and k >= 1");
  r.rows_a = d.trans_a ? d.k : d.m;
  r.cols_a = d.trans_a ? d.m : d.k;
  r.rows_b = d.trans_b ? d.n : d.k;
  r.cols_b = d.trans_b ? d.k : d.n;
  if (d.lda == kDense) d.lda = r.cols_a;
  if (d.ldb == kDense) d.ldb = r.cols_b;
  if (d.ldc == kDense) d.ldc = d.n;
  if (d.lda < r.cols_a || d.ldb < r.cols_b || d.ldc < d.n) bad("a leading dim is too small");
  if (d.stride_a == kDense) d.stride_a = r.rows_a * d.lda;
  if (d.stride_b == kDense) d.stride_b = r.rows_b * d.ldb;
  if (d.stride_c == kDense) d.stride_c = d.m * d.ldc;
  if (d.stride_a < 0 || d.stride_b < 0 || d.stride_c < 0) bad("negative batch stride");
  if (is_fp8(d.a_type) || is_fp8(d.b_type)) {
    if (!is_fp8(d.a_type) || !is_fp8(d.b_type)) bad("fp8 needs both operands in fp8");
    if (d.trans_a || !d.trans_b) bad("fp8 needs a as [m, k] and b stored as [n, k] (trans_b)");
  } else if (d.a_type != d.b_type) {
    bad("operands need one dtype");
  }
  if (is_fp8(d.c_type)) bad("fp8 outputs are not supported (they need C and D types apart)");
  if (!has_bias(d.epilogue) && d.bias_type) d.bias_type.reset();
  if (has_bias(d.epilogue) && !d.bias_type) d.bias_type = d.c_type;
  for (cudaDataType_t t : {d.a_type, d.b_type, d.c_type}) {
    if (cuda_type_size(t) == 0) bad("unsupported data type");
  }
  return r;
}

// Largest power of two (<= 256) dividing the address and every batch's offset: cuBLASLt's
// heuristic picks kernels for the alignment it is told, so it must not be told 256 (its
// default) for a pointer into the middle of a buffer.
uint32_t alignment(const void* p, int64_t batch, int64_t stride, cudaDataType_t t) {
  uint64_t bits = reinterpret_cast<uintptr_t>(p) | 256;
  if (batch > 1) bits |= static_cast<uint64_t>(stride * cuda_type_size(t));
  return static_cast<uint32_t>(bits & (~bits + 1));
}

Layout make_layout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                   int64_t stride) {
  cublasLtMatrixLayout_t l = nullptr;
  check(cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld), "cublasLtMatrixLayoutCreate");
  Layout out(l);
  if (batch > 1) {
    int32_t count = static_cast<int32_t>(batch);
    check(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                           sizeof(count)),
          "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)");
    check(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                           sizeof(stride)),
          "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)");
  }
  return out;
}

template <typename T>
void set_attr(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const T& v,
              const char* what) {
  check(cublasLtMatmulDescSetAttribute(d, attr, &v, sizeof(v)), what);
}

}  // namespace

cudaDataType_t cuda_data_type(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return CUDA_R_32F;
    case DType::kF64:
      return CUDA_R_64F;
    case DType::kBF16:
      return CUDA_R_16BF;
    case DType::kF16:
      return CUDA_R_16F;
    default:
      graft::fail("cuda", "cuBLASLt takes no ", dtype_name(dtype), " operands");
  }
}

int64_t cuda_type_size(cudaDataType_t type) {
  switch (type) {
    case CUDA_R_64F:
      return 8;
    case CUDA_R_32F:
      return 4;
    case CUDA_R_16F:
    case CUDA_R_16BF:
      return 2;
    case CUDA_R_8F_E4M3:
    case CUDA_R_8F_E5M2:
      return 1;
    default:
      return 0;
  }
}

std::string describe(const MatmulDesc& d) {
  std::ostringstream os;
  if (d.batch != 1) os << "batch " << d.batch << ", ";
  os << "[" << (d.trans_a ? d.k : d.m) << ", " << (d.trans_a ? d.m : d.k) << "]"
     << (d.trans_a ? "^T" : "") << " @ [" << (d.trans_b ? d.n : d.k) << ", "
     << (d.trans_b ? d.k : d.n) << "]" << (d.trans_b ? "^T" : "") << ", " << type_name(d.a_type)
     << " x " << type_name(d.b_type) << " -> " << type_name(d.c_type);
  if (d.a_type == CUDA_R_32F && d.allow_tf32) os << " (tf32)";
  if (has_bias(d.epilogue)) os << ", bias(" << type_name(d.bias_type.value_or(d.c_type)) << ")";
  if (d.epilogue == Epilogue::kRelu || d.epilogue == Epilogue::kBiasRelu) os << ", relu";
  if (d.epilogue == Epilogue::kGelu || d.epilogue == Epilogue::kBiasGelu) os << ", gelu";
  return os.str();
}

void matmul(const MatmulDesc& desc, const void* a, const void* b, void* c, const void* bias,
            int device, cudaStream_t stream) {
  const Resolved r = resolve(desc);
  const MatmulDesc& d = r.d;
  if (d.batch == 0 || d.m == 0 || d.n == 0) return;
  if (has_bias(d.epilogue) && bias == nullptr) {
    graft::fail("cuda", "matmul ", describe(desc), ": the epilogue needs a bias");
  }
  DeviceGuard guard(device);
  const bool f64 = d.a_type == CUDA_R_64F;
  const cublasComputeType_t compute =
      f64 ? CUBLAS_COMPUTE_64F
          : (d.a_type == CUDA_R_32F && d.allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                    : CUBLAS_COMPUTE_32F);
  const cudaDataType_t scale_type = f64 ? CUDA_R_64F : CUDA_R_32F;

  // The column-major problem (see the header): A' = b, B' = a, D' = c.
  cublasLtMatmulDesc_t op_raw = nullptr;
  check(cublasLtMatmulDescCreate(&op_raw, compute, scale_type), "cublasLtMatmulDescCreate");
  OpDesc op(op_raw);
  const cublasOperation_t ta = d.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = d.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  set_attr(op_raw, CUBLASLT_MATMUL_DESC_TRANSA, ta, "cublasLtMatmulDescSetAttribute(TRANSA)");
  set_attr(op_raw, CUBLASLT_MATMUL_DESC_TRANSB, tb, "cublasLtMatmulDescSetAttribute(TRANSB)");
  set_attr(op_raw, CUBLASLT_MATMUL_DESC_EPILOGUE, lt_epilogue(d.epilogue),
           "cublasLtMatmulDescSetAttribute(EPILOGUE)");
  if (has_bias(d.epilogue)) {
    set_attr(op_raw, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias,
             "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
    const int32_t bias_type = static_cast<int32_t>(*d.bias_type);
    set_attr(op_raw, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, bias_type,
             "cublasLtMatmulDescSetAttribute(BIAS_DATA_TYPE)");
    const int64_t bias_stride = 0;  // one bias for every batch
    set_attr(op_raw, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, bias_stride,
             "cublasLtMatmulDescSetAttribute(BIAS_BATCH_STRIDE)");
  }
  if (d.b_scale != nullptr) {  // cuBLASLt's A is our b
    set_attr(op_raw, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(d.b_scale),
             "cublasLtMatmulDescSetAttribute(A_SCALE_POINTER)");
  }
  if (d.a_scale != nullptr) {
    set_attr(op_raw, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(d.a_scale),
             "cublasLtMatmulDescSetAttribute(B_SCALE_POINTER)");
  }
  // Stored row-major [rows, cols] with leading dim ld is column-major [cols, rows].
  Layout la = make_layout(d.b_type, r.cols_b, r.rows_b, d.ldb, d.batch, d.stride_b);
  Layout lb = make_layout(d.a_type, r.cols_a, r.rows_a, d.lda, d.batch, d.stride_a);
  Layout lc = make_layout(d.c_type, d.n, d.m, d.ldc, d.batch, d.stride_c);

  const uint32_t align_a = alignment(b, d.batch, d.stride_b, d.b_type);
  const uint32_t align_b = alignment(a, d.batch, d.stride_a, d.a_type);
  const uint32_t align_c = alignment(c, d.batch, d.stride_c, d.c_type);
  const uint32_t align_bias = has_bias(d.epilogue) ? alignment(bias, 1, 0, CUDA_R_32F) : 0;
  const std::array<int64_t, 24> key = {
      device, d.batch, d.m, d.n, d.k, d.trans_a, d.trans_b, d.lda, d.ldb, d.ldc, d.stride_a,
      d.stride_b, d.stride_c, d.a_type, d.b_type, d.c_type, d.allow_tf32,
      static_cast<int64_t>(d.epilogue), d.bias_type ? *d.bias_type : -1, align_a, align_b,
      align_c, align_bias, (d.a_scale != nullptr) * 2 + (d.b_scale != nullptr)};

  cublasLtHandle_t h = handle(device);
  void* ws = workspace(device, stream);
  cublasLtMatmulAlgo_t algo;
  bool cached = false;
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.algos.find(key);
    if (it != s.algos.end()) {
      algo = it->second;
      cached = true;
    }
  }
  if (!cached) {
    cublasLtMatmulPreference_t pref_raw = nullptr;
    check(cublasLtMatmulPreferenceCreate(&pref_raw), "cublasLtMatmulPreferenceCreate");
    Preference pref(pref_raw);
    const uint64_t ws_bytes = kMatmulWorkspaceBytes;
    check(cublasLtMatmulPreferenceSetAttribute(pref_raw, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                               &ws_bytes, sizeof(ws_bytes)),
          "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
    const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> aligns[] = {
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align_a},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align_b},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align_c},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align_c}};
    for (const auto& [attr, v] : aligns) {
      check(cublasLtMatmulPreferenceSetAttribute(pref_raw, attr, &v, sizeof(v)),
            "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT)");
    }
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(h, op_raw, la.get(), lb.get(), lc.get(),
                                                       lc.get(), pref_raw, 1, &result, &found);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED || (st == CUBLAS_STATUS_SUCCESS && found == 0)) {
      graft::fail("cuda", "cuBLASLt has no algorithm for matmul ", describe(desc));
    }
    check(st, "cublasLtMatmulAlgoGetHeuristic");
    algo = result.algo;
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.algos.size() > 4096) s.algos.clear();  // shapes are few; never grow without bound
    s.algos[key] = algo;
  }
  const float alpha32 = static_cast<float>(d.alpha), beta32 = static_cast<float>(d.beta);
  const void* alpha = f64 ? static_cast<const void*>(&d.alpha) : &alpha32;
  const void* beta = f64 ? static_cast<const void*>(&d.beta) : &beta32;
  check(cublasLtMatmul(h, op_raw, alpha, b, la.get(), a, lb.get(), beta, c, lc.get(), c, lc.get(),
                       &algo, ws, kMatmulWorkspaceBytes, stream),
        "cublasLtMatmul");
}

}  // namespace graft::cuda
