// Meshes and partition specs, like jax.sharding.Mesh and PartitionSpec.
//
//   graft::Mesh mesh({2, 2}, {"data", "model"});    // devices 0..3, row-major
//   graft::PartitionSpec spec = graft::P("data", graft::none);   // dim 0 split over data
//   graft::P(graft::AxisNames{"data", "model"})     // dim 0 split over both (data major)
//
// A spec lists, for each leading dimension of an array, the mesh axes it is split over
// (none: not split); dimensions past its length are not split, and an axis it does not name
// is one the array is replicated over. shard_map (transforms/shard_map.h) takes them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/device.h"
#include "core/ops.h"
#include "transforms/vmap.h"

namespace graft {

class Mesh {
 public:
  // The first prod(shape) devices, laid out row-major over the named axes. Names must be
  // distinct and non-empty, sizes positive ("[Mesh] ..." otherwise); whether there are
  // enough devices is checked when the mesh is used.
  Mesh(std::vector<int64_t> shape, std::vector<std::string> axis_names);
  const std::vector<std::string>& axis_names() const { return names_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t size() const;
  int64_t axis_size(const std::string& name) const;
  // Index of `name` among the axes; "[op] ... is not an axis of the mesh" if absent.
  int axis_index_of(const char* op, const std::string& name) const;
  std::vector<Device> devices() const;  // needs size() <= device_count()
  std::string str() const;              // "Mesh(data=2, model=2)"

 private:
  std::vector<int64_t> shape_;
  std::vector<std::string> names_;
};

// One dimension's entry of a PartitionSpec: the axes it is split over (empty: none).
struct DimSplit {
  DimSplit(NoneAxis) {}                                  // NOLINT(runtime/explicit)
  DimSplit(const char* axis) : axes{axis} {}             // NOLINT(runtime/explicit)
  DimSplit(std::string axis) : axes{std::move(axis)} {}  // NOLINT(runtime/explicit)
  DimSplit(AxisNames names) : axes(std::move(names)) {}  // NOLINT(runtime/explicit)
  AxisNames axes;
};

class PartitionSpec {
 public:
  PartitionSpec() = default;  // replicated: no dimension split
  explicit PartitionSpec(std::vector<DimSplit> dims) : dims_(std::move(dims)) {}
  const std::vector<DimSplit>& dims() const { return dims_; }
  std::string str() const;  // "P('data', None)"

 private:
  std::vector<DimSplit> dims_;
};

// P("data", none), as JAX's P.
template <typename... D>
PartitionSpec P(D... dims) {
  return PartitionSpec(std::vector<DimSplit>{DimSplit(dims)...});
}

}  // namespace graft
