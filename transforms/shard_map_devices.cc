// shard_map over a mesh of GPUs: where its operands go and its outputs stay
// (transforms/shard_map.h).
#include "transforms/shard_map.h"

namespace graft::detail {

std::vector<Array> operands_to_mesh(const Mesh& mesh, const std::vector<Array>& xs) {
  const Device first = mesh.devices()[0];
  std::vector<Array> out;
  for (const Array& x : xs) {
    // Already in device memory (one GPU or sharded): the routing takes it from there.
    const bool moves = x.valid() && !x.is_tracer() && x.buffer()->on_host();
    out.push_back(moves ? device_put(x, first) : x);
  }
  return out;
}

std::vector<Array> outputs_to_mesh(const Mesh& mesh, const std::vector<Array>& outs,
                                   const std::vector<PartitionSpec>& out_specs) {
  std::vector<Array> placed;
  for (size_t o = 0; o < outs.size(); ++o) {
    const Array& y = outs[o];
    if (y.is_tracer()) {
      placed.push_back(y);
      continue;
    }
    const PartitionSpec& spec = out_specs[out_specs.size() == 1 ? 0 : o];
    placed.push_back(device_put(y, NamedSharding(mesh, spec)));
  }
  return placed;
}

}  // namespace graft::detail
