// Internals of fused_elementwise's CPU kernel (fusion_kernels.cc): what one step computes on
// a tile of values (fusion_kernels_steps.cc), and the runner of a group over element ranges
// (fused_elementwise's kernel and fused_reduce's, fused_reduce_kernel.cc).
#pragma once

#include <absl/container/inlined_vector.h>

#include <cstdint>
#include <vector>

#include "core/dtype/dtype.h"
#include "core/primitives/fusion.h"

namespace graft::cpu::fusion {

enum class Kind { kF32, kF64, kBool };  // what a slot holds in a tile (f16/bf16: f32)
inline Kind kind_of(DType d) {
  return d == DType::kF64 ? Kind::kF64 : (d == DType::kBool ? Kind::kBool : Kind::kF32);
}

// Evaluates step `s` on `n` elements: ptr[i] points at slot i's values (of kinds[i]), `dst`
// receives the step's values (of `kind`); dst may be one of the step's operands. Tiles start
// at multiples of 16 elements from the array's start and are 64-byte aligned, so vectorized
// paths cover the same elements as the unfused kernels' (and give the same bits).
void run_step(const FusedStep& s, const Kind* kinds, void* const* ptr, void* dst, Kind kind,
              int64_t n);

struct CompiledGroup;

// Runs a group's steps over ranges of its elements: its compiled loop (fusion_codegen.h) on
// whole blocks and the tile interpreter on the rest, or the interpreter alone. The same element
// gets the same bits whichever range it is run in, as long as ranges start at multiples of 16
// elements (the unfused kernels' vector paths cover the same elements).
class GroupRunner {
 public:
  // ins[i]: input i's data; whole_outs[o]: output o's buffer for the whole group (an input it
  // shares memory with, through donation, is then copied tile by tile before being
  // overwritten), or nullptr for an output run() only writes to buffers of its own.
  GroupRunner(const FusedElementwise& f, const void* const* ins, char* const* whole_outs);
  ~GroupRunner();
  GroupRunner(const GroupRunner&) = delete;
  GroupRunner& operator=(const GroupRunner&) = delete;

  // Elements [begin, end), begin a multiple of 16: output o's element begin + j goes to
  // at[o] + j * out_width(o) bytes. Safe to call from several threads on disjoint ranges.
  void run(int64_t begin, int64_t end, char* const* at) const;
  // Bytes per element of output o.
  int64_t out_width(size_t o) const { return out_width_[o]; }

  // How the runner reads input i.
  struct Input {
    const char* data;
    DType dtype;
    int64_t width;
    bool scalar;     // one value for every element
    bool broadcast;  // read at (e / read.div) % read.size (FusedRead), tile by tile
    FusedRead read;
    bool aliased;  // an output took over its buffer: copy each tile before writing it
  };

 private:
  void interpret(int64_t begin, int64_t end, char* const* at, int64_t at_elem) const;

  const FusedElementwise& f_;
  int64_t n_;
  absl::InlinedVector<Kind, 32> kinds_;
  absl::InlinedVector<DType, 32> dtypes_;
  absl::InlinedVector<int, 32> out_of_;  // slot -> output, or -1
  absl::InlinedVector<int64_t, 8> out_width_;
  std::vector<Input> ins_;
  absl::InlinedVector<const void*, 16> in_data_;
  const CompiledGroup* compiled_ = nullptr;
};

}  // namespace graft::cpu::fusion
