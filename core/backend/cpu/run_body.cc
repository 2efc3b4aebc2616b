#include "core/backend/cpu/run_body.h"

#include <memory>
#include <utility>

#include "core/backend/cpu/executable.h"
#include "core/error.h"

namespace graft::cpu {

Buffers run_body(const ControlPrimitive& p, size_t i, Buffers args, size_t first_donated,
                 InstrRunner run, const void* ctx, const Buffers* dests) {
  const Program& body = *p.bodies()[i];
  const auto* plan = static_cast<const BufferPlan*>(p.backend_data(i, [&] {
    std::vector<bool> donated(body.inputs.size());
    for (size_t j = first_donated; j < donated.size(); ++j) donated[j] = true;
    return std::make_shared<const BufferPlan>(plan_buffers(body, donated));
  }));
  if (args.size() != body.inputs.size()) {
    fail(p.name(), "body ", i, " takes ", body.inputs.size(), " arrays, got ", args.size());
  }
  return execute(body, *plan, args, run, ctx, dests);
}

}  // namespace graft::cpu
