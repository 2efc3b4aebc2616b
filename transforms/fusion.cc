#include "transforms/fusion.h"

#include "core/ir/program.h"
#include "transforms/passes/passes.h"

namespace graft {

std::vector<Array> fuse_elementwise_call(const FlatFn& fn, const std::vector<Array>& args) {
  std::vector<Aval> avals;
  for (const Array& a : args) avals.push_back(a.aval());
  std::optional<Program> p = lower(trace_avals(fn, avals));
  if (!p) return fn(args);  // closes over an outer trace's value
  return run_program(eliminate_dead_code(fuse_elementwise(*p)), args);
}

}  // namespace graft
