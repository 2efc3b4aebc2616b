// Running jit's dot + bias + relu / gelu chains as one cuBLASLt GEMM with an epilogue
// (core/backend/epilogue/matmul_epilogue.h finds them) inside the executor (execute.cc),
// without rewriting the program: the chain's instructions keep their places and the buffer
// plan is untouched. The dot stashes its operands, the bias broadcast stashes its vector, the
// add before an activation only allocates, and the chain's last instruction runs the GEMM
// (linalg/dot_epilogue.h) into its own output. The other outputs of the chain are allocated
// but never written: the matcher only takes chains whose values nothing else reads.
// Built only with --config=cuda.
#pragma once

#include <memory>
#include <vector>

#include "core/backend/epilogue/matmul_epilogue.h"
#include "core/buffer.h"
#include "core/ir/program.h"

namespace graft::cuda {

// Per instruction of one program: its part in a matched chain (computed once per program).
struct EpiloguePlan {
  enum class Role { kNone, kDot, kBias, kAbsorbed, kResult };
  struct Part {
    Role role = Role::kNone;
    int match = -1;
  };
  std::vector<MatmulEpilogue> matches;
  std::vector<Part> parts;
};

// The program's matches cuBLASLt takes (f32, f16 or bf16; no empty contraction).
EpiloguePlan plan_epilogues(const Program& p);

// One run's stashed operands, per match.
struct EpilogueStash {
  struct Operands {
    std::shared_ptr<Buffer> a, b, bias;
  };
  std::vector<Operands> of;
};

}  // namespace graft::cuda
