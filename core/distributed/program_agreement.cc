#include "core/distributed/program_agreement.h"

#include <string>

#include "core/device/device.h"
#include "core/distributed/agreement.h"
#include "core/error.h"
#include "core/ir/digest.h"
#include "core/ir/program.h"

namespace graft::distributed {

void check_processes_agree(const ShardMap& p, const std::vector<Aval>& in) {
  if (process_count() == 1) return;
  uint64_t d = p.digest();
  for (const Aval& a : in) d = fnv1a64(a.str() + ";", d);
  auto facts = [&] {
    std::vector<Fact> f = {{"the mesh and specs", p.params()},
                           {"the number of inputs", std::to_string(in.size())}};
    for (size_t i = 0; i < in.size(); ++i) f.push_back({"input " + std::to_string(i), in[i].str()});
    f.push_back({"the body", print_program(p.body())});
    return f;
  };
  if (auto why = disagreement(p.name().data(), d, facts)) fail(p.name(), *why);
}

}  // namespace graft::distributed
