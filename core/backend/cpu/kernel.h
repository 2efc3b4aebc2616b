// The CPU kernel table: one kernel per primitive in core/primitives/list.h.
#pragma once

#include <memory>
#include <vector>

#include "core/array.h"
#include "core/backend/backend.h"
#include "core/primitive.h"

namespace graft::cpu {

// What a kernel sees: its primitive (with parameters), its input buffers with their avals,
// the output avals, and the output buffers it must produce (allocate with out<T>(i), or share
// an input's with alias()). The executor (executable.h) builds one per instruction over its
// table of buffers; the pointers stay valid for the kernel's run.
class Call {
 public:
  // `outputs`: one (null) slot per output, num_outputs of them (out_avals holds as many).
  Call(const Primitive& p, std::shared_ptr<Buffer>* const* inputs, const Aval* const* in_avals,
       int num_inputs, const Aval* const* out_avals, std::shared_ptr<Buffer>* outputs,
       int num_outputs, uint64_t reusable = 0)
      : prim(p),
        inputs_(inputs),
        in_avals_(in_avals),
        out_avals_(out_avals),
        num_inputs_(num_inputs),
        num_outputs_(num_outputs),
        outputs_(outputs),
        reusable_(reusable) {}

  const Primitive& prim;
  template <typename P>
  const P& params() const {
    return static_cast<const P&>(prim);
  }

  int num_inputs() const { return num_inputs_; }
  const Aval& in_aval(int i) const { return *in_avals_[i]; }
  const Aval& out_aval(int i = 0) const { return *out_avals_[i]; }
  const std::shared_ptr<Buffer>& in_buffer(int i) const { return *inputs_[i]; }
  // Input i as an (evaluated) array, for kernels that run programs or format values.
  Array input(int i) const;
  const void* in_raw(int i) const { return (*inputs_[i])->data(); }
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
  int num_outputs() const { return num_outputs_; }
  bool has_output(int o) const { return outputs_[o] != nullptr; }
  // Output `o` is `buffer` (computed elsewhere, e.g. by a body's program).
  void set_output(int o, std::shared_ptr<Buffer> buffer) { outputs_[o] = std::move(buffer); }
  // Output `o` shares input `i`'s buffer (same bytes; e.g. reshape).
  void alias(int o, int i) { outputs_[o] = *inputs_[i]; }

 private:
  std::shared_ptr<Buffer>* const* inputs_;
  const Aval* const* in_avals_;
  const Aval* const* out_avals_;
  int num_inputs_;
  int num_outputs_;
  std::shared_ptr<Buffer>* outputs_;
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
GRAFT_FAMILY_REGISTRAR(attention)
GRAFT_FAMILY_REGISTRAR(random)
GRAFT_FAMILY_REGISTRAR(call)
GRAFT_FAMILY_REGISTRAR(control)
GRAFT_FAMILY_REGISTRAR(fusion)
GRAFT_FAMILY_REGISTRAR(debug)
GRAFT_FAMILY_REGISTRAR(collective)
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
