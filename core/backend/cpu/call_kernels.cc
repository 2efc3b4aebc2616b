// CPU kernels of the call primitives: a custom_jvp_call or custom_vjp_call runs fun (or fwd,
// when its outputs include fwd's residuals) and remat its body, through the executor with a
// plan made once per primitive (run_body.h). checkpoint_name shares its input's buffer.
#include <utility>

#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/run_body.h"
#include "core/error.h"
#include "core/primitives/call.h"

namespace graft::cpu {
namespace {

void run(Call& c, size_t body) {
  const auto& p = c.params<CallPrimitive>();
  Buffers ins;
  ins.reserve(static_cast<size_t>(c.num_inputs()));
  for (int i = 0; i < c.num_inputs(); ++i) ins.push_back(c.in_buffer(i));
  Buffers outs = run_body(p, body, std::move(ins));
  if (outs.size() != p.out_avals().size()) {
    fail(p.name(), p.fn_name(), " returned ", outs.size(), " arrays, expected ",
         p.out_avals().size());
  }
  for (size_t o = 0; o < outs.size(); ++o) c.set_output(static_cast<int>(o), std::move(outs[o]));
}

void custom_jvp_kernel(Call& c) { run(c, 0); }
void custom_vjp_kernel(Call& c) { run(c, c.params<CustomVjpCall>().residual_outputs() ? 1 : 0); }
void remat_kernel(Call& c) { run(c, 0); }
void checkpoint_name_kernel(Call& c) { c.alias(0, 0); }

}  // namespace

void register_call_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kCustomJvpCall)] = &custom_jvp_kernel;
  table[static_cast<int>(PrimitiveId::kCustomVjpCall)] = &custom_vjp_kernel;
  table[static_cast<int>(PrimitiveId::kRemat)] = &remat_kernel;
  table[static_cast<int>(PrimitiveId::kCheckpointName)] = &checkpoint_name_kernel;
}

}  // namespace graft::cpu
