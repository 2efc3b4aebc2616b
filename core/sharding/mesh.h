// Meshes, partition specs and shardings, like jax.sharding.Mesh, PartitionSpec and
// NamedSharding. Placing arrays with them (device_put, with_sharding_constraint) is
// core/sharding/device_put.h, which includes this header.
//
//   graft::Mesh mesh({2, 2}, {"data", "model"});    // devices 0..3, row-major
//   graft::PartitionSpec spec = graft::P("data", graft::none);   // dim 0 split over data
//   graft::P(graft::AxisNames{"data", "model"})     // dim 0 split over both (data major)
//   graft::NamedSharding s(mesh, graft::P("data"));
//   graft::Array x = graft::device_put(ones({8, 4}), s);   // x.sharding() == s
//   for (const graft::Shard& sh : x.addressable_shards()) ...   // cpu:0 rows 0..3, ...
//
// A spec lists, for each leading dimension of an array, the mesh axes it is split over
// (none: not split); dimensions past its length are not split, and an axis it does not name
// is one the array is replicated over. shard_map (transforms/shard_map.h) takes specs; jit
// (transforms/jit.h) takes shardings and partitions its program over their mesh
// (core/interpreters/spmd.h).
//
// On the CPU all virtual devices share the host's memory: a sharded array keeps its global
// buffer, and a shard's data is its block of it (a copy, made when asked for). Placement is
// what jit's partitioning and shard_map read; eager ops compute on the global value and give
// arrays without a sharding (on device 0).
//
// A mesh of GPUs (Mesh(shape, names, devices("cuda"))) is the same mesh over the device
// backend's devices: device_put with a sharding over it puts each shard in its GPU's memory,
// one buffer per shard (core/backend/device_shards.h), and reading the array gathers them.
// jit over such shardings runs the partitioned program on those GPUs and leaves its outputs
// sharded there.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/array.h"
#include "core/sharding/axis.h"
#include "core/device/device.h"

namespace graft {

struct NoneAxis {};
inline constexpr NoneAxis none{};

class Mesh {
 public:
  // The first prod(shape) devices, laid out row-major over the named axes. Names must be
  // distinct and non-empty, sizes positive ("[Mesh] ..." otherwise); whether there are
  // enough devices is checked when the mesh is used.
  Mesh(std::vector<int64_t> shape, std::vector<std::string> axis_names);
  // The same over the first prod(shape) of `devices`, which must be the first devices of one
  // platform in order: Mesh({2, 2}, {"data", "model"}, devices("cuda")) is a mesh of the first
  // four GPUs ("[Mesh] ..." when there are fewer, or the list is not such a prefix).
  Mesh(std::vector<int64_t> shape, std::vector<std::string> axis_names,
       const std::vector<Device>& devices);
  // The mesh of one device and no axes (a SingleDeviceSharding's).
  static Mesh single_device(const Device& d);
  // Its devices' platform: "cpu" (the virtual devices) or the device backend's ("cuda").
  const std::string& platform() const { return platform_; }
  const std::vector<std::string>& axis_names() const { return names_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t size() const;
  int64_t axis_size(const std::string& name) const;
  // Index of `name` among the axes; "[op] ... is not an axis of the mesh" if absent.
  int axis_index_of(const char* op, const std::string& name) const;
  std::vector<Device> devices() const;  // needs its devices to exist
  // Whether its devices are 0..size()-1 in order (what shard_map and jit run on today).
  bool first_devices() const { return first_device_ == 0; }
  std::string str() const;  // "Mesh(data=2, model=2)", "Mesh(data=2 on cuda)"
  bool operator==(const Mesh& o) const {
    return shape_ == o.shape_ && names_ == o.names_ && first_device_ == o.first_device_ &&
           platform_ == o.platform_;
  }

 private:
  Mesh() = default;
  std::vector<int64_t> shape_;
  std::vector<std::string> names_;
  int first_device_ = 0;  // devices first_device_ .. first_device_ + size() - 1
  std::string platform_ = "cpu";
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
  // Equal when they split the same dimensions over the same axes (trailing nones ignored).
  bool operator==(const PartitionSpec& o) const;

 private:
  std::vector<DimSplit> dims_;
};

// P("data", none), as JAX's P.
template <typename... D>
PartitionSpec P(D... dims) {
  return PartitionSpec(std::vector<DimSplit>{DimSplit(dims)...});
}

// Per dimension (leading ones; the rest are not split), the mesh axes it is split over, as
// indices into the mesh's axes: the form primitives and the partitioner work with.
using DimAxes = std::vector<std::vector<int>>;

// A mesh as primitives hold it: axis names and sizes.
struct MeshAxes {
  std::vector<std::string> names;
  std::vector<int64_t> sizes;
  int64_t size() const;
  bool operator==(const MeshAxes& o) const { return names == o.names && sizes == o.sizes; }
};

// A block's [start, stop) along each dimension of the global array.
using ShardIndex = std::vector<std::pair<int64_t, int64_t>>;

class NamedSharding {
 public:
  NamedSharding(Mesh mesh, PartitionSpec spec);
  static NamedSharding single_device(const Device& d) {
    return NamedSharding(Mesh::single_device(d), PartitionSpec());
  }
  const Mesh& mesh() const { return mesh_; }
  const PartitionSpec& spec() const { return spec_; }
  bool is_single_device() const { return mesh_.axis_names().empty(); }
  // No dimension split: every device holds the whole array.
  bool is_fully_replicated() const;
  std::vector<Device> devices() const { return mesh_.devices(); }

  // Checks that the spec fits an array of `shape` (rank, and each split dimension divisible
  // by its blocks): "[op] the sharding P('data') ... does not split dimension 0 of size 5 ...".
  void check(const char* op, const Shape& shape) const;
  Shape shard_shape(const Shape& shape) const;  // one device's block
  // The block of the device at position `k` of the mesh (row-major), for an array of `shape`.
  ShardIndex shard_index(const Shape& shape, int64_t k) const;

  // "NamedSharding(Mesh(data=2), P('data'))", "SingleDevice(cpu:0)"; made once (jit hashes
  // it for every sharded leaf of every call).
  const std::string& str() const { return text_; }
  bool operator==(const NamedSharding& o) const { return mesh_ == o.mesh_ && spec_ == o.spec_; }
  bool operator!=(const NamedSharding& o) const { return !(*this == o); }

 private:
  Mesh mesh_;
  PartitionSpec spec_;
  std::string text_;
};

// One device's part of an array (jax.Shard).
struct Shard {
  Device device;
  ShardIndex index;
  Array data;  // the block, evaluated (over a mesh of GPUs: the shard's buffer on its GPU)
};

namespace detail {
// The primitive's form of a spec: mesh axis indices per dimension.
DimAxes dim_axes(const char* op, const Mesh& mesh, const PartitionSpec& spec);
MeshAxes mesh_axes(const Mesh& mesh);
// Back from the primitive's form.
PartitionSpec partition_spec(const MeshAxes& mesh, const DimAxes& dims);
// "P('data', None)" of the primitive's form.
std::string spec_str(const MeshAxes& mesh, const DimAxes& dims);
// How many blocks a dimension split over `axes` is cut into.
int64_t split_count(const MeshAxes& mesh, const std::vector<int>& axes);
}  // namespace detail

}  // namespace graft
