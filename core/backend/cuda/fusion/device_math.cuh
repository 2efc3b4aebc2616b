// Transcendental ops of fused_elementwise's CUDA kernels (device_exact.cuh has the exact
// ones): CUDA's accurate libdevice functions (no __expf-style intrinsics; NVRTC compiles
// without fast math), so results are within a few ulp of graft's CPU (which uses Eigen's and
// XLA's algorithms), not bit-equal. As on the CPU, the f32 forms of tan, atan, asin, acos,
// sinh, cosh, asinh, acosh and atanh evaluate the f64 function and round once.
// Device-only text (it calls libdevice); the including text defines GRAFT_FN.

GRAFT_FN float g_exp(float x) { return expf(x); }
GRAFT_FN double g_exp(double x) { return exp(x); }
GRAFT_FN float g_expm1(float x) { return expm1f(x); }
GRAFT_FN double g_expm1(double x) { return expm1(x); }
GRAFT_FN float g_log(float x) { return logf(x); }
GRAFT_FN double g_log(double x) { return log(x); }
GRAFT_FN float g_log1p(float x) { return log1pf(x); }
GRAFT_FN double g_log1p(double x) { return log1p(x); }
GRAFT_FN float g_sin(float x) { return sinf(x); }
GRAFT_FN double g_sin(double x) { return sin(x); }
GRAFT_FN float g_cos(float x) { return cosf(x); }
GRAFT_FN double g_cos(double x) { return cos(x); }
GRAFT_FN float g_tanh(float x) { return tanhf(x); }
GRAFT_FN double g_tanh(double x) { return tanh(x); }
// 1 / (1 + exp(-x)): exp overflows to inf for x < -88.7 and the result is then 0.
GRAFT_FN float g_logistic(float x) { return 1.0f / (1.0f + expf(-x)); }
GRAFT_FN double g_logistic(double x) { return 1.0 / (1.0 + exp(-x)); }
GRAFT_FN float g_erf(float x) { return erff(x); }
GRAFT_FN double g_erf(double x) { return erf(x); }
GRAFT_FN float g_erf_inv(float x) { return erfinvf(x); }
GRAFT_FN double g_erf_inv(double x) { return erfinv(x); }
GRAFT_FN float g_pow(float a, float b) { return powf(a, b); }
GRAFT_FN double g_pow(double a, double b) { return pow(a, b); }

#define GRAFT_VIA_F64(name, fn)                                       \
  GRAFT_FN float g_##name(float x) { return (float)fn((double)x); } \
  GRAFT_FN double g_##name(double x) { return fn(x); }
GRAFT_VIA_F64(tan, tan)
GRAFT_VIA_F64(atan, atan)
GRAFT_VIA_F64(asin, asin)
GRAFT_VIA_F64(acos, acos)
GRAFT_VIA_F64(sinh, sinh)
GRAFT_VIA_F64(cosh, cosh)
GRAFT_VIA_F64(asinh, asinh)
GRAFT_VIA_F64(acosh, acosh)
GRAFT_VIA_F64(atanh, atanh)
#undef GRAFT_VIA_F64
