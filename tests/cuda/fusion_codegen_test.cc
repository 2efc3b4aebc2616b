// fused_elementwise's CUDA source (core/backend/cuda/fusion), no GPU needed: the source of
// groups built as jit builds them (fusion_test_groups.h) has what it must (golden substrings),
// every kFuse row of core/primitives/list.h has a source on every dtype the CPU fusion accepts
// (a new fusible primitive without one fails here), errors name the op; with --config=cuda
// every emitted kernel compiles with NVRTC to sm_90 CUBIN (NVRTC needs no GPU), the compile
// cache compiles a source once per architecture, and unknown architectures get PTX.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/backend/cuda/fusion/cuda_source.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/primitives/elementwise.h"
#include "gtest/gtest.h"
#include "tests/cuda/fusion_test_groups.h"
#ifdef GRAFT_CUDA
#include "core/backend/cuda/fusion/nvrtc_compile.h"
#endif

namespace graft::fusion_test {
namespace {

namespace cf = cuda::fusion;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(FusionCudaSource, KernelHasItsParametersLoadsStepsAndStores) {
  const std::string src = cf::cuda_source(*mixed_group());
  EXPECT_TRUE(has(src,
                  "extern \"C\" __global__ void graft_fused_elementwise(long long n, "
                  "const unsigned short* in0, const float* in1, const unsigned char* in2, "
                  "const unsigned short* in3, float* out0, unsigned short* out1, "
                  "unsigned char* out2, unsigned short* out3)"))
      << src;
  EXPECT_TRUE(has(src, "const float s1 = in1[0];")) << src;  // the scalar, once
  EXPECT_TRUE(has(src, "const float v0 = g_from_bf16(in0[i]);")) << src;
  EXPECT_TRUE(has(src, "const bool v2 = (in2[i] != 0);")) << src;
  EXPECT_TRUE(has(src, "const float v3 = g_from_f16(in3[i]);")) << src;
  EXPECT_TRUE(has(src, "i += stride")) << src;  // grid-stride loop
  EXPECT_TRUE(has(src, "(v2 ? ")) << src;       // select_n(p, f, t) = p ? t : f
  // 16-bit steps carry f32 (core/primitives/fusion.h): no rounding between steps, one on store.
  EXPECT_FALSE(has(src, "g_round_bf16(g_add(")) << src;
  EXPECT_FALSE(has(src, "g_round_f16(g_mul(")) << src;
  EXPECT_TRUE(has(src, "out1[i] = g_bf16_bits(g_round_bf16(")) << src;
  EXPECT_TRUE(has(src, "out2[i] = (unsigned char)")) << src;
  EXPECT_TRUE(has(src, "out3[i] = g_to_f16(")) << src;
  EXPECT_TRUE(has(src, "g_exp(")) << src;
  EXPECT_TRUE(has(src, "GRAFT_FN float g_exp(float x) { return expf(x); }")) << src;
  for (const char* fast : {"__expf(", "__logf(", "__sinf(", "__fdividef(", "__powf("}) {
    EXPECT_FALSE(has(src, fast)) << "a fast-math intrinsic: " << fast;
  }
  // Every load comes before the first store: outputs may share an input's buffer.
  EXPECT_LT(src.rfind("in3[i]"), src.find("out0[i] ="));
}

TEST(FusionCudaSource, EveryFusibleOpOnEveryDtypeTheCpuFuses) {
  for (P op : fusible_ops()) {
    EXPECT_TRUE(cf::has_cuda_source(op)) << name(op);
    int dtypes = 0;
    for (DType d : kFusible) {
      if (!accepts(dtype_class(op), d)) continue;
      ++dtypes;
      std::string src;
      try {
        src = cf::cuda_source(*ops_group(d, {op}));
      } catch (const Error& e) {
        ADD_FAILURE() << name(op) << " on " << dtype_name(d) << ": " << e.what();
        continue;
      }
      const std::string call = std::string("g_") + name(op) + "(v0";
      EXPECT_TRUE(has(src, call)) << name(op) << " " << dtype_name(d) << "\n" << src;
    }
    EXPECT_GT(dtypes, 0) << name(op) << " is fusible on no dtype";
  }
  for (int i = 0; i < kNumPrimitives; ++i) {  // select_n and convert_element_type
    if (kPrimitiveFacts[i].has(kFuse)) {
      EXPECT_TRUE(cf::has_cuda_source(static_cast<P>(i))) << kPrimitiveNames[i];
    }
  }
  EXPECT_FALSE(cf::has_cuda_source(P::kShiftLeft));  // not fusible
}

// Excess precision (core/primitives/fusion.h, as the CPU): f16 / bf16 steps are carried in
// f32, with no rounding between them, and rounded once as the output is stored.
TEST(FusionCudaSource, HalfStepsCarryF32AndRoundOnStore) {
  auto fn = [](const std::vector<Array>& in) {
    return std::vector<Array>{apply_op(P::kAdd, {apply_op(P::kMul, {in[0], in[1]}), in[0]})};
  };
  for (DType d : {DType::kBF16, DType::kF16, DType::kF32}) {
    const std::string src =
        cf::cuda_source(*group(fn, {Aval{{8}, d, false}, Aval{{8}, d, false}}, {8}));
    EXPECT_TRUE(has(src, "float v2 = g_mul(v0, v1);")) << src;
    EXPECT_TRUE(has(src, "float v3 = g_add(v2, v0);")) << src;
    const std::string store = d == DType::kBF16  ? "out0[i] = g_bf16_bits(g_round_bf16(v3));"
                              : d == DType::kF16 ? "out0[i] = g_to_f16(v3);"
                                                 : "out0[i] = v3;";
    EXPECT_TRUE(has(src, store)) << src;
  }
}

TEST(FusionCudaSource, ConvertsFollowXlaAndScalarsOfJitGroupsLoadOnce) {
  const std::string f32 = cf::cuda_source(*converts_group(DType::kF32));
  EXPECT_TRUE(has(f32, "float v1 = g_round_bf16(v0);")) << f32;  // f32 -> bf16: a rounding
  EXPECT_TRUE(has(f32, "float v2 = g_round_f16(v0);")) << f32;
  EXPECT_TRUE(has(f32, "double v3 = (double)(v0);")) << f32;
  EXPECT_TRUE(has(f32, "bool v4 = g_to_bool(v0);")) << f32;
  const std::string i32 = cf::cuda_source(integer_spec(DType::kI32));
  EXPECT_TRUE(has(i32, "int v")) << i32;
  EXPECT_TRUE(has(i32, "= g_saturate<int>(v2);")) << i32;
  EXPECT_TRUE(has(i32, "g_div(v0, v1)")) << i32;
  // jit's group: the constants 1.5 and 0.5 became scalar inputs, read once before the loop.
  Group g = jit_group(DType::kF32);
  ASSERT_NE(g, nullptr);
  const std::string src = cf::cuda_source(*g);
  int scalars = 0;
  for (size_t i = 0; i < g->in_avals().size(); ++i) {
    if (!g->in_avals()[i].shape.empty()) continue;
    ++scalars;
    const std::string s = "s" + std::to_string(i);
    EXPECT_TRUE(has(src, "const float " + s + " = in" + std::to_string(i) + "[0];")) << src;
    EXPECT_TRUE(has(src, " = " + s + ";")) << src;
  }
  EXPECT_EQ(scalars, 2) << src;
}

// Inputs the group broadcasts from smaller arrays (core/primitives/fusion.h's FusedRead) are
// read in place at (i / div) % size, the others at i; the reads are part of the structure key.
TEST(FusionCudaSource, BroadcastInputsAreReadInPlace) {
  const Shape s{4, 6, 64};
  auto body = [&](const std::vector<Array>& in) {
    return std::vector<Array>{exp(in[0]) * broadcast_in_dim(in[1], s, {0, 1}) +
                              broadcast_in_dim(in[2], s, {2})};
  };
  Group g = group(body,
                  {Aval{s, DType::kF32, false}, Aval{{4, 6}, DType::kF32, false},
                   Aval{{64}, DType::kF32, false}},
                  s);
  const std::string src = cf::cuda_source(*g);
  EXPECT_TRUE(has(src, "in0[i]")) << src;
  EXPECT_TRUE(has(src, "in1[(i / 64LL) % 24LL]")) << src;
  EXPECT_TRUE(has(src, "in2[(i / 1LL) % 64LL]")) << src;
  Group full = group(
      [](const std::vector<Array>& in) { return std::vector<Array>{exp(in[0]) * in[1] + in[2]}; },
      {Aval{s, DType::kF32, false}, Aval{s, DType::kF32, false}, Aval{s, DType::kF32, false}}, s);
  EXPECT_NE(cf::structure_key(*g), cf::structure_key(*full));
}

void expect_error(const GroupSpec& g, const std::string& part) {
  try {
    cf::cuda_source(g);
    ADD_FAILURE() << "accepted; wanted an error with " << part;
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("[cuda] fused_elementwise: ", 0), 0u) << what;
    EXPECT_TRUE(has(what, part)) << what;
  }
}

TEST(FusionCudaSource, UnsupportedStepsAreClearErrors) {
  const DType i32 = DType::kI32, f32 = DType::kF32;
  expect_error({{i32, i32}, {false, false}, {{P::kShiftLeft, {0, 1}, i32}}, {2}},
               "no CUDA source for shift_left");
  expect_error({{i32}, {false}, {{P::kExp, {0}, i32}}, {1}}, "no CUDA source for exp on i32");
  expect_error({{f32}, {false}, {{P::kReduceSum, {0}, f32}}, {1}}, "no CUDA source for reduce_sum");
  expect_error({{f32, i32}, {false, false}, {{P::kAdd, {0, 1}, f32}}, {2}}, "different dtypes");
  expect_error({{f32}, {false}, {{P::kLt, {0, 0}, f32}}, {1}}, "gives bool, not f32");
  expect_error({{f32, f32}, {false, false}, {{P::kSelectN, {0, 1, 1}, f32}}, {2}},
               "bool predicate");
  expect_error({{f32}, {false}, {{P::kNeg, {1}, f32}}, {1}}, "reads slot 1");
  expect_error({{f32}, {false}, {{P::kNeg, {0}, f32}}, {0}}, "no step's result");
}

TEST(FusionCudaSource, EqualStructuresHaveEqualKeys) {
  EXPECT_EQ(cf::structure_key(*mixed_group()), cf::structure_key(*mixed_group()));
  EXPECT_NE(cf::structure_key(*ops_group(DType::kF32, {P::kSin})),
            cf::structure_key(*ops_group(DType::kF32, {P::kCos})));
  EXPECT_NE(cf::structure_key(*ops_group(DType::kF32, {P::kSin})),
            cf::structure_key(*ops_group(DType::kBF16, {P::kSin})));
}

TEST(FusionCudaSource, EveryTestGroupEmits) {
  for (const auto& [what, spec] : all_groups()) {
    std::string src;
    EXPECT_NO_THROW(src = cf::cuda_source(spec)) << what;
    EXPECT_TRUE(has(src, "__global__ void graft_fused_elementwise(long long n")) << what;
    for (size_t o = 0; o < spec.outputs.size(); ++o) {
      EXPECT_TRUE(has(src, str_cat("    out", o, "[i] = "))) << what;
    }
  }
}

#ifdef GRAFT_CUDA
// ---- NVRTC (no GPU needed) ----

TEST(FusionNvrtc, EveryEmittedKernelCompilesToSm90Cubin) {
  for (const auto& [what, spec] : all_groups()) {
    std::shared_ptr<const cf::DeviceCode> code;
    try {
      code = cf::compile(cf::cuda_source(spec), 90);
    } catch (const Error& e) {
      ADD_FAILURE() << what << ": " << e.what();
      continue;
    }
    EXPECT_TRUE(code->cubin) << what;
    EXPECT_EQ(code->arch, 90) << what;
    ASSERT_GT(code->image.size(), 4u) << what;
    EXPECT_EQ(code->image.compare(0, 4,
                                  "\x7f"
                                  "ELF"),
              0)
        << what;
  }
}

TEST(FusionNvrtc, EachSourceCompilesOncePerArchitectureAcrossThreads) {
  // A source no other test compiles (a comment makes it new).
  const std::string src = cf::cuda_source(*ops_group(DType::kF32, {P::kAdd})) + "// once\n";
  const size_t before = cf::compiled_count();
  std::vector<std::shared_ptr<const cf::DeviceCode>> got(4);
  std::vector<std::thread> threads;
  for (auto& g : got) threads.emplace_back([&g, &src] { g = cf::compile(src, 90); });
  for (auto& t : threads) t.join();
  for (const auto& g : got) EXPECT_EQ(g, got[0]);
  EXPECT_EQ(cf::compiled_count(), before + 1);
  EXPECT_EQ(cf::compile(src, 90), got[0]);
  EXPECT_NE(cf::compile(src, 80), got[0]);  // another architecture: another compile
  EXPECT_EQ(cf::compiled_count(), before + 2);
}

TEST(FusionNvrtc, ArchitecturesNvrtcDoesNotKnowGetPtx) {
  const std::string src = cf::cuda_source(*ops_group(DType::kF32, {P::kMul}));
  auto code = cf::compile(src, 91);  // no sm_91: PTX for compute_90, which the driver JITs
  EXPECT_FALSE(code->cubin);
  EXPECT_EQ(code->arch, 90);
  EXPECT_TRUE(has(code->image, ".entry graft_fused_elementwise")) << code->image;
  EXPECT_EQ(code->image.back(), '\0');
  EXPECT_THROW(cf::compile(src, 10), Error);  // nothing that old
}

TEST(FusionNvrtc, RejectedSourceReportsTheLog) {
  try {
    cf::compile("extern \"C\" __global__ void k() { undeclared_name(); }", 90);
    ADD_FAILURE() << "compiled";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("[cuda] nvrtcCompileProgram(--gpu-architecture=sm_90): NVRTC error", 0),
              0u)
        << what;
    EXPECT_TRUE(has(what, "undeclared_name")) << what;
  }
}
#else
TEST(FusionNvrtc, SkippedWithoutCuda) { GTEST_SKIP() << "built without CUDA (--config=cuda)"; }
#endif

}  // namespace
}  // namespace graft::fusion_test
