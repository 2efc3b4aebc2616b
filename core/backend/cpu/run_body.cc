#include "core/backend/cpu/run_body.h"

#include <memory>

#include "core/backend/cpu/executable.h"

namespace graft::cpu {

std::vector<Array> run_body(const ControlPrimitive& p, size_t i, const std::vector<Array>& args) {
  const Program& body = *p.bodies()[i];
  const auto* plan = static_cast<const BufferPlan*>(
      p.backend_data(i, [&] { return std::make_shared<const BufferPlan>(plan_buffers(body)); }));
  return execute(body, args, plan);
}

}  // namespace graft::cpu
