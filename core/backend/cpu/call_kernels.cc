// CPU kernel of call primitives: runs the function on the (evaluated) inputs.
#include "core/backend/cpu/kernel.h"
#include "core/error.h"
#include "core/primitives/call.h"

namespace graft::cpu {
namespace {

void call_kernel(Call& c) {
  const auto& p = c.params<CallPrimitive>();
  std::vector<Array> ins;
  for (int i = 0; i < c.num_inputs(); ++i) ins.push_back(c.input(i));
  std::vector<Array> outs = p.fn()(ins);
  if (outs.size() != p.out_avals().size()) {
    fail(p.name(), p.fn_name(), " returned ", outs.size(), " arrays, expected ",
         p.out_avals().size());
  }
  eval(outs);
  for (size_t o = 0; o < outs.size(); ++o) c.set_output(static_cast<int>(o), outs[o].buffer());
}

}  // namespace

void register_call_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kCustomJvpCall)] = &call_kernel;
  table[static_cast<int>(PrimitiveId::kCustomVjpCall)] = &call_kernel;
  table[static_cast<int>(PrimitiveId::kRemat)] = &call_kernel;
  table[static_cast<int>(PrimitiveId::kCheckpointName)] = &call_kernel;
}

}  // namespace graft::cpu
