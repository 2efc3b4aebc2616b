// The CPU kernel table: one kernel per primitive in core/primitives/list.h.
#pragma once

#include <memory>
#include <vector>

#include "core/array.h"
#include "core/backend/backend.h"
#include "core/backend/kernel_call.h"
#include "core/ir/primitive.h"

namespace graft::cpu {

// A CPU kernel's call (core/backend/kernel_call.h): outputs in host memory, allocated with
// out<T>(i) or taken over from an input the caller lets it reuse.
class Call : public KernelCall {
 public:
  Call(const Primitive& p, std::shared_ptr<Buffer>* const* inputs, const Aval* const* in_avals,
       int num_inputs, const Aval* const* out_avals, std::shared_ptr<Buffer>* outputs,
       int num_outputs, uint64_t reusable = 0)
      : KernelCall(p, inputs, in_avals, num_inputs, out_avals, outputs, num_outputs),
        reusable_(reusable) {}

  // Output i's buffer, allocated on first use, or taken over from a reusable input of the
  // same aval (see run_kernel; only for kernels that may run in place).
  void* out_raw(int i = 0);
  template <typename T>
  T* out(int i = 0) {
    return static_cast<T*>(out_raw(i));
  }

 private:
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
GRAFT_FAMILY_REGISTRAR(decomp)
GRAFT_FAMILY_REGISTRAR(conv)
GRAFT_FAMILY_REGISTRAR(attention)
GRAFT_FAMILY_REGISTRAR(random)
GRAFT_FAMILY_REGISTRAR(call)
GRAFT_FAMILY_REGISTRAR(control)
GRAFT_FAMILY_REGISTRAR(fusion)
GRAFT_FAMILY_REGISTRAR(debug)
GRAFT_FAMILY_REGISTRAR(callback)
GRAFT_FAMILY_REGISTRAR(collective)
GRAFT_FAMILY_REGISTRAR(complex)
GRAFT_FAMILY_REGISTRAR(fft)
GRAFT_FAMILY_REGISTRAR(eig)
#undef GRAFT_FAMILY_REGISTRAR

// The table, filled once. A null entry means the primitive has no CPU kernel.
const KernelTable& kernels();

// Whether p's kernel may write an output into an input's buffer: pure elementwise loops,
// where output element k depends only on input elements k.
bool runs_in_place(PrimitiveId p);

// Runs primitive `p` on the buffers of `call` and fills every output (kernels that leave an
// output untouched, e.g. zero-sized ones, get a fresh buffer). Bit k of `call`'s reusable
// mask lets an elementwise kernel take over input k's buffer (donated, or dying here) when the
// caller's table holds its only reference.
void run_kernel(const Primitive& p, Call& call);

}  // namespace graft::cpu
