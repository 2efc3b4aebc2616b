// dot_general's CUDA kernel with a cuBLASLt epilogue finishing the GEMM (bias and / or relu or
// gelu), for the dot + bias + activation chains jit's programs hold (matched by
// core/backend/epilogue/matmul_epilogue.h, run by execute.cc). `call` carries the
// dot_general (its params and operands) and the output slot of the chain's last instruction;
// `bias` (device memory, one element per output column, the output's dtype) may be null.
// The operands and the output must share one dtype of f32, f16 or bf16 and have no batch
// dims (what the matcher takes and execute.cc keeps); else graft::Error "[dot_general] ...".
// Built only with --config=cuda.
#pragma once

#include "core/backend/cuda/kernel.h"
#include "core/backend/epilogue/matmul_epilogue.h"

namespace graft::cuda {

void dot_general_epilogue(Call& call, const void* bias, MatmulEpilogue::Activation activation);

}  // namespace graft::cuda
