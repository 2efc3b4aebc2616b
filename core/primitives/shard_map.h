// shard_map as a primitive (JAX's shard_map_p): a body Program run once per device of a mesh,
// all devices at once, each on its block of the inputs, with the collectives in the body
// exchanging data between them (core/primitives/collective.h). pmap is a shard_map over a
// one-axis mesh whose body drops the mapped dimension (a block of size 1) and puts it back
// on the outputs.
//
// A spec gives, per dimension of an array, the mesh axes it is split over (major first;
// none: not split). An input is cut into blocks by its spec, the block of the device at mesh
// coordinates c taking index c's linearization over the dimension's axes; it varies over
// the axes its spec names and is the same on the others. An output's blocks are put together
// the same way; it must not vary over an axis its spec does not name (it is then taken from
// the devices at coordinate 0 of that axis). Inputs are the body's consts (replicated) and
// the arguments.
//
// Rules (shard_map.cc): jvp and vjp are shard_maps of the body's jvp / vjp (the backward one
// recomputes the forward inside, so nothing crosses between the two), and vmap is a
// shard_map of the batched body with the batch as a new leading dimension, not split. The
// CPU kernel is core/backend/cpu/shard_map_kernel.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/primitives/control.h"
#include "core/sharding/device_put.h"

namespace graft {

class ShardMap : public ControlPrimitive {
 public:
  ShardMap(std::string fn_name, MeshAxes mesh, ProgramPtr body, std::vector<DimAxes> in_specs,
           std::vector<DimAxes> out_specs, std::vector<Aval> in, std::vector<Aval> out);
  std::string params() const override;
  std::vector<SubProgram> sub_programs() const override { return {{"body", bodies()[0]}}; }
  std::shared_ptr<const Primitive> with_sub_programs(std::vector<ProgramPtr> bodies) const override;
  // Its outputs vary over what the body's do, less the mesh's axes (they end here).
  void infer_vma(const std::vector<Aval>& in, std::vector<Aval>& out) const override;
  // The axes its body communicates over, less the mesh's.
  AxisMask axis_names() const override;
  GRAFT_TRANSFORM_RULES;

  const Program& body() const { return *bodies()[0]; }
  const std::string& fn_name() const { return fn_name_; }
  const MeshAxes& mesh() const { return mesh_; }
  AxisMask mesh_mask() const { return mesh_mask_; }
  const std::vector<DimAxes>& in_specs() const { return in_specs_; }
  const std::vector<DimAxes>& out_specs() const { return out_specs_; }

  // In a multi-process run its kernel exchanges data with the other processes: bind runs it
  // at once on values.
  bool exchanges_between_processes() const override;
  // A digest of what it runs (its params and body as printed), worked out once: processes
  // compare it before they exchange data (core/distributed/program_agreement.h).
  uint64_t digest() const;

 private:
  std::string fn_name_;
  MeshAxes mesh_;
  std::vector<DimAxes> in_specs_, out_specs_;
  AxisMask mesh_mask_ = 0;
  struct Digest {
    std::once_flag once;
    uint64_t value = 0;
  };
  std::shared_ptr<Digest> digest_ = std::make_shared<Digest>();
};

namespace detail {

// The out specs, given the body's output avals (pmap resolves out_axes against their ranks).
using OutSpecsFn = std::function<std::vector<DimAxes>(const std::vector<Aval>&)>;

// shard_map of fn at args over `mesh`: in_specs one per argument. Traces fn once on the
// blocks with the mesh's axes bound; errors are "[op] ...". check_vma false (JAX's
// check_vma=False, what jit's partitioner builds): outputs may vary over axes their specs do
// not name; they are taken from the devices at coordinate 0 of those axes.
std::vector<Array> shard_map_flat(const char* op, const std::string& fn_name, const MeshAxes& mesh,
                                  const FlatFn& fn, const std::vector<Array>& args,
                                  const std::vector<DimAxes>& in_specs,
                                  const OutSpecsFn& out_specs, bool check_vma = true);

// pmap of fn at args: in_axes one per argument (normalized, -1 for none); out_axes one for all
// outputs or one per output (negative counts from the end of the output's rank, kNoneAxis for
// none). A shard_map over the one-axis mesh {axis: n}.
inline constexpr int kNoneAxis = -1000000;
std::vector<Array> pmap_flat(const std::string& fn_name, const std::string& axis, const FlatFn& fn,
                             const std::vector<Array>& args, const std::vector<int>& in_axes,
                             const std::vector<int>& out_axes,
                             std::optional<int64_t> axis_size = std::nullopt);

}  // namespace detail
}  // namespace graft
