// with_sharding_constraint: the primitive's shape rule, transform rules and sharding rule.
#include "absl/strings/str_cat.h"
#include "core/error.h"
#include "core/interpreters/spmd.h"
#include "core/sharding/device_put.h"
#include "core/primitives/collective.h"

namespace graft {

std::vector<Aval> ShardingConstraint::infer(const std::vector<Aval>& in) const {
  if (in.size() != 1) fail("with_sharding_constraint", "takes one array, got ", in.size());
  sharding_.check("with_sharding_constraint", in[0].shape);
  return {in[0]};
}

std::string ShardingConstraint::params() const { return "sharding=" + sharding_.str(); }

bool ShardingConstraint::same_params(const Primitive& o) const {
  return o.id() == id() && static_cast<const ShardingConstraint&>(o).sharding_ == sharding_;
}

std::vector<Array> ShardingConstraint::jvp(const std::vector<Array>&,
                                           const std::vector<Array>& tangents,
                                           const std::vector<Array>&) const {
  if (!tangents[0].valid()) return {Array()};
  return {with_sharding_constraint(tangents[0], sharding_)};
}

std::vector<Array> ShardingConstraint::vjp(const std::vector<Array>&, const std::vector<Array>&,
                                           const std::vector<Array>& cts) const {
  if (!cts[0].valid()) return {Array()};
  return {with_sharding_constraint(cts[0], sharding_)};
}

// The batch dimension is inserted unsplit (as JAX's rule does).
Batched ShardingConstraint::vmap(const std::vector<Array>& args,
                                 const std::vector<int>& dims) const {
  if (dims[0] < 0) return {{bind1(std::make_shared<const ShardingConstraint>(sharding_), args)}, {-1}};
  std::vector<DimSplit> spec = sharding_.spec().dims();
  if (static_cast<size_t>(dims[0]) <= spec.size()) spec.insert(spec.begin() + dims[0], none);
  NamedSharding s(sharding_.mesh(), PartitionSpec(spec));
  return {{bind1(std::make_shared<const ShardingConstraint>(s), args)}, {dims[0]}};
}

std::optional<spmd::Plan> ShardingConstraint::sharding_rule(const spmd::RuleArgs& a) const {
  spmd::Plan p;
  DimAxes d;
  if (!sharding_.is_single_device()) {
    if (!(detail::mesh_axes(sharding_.mesh()) == a.mesh)) {
      fail("with_sharding_constraint", "the constraint's mesh ", sharding_.mesh().str(),
           " is not the one the program is partitioned over");
    }
    d = detail::dim_axes("with_sharding_constraint", sharding_.mesh(), sharding_.spec());
  }
  p.inputs = {d};
  p.outputs = {d};
  p.identity = true;
  return p;
}

Array with_sharding_constraint(const Array& x, const NamedSharding& sharding) {
  if (!x.valid()) fail("with_sharding_constraint", "got an empty Array handle");
  return bind1(std::make_shared<const ShardingConstraint>(sharding), {x});
}

}  // namespace graft
