// Collective primitives: communication across the members of named mapped axes (pmap,
// shard_map, vmap with an axis_name), as jax.lax's psum, pmax, pmin, all_gather,
// psum_scatter, all_to_all, ppermute, axis_index and pvary.
//
// Each holds its axis names with their sizes, read from the axis environment (core/sharding/axis.h)
// when the public op binds it, so its shape rule needs nothing else. Semantics, per member:
//   psum / pmax / pmin   x -> the sum / max / min over the members; the result does not vary
//                        over those axes (Aval::vma loses them).
//   all_gather           x -> the members' x stacked along a new axis `axis` (tiled:
//                        concatenated along `axis`).
//   psum_scatter         x (dimension `dim` of size n, tiled: n * k) -> block `me` of the sum
//                        over the members (that dimension removed, tiled: of size k).
//   all_to_all           x (dimension split of size n, tiled: n * k) -> the split blocks
//                        exchanged: block j goes to member j, which stacks what it receives
//                        along concat (tiled: concatenates).
//   ppermute             x -> the x of the member that `perm` maps onto this one (zeros if
//                        none does).
//   axis_index           -> this member's index (i32).
//   pvary                x -> x, now typed as varying over the axes (a no-op on values; its
//                        transpose is psum).
// The public ops (core/lax/parallel.cc) insert pvary for an operand that does not vary
// over the axis yet (so psum of an unvarying x is n * x, and its gradient n), as JAX does.
// Transforms (collective_rules.cc) follow JAX's shard_map semantics: the transpose of psum
// is pvary (the identity: the gradient of psum(x) is 1 per member, not n), of pvary psum,
// of all_gather psum_scatter, of psum_scatter all_gather, of all_to_all the inverse
// all_to_all, of ppermute the inverse permutation. The CPU kernels (backend/cpu) exchange
// buffers between the devices of a shard_map (or pmap) through core/distributed.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/primitive.h"
#include "core/sharding/device_put.h"

namespace graft {

class Collective : public Primitive {
 public:
  Collective(PrimitiveId id, std::vector<std::string> axes, std::vector<int64_t> sizes);
  const std::vector<std::string>& axes() const { return axes_; }
  const std::vector<int64_t>& sizes() const { return sizes_; }
  int64_t group_size() const;  // the product of the sizes: how many members take part
  AxisMask mask() const { return mask_; }
  AxisMask axis_names() const override { return mask_; }
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  // Output i varies over what the inputs do, plus the axes (every collective but the
  // all-reduces gives each member a different result).
  void infer_vma(const std::vector<Aval>& in, std::vector<Aval>& out) const override;
  // The axis the vmap being interpreted maps (batching.h), if this collective names it; -1
  // otherwise. Rules use it to decide between reducing over the batch and passing it along.
  int batch_axis_position() const;
  // The same collective without axis k (after vmap resolved it over the batch).
  std::vector<std::string> axes_without(int k) const;
  std::vector<int64_t> sizes_without(int k) const;

 private:
  std::vector<std::string> axes_;
  std::vector<int64_t> sizes_;
  AxisMask mask_;
};

// psum, pmax, pmin (by id). Numeric operands (pmax / pmin: and bool).
class AllReduce : public Collective {
 public:
  using Collective::Collective;
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  void infer_vma(const std::vector<Aval>& in, std::vector<Aval>& out) const override;
  GRAFT_TRANSFORM_RULES;
};

class Pvary : public Collective {
 public:
  Pvary(std::vector<std::string> axes, std::vector<int64_t> sizes)
      : Collective(PrimitiveId::kPvary, std::move(axes), std::move(sizes)) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override { return in; }
  Cost cost(const std::vector<Aval>&, const std::vector<Aval>&) const override { return {}; }
  GRAFT_TRANSFORM_RULES;
};

// A collective over one axis with a dimension parameter and a tiled flag: all_gather (the
// gathered axis) and psum_scatter (the scatter dimension).
class DimCollective : public Collective {
 public:
  DimCollective(PrimitiveId id, std::string axis, int64_t size, int dim, bool tiled)
      : Collective(id, {std::move(axis)}, {size}), dim_(dim), tiled_(tiled) {}
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  int dim() const { return dim_; }
  bool tiled() const { return tiled_; }

 private:
  int dim_;
  bool tiled_;
};

class AllGather : public DimCollective {
 public:
  AllGather(std::string axis, int64_t size, int dim, bool tiled)
      : DimCollective(PrimitiveId::kAllGather, std::move(axis), size, dim, tiled) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  GRAFT_TRANSFORM_RULES;
};

class PsumScatter : public DimCollective {
 public:
  PsumScatter(std::string axis, int64_t size, int dim, bool tiled)
      : DimCollective(PrimitiveId::kPsumScatter, std::move(axis), size, dim, tiled) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  GRAFT_TRANSFORM_RULES;
};

class AllToAll : public Collective {
 public:
  AllToAll(std::string axis, int64_t size, int split, int concat, bool tiled)
      : Collective(PrimitiveId::kAllToAll, {std::move(axis)}, {size}),
        split_(split),
        concat_(concat),
        tiled_(tiled) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  GRAFT_TRANSFORM_RULES;
  int split() const { return split_; }
  int concat() const { return concat_; }
  bool tiled() const { return tiled_; }

 private:
  int split_, concat_;
  bool tiled_;
};

// perm: (source, destination) pairs, each source and each destination at most once.
class Ppermute : public Collective {
 public:
  Ppermute(std::string axis, int64_t size, std::vector<std::pair<int, int>> perm);
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  GRAFT_TRANSFORM_RULES;
  const std::vector<std::pair<int, int>>& perm() const { return perm_; }
  // The member whose value member `dst` receives, or -1.
  int source_of(int dst) const;

 private:
  std::vector<std::pair<int, int>> perm_;
};

class AxisIndex : public Collective {
 public:
  AxisIndex(std::string axis, int64_t size)
      : Collective(PrimitiveId::kAxisIndex, {std::move(axis)}, {size}) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  GRAFT_TRANSFORM_RULES;
};

// with_sharding_constraint(x) (core/primitives/sharding_constraint.cc): x, with its layout
// pinned to `sharding` for jit's partitioner (core/interpreters/spmd.h); the identity on values. Its
// tangent and cotangent are constrained alike; under vmap the batch dimension is not split.
// Not a collective: it names a mesh, not the axes of an enclosing map.
class ShardingConstraint : public Primitive {
 public:
  explicit ShardingConstraint(NamedSharding s)
      : Primitive(PrimitiveId::kShardingConstraint), sharding_(std::move(s)) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;
  const NamedSharding& sharding() const { return sharding_; }

 private:
  NamedSharding sharding_;
};

}  // namespace graft
