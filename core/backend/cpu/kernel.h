// The CPU kernel table: one kernel per primitive in core/primitives/list.h.
#pragma once

#include <memory>
#include <vector>

#include "core/array.h"
#include "core/primitive.h"

namespace graft::cpu {

// What a kernel sees: its primitive (with parameters), evaluated inputs, output avals, and
// the output buffers it must produce (allocate with out<T>(i), or share an input's with
// alias()).
class Call {
 public:
  Call(const Primitive& p, const std::vector<Array>& inputs, const std::vector<Aval>& avals,
       std::vector<std::shared_ptr<Buffer>>& outputs, uint64_t reusable = 0)
      : prim(p), inputs_(inputs), avals_(avals), outputs_(outputs), reusable_(reusable) {}

  const Primitive& prim;
  template <typename P>
  const P& params() const {
    return static_cast<const P&>(prim);
  }

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  const Aval& in_aval(int i) const { return inputs_[i].aval(); }
  const Array& input(int i) const { return inputs_[i]; }
  const Aval& out_aval(int i = 0) const { return avals_[i]; }
  const void* in_raw(int i) const {
    return inputs_[i].node()->buffers[inputs_[i].output_index()]->data();
  }
  template <typename T>
  const T* in(int i) const {
    return static_cast<const T*>(in_raw(i));
  }
  // Output i's buffer, allocated on first use, or taken over from a reusable input of the
  // same aval (see run_kernel; only for kernels that may run in place).
  void* out_raw(int i = 0);
  template <typename T>
  T* out(int i = 0) {
    return static_cast<T*>(out_raw(i));
  }
  // Output `o` is `buffer` (computed elsewhere, e.g. by a call primitive's function).
  void set_output(int o, std::shared_ptr<Buffer> buffer) { outputs_[o] = std::move(buffer); }
  // Output `o` shares input `i`'s buffer (same bytes; e.g. reshape).
  void alias(int o, int i) { outputs_[o] = inputs_[i].node()->buffers[inputs_[i].output_index()]; }

 private:
  const std::vector<Array>& inputs_;
  const std::vector<Aval>& avals_;
  std::vector<std::shared_ptr<Buffer>>& outputs_;
  uint64_t reusable_;
};

using Kernel = void (*)(Call& call);
using KernelTable = Kernel[kNumPrimitives];

// Each family registers its kernels (core/backend/cpu/<family>_kernels.cc).
#define GRAFT_FAMILY_REGISTRAR(family) void register_##family##_kernels(KernelTable& table);
GRAFT_FAMILY_REGISTRAR(elementwise)
GRAFT_FAMILY_REGISTRAR(reduce)
GRAFT_FAMILY_REGISTRAR(shape)
GRAFT_FAMILY_REGISTRAR(index)
GRAFT_FAMILY_REGISTRAR(linalg)
GRAFT_FAMILY_REGISTRAR(random)
GRAFT_FAMILY_REGISTRAR(call)
GRAFT_FAMILY_REGISTRAR(control)
GRAFT_FAMILY_REGISTRAR(fusion)
GRAFT_FAMILY_REGISTRAR(debug)
#undef GRAFT_FAMILY_REGISTRAR

// The table, filled once. A null entry means the primitive has no CPU kernel.
const KernelTable& kernels();

// Whether p's kernel may write an output into an input's buffer: pure elementwise loops,
// where output element k depends only on input elements k.
bool runs_in_place(PrimitiveId p);

// Runs n's primitive on its (evaluated) inputs and stores n's output buffers. Bit k of
// `reusable_inputs`: the executor allows the kernel to take over input k's buffer for an
// output of the same aval (the input is donated, or this is its last use); elementwise
// kernels then compute in place.
void run_kernel(Node& n, uint64_t reusable_inputs = 0);

}  // namespace graft::cpu
