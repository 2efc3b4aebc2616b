// conv_general_dilated (core/primitives/conv.h) on oneDNN's convolutions, for the cases
// oneDNN takes; conv_kernels.cc runs its direct loop on the others.
//
// Taken: f32 operands with an f32 result, bf16 operands with a bf16 or f32 result (f32
// accumulation, where this CPU has a bf16 convolution); any feature_group_count (oneDNN's
// groups), rhs dilation, strides and padding (negative padding crops: the input is viewed
// from an offset with smaller dims); 1-3 spatial dims; any dimension numbers. Most run on
// oneDNN's convolution_forward; lhs dilation (the input gradient of a strided convolution,
// window strides then 1) runs as convolution_backward_data of the strided convolution, on a
// spatially flipped copy of the kernel; batch groups (the kernel gradient of a grouped
// convolution) as convolution_backward_weights of the grouped one. oneDNN picks the layouts
// it runs fastest; graft's dense row-major buffers, described to oneDNN by strides, are
// reordered into them where they differ (NHWC activations are used in place), or used as
// they are where oneDNN's pick has only its reference loop. Left to the loop: f64, f16,
// lhs dilation with window strides or batch groups, padding beyond what backward data
// expresses, empty operands, and geometries oneDNN has no fast convolution for.
//
// Created primitives are cached per geometry (as onednn_matmul.h's); a cached primitive runs
// with the calling thread's stream and scratchpad (onednn_exec.h), so any number of threads
// may run it at once. Honours set_onednn_enabled() (onednn_matmul.h).
#pragma once

#include <cstdint>
#include <string>

#include "core/dtype/dtype.h"
#include "core/primitives/conv.h"

namespace graft::cpu {

// The operands' and result's shapes and dtypes of one call.
struct ConvOperands {
  Shape lhs, rhs, out;
  DType in = DType::kF32, out_dtype = DType::kF32;
};

// Whether onednn_conv() would run this convolution on oneDNN (creates and caches the
// primitive when needed). For tests: they assert the oneDNN path was taken.
bool conv_uses_onednn(const ConvParams& p, const ConvOperands& o);

// The oneDNN implementation that runs it, with " + reorders" when graft's layouts are
// reordered around it ("" when it runs on the loop). For benchmarks.
std::string onednn_conv_impl(const ConvParams& p, const ConvOperands& o);

// Runs the convolution on oneDNN; false (having written nothing) when it does not fit.
bool onednn_conv(const ConvParams& p, const ConvOperands& o, const void* lhs, const void* rhs,
                 void* out);

// Counters: convolutions run on oneDNN, and primitive-cache hits / misses / entries.
struct ConvCacheStats {
  int64_t runs = 0, hits = 0, misses = 0, size = 0;
};
ConvCacheStats onednn_conv_stats();

}  // namespace graft::cpu
