#include "transforms/sharding.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/error.h"
#include "transforms/shard_map.h"

namespace graft {

Mesh::Mesh(std::vector<int64_t> shape, std::vector<std::string> axis_names)
    : shape_(std::move(shape)), names_(std::move(axis_names)) {
  if (shape_.size() != names_.size()) {
    fail("Mesh", "has ", shape_.size(), " sizes for ", names_.size(), " axis names");
  }
  if (shape_.empty()) fail("Mesh", "needs at least one axis");
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i].empty()) fail("Mesh", "axis ", i, " has an empty name");
    if (shape_[i] < 1) fail("Mesh", "axis '", names_[i], "' has size ", shape_[i]);
    for (size_t j = 0; j < i; ++j) {
      if (names_[j] == names_[i]) fail("Mesh", "axis name '", names_[i], "' is given twice");
    }
  }
}

int64_t Mesh::size() const {
  int64_t n = 1;
  for (int64_t s : shape_) n *= s;
  return n;
}

int Mesh::axis_index_of(const char* op, const std::string& name) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return static_cast<int>(i);
  }
  fail(op, "'", name, "' is not an axis of the mesh ", str());
}

int64_t Mesh::axis_size(const std::string& name) const {
  return shape_[axis_index_of("Mesh", name)];
}

std::vector<Device> Mesh::devices() const {
  if (size() > device_count()) {
    fail("Mesh", str(), " needs ", size(), " devices, there are ", device_count(),
         " (set GRAFT_CPU_DEVICES)");
  }
  return std::vector<Device>(graft::devices().begin(), graft::devices().begin() + size());
}

std::string Mesh::str() const {
  std::vector<std::string> parts;
  for (size_t i = 0; i < names_.size(); ++i)
    parts.push_back(absl::StrCat(names_[i], "=", shape_[i]));
  return absl::StrCat("Mesh(", absl::StrJoin(parts, ", "), ")");
}

std::string PartitionSpec::str() const {
  std::vector<std::string> parts;
  for (const DimSplit& d : dims_) {
    if (d.axes.empty()) {
      parts.push_back("None");
    } else if (d.axes.size() == 1) {
      parts.push_back("'" + d.axes[0] + "'");
    } else {
      parts.push_back("('" + absl::StrJoin(d.axes, "', '") + "')");
    }
  }
  return absl::StrCat("P(", absl::StrJoin(parts, ", "), ")");
}

namespace detail {

DimAxes dim_axes(const char* op, const Mesh& mesh, const PartitionSpec& spec) {
  DimAxes d;
  for (const DimSplit& split : spec.dims()) {
    d.emplace_back();
    for (const std::string& a : split.axes) d.back().push_back(mesh.axis_index_of(op, a));
  }
  return d;
}

MeshAxes mesh_axes(const Mesh& mesh) { return MeshAxes{mesh.axis_names(), mesh.shape()}; }

}  // namespace detail
}  // namespace graft
